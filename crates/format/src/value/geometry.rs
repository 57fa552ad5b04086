//! Spatial values as MySQL stores them in a GEOMETRY column and logs them
//! in a row event: the SRID as u32 LE, then the shape as WKB
//! (OGC well-known binary), always little-endian.
//!
//! | bytes | field |
//! |-------|-------|
//! | 4 | SRID, u32 LE |
//! | 1 | WKB byte order (1 = little-endian) |
//! | 4 | WKB type, u32 (1 POINT ... 7 GEOMETRYCOLLECTION) |
//! | rest | the shape: a point is x, y as f64; a line string a u32 count and its points; a polygon a u32 ring count and its rings; a MULTI* or a collection a u32 count and whole WKB members (byte order and type each) |
//!
//! [`Shape`] is the parsed form, read from and written to WKT (the text
//! MySQL's ST_GeomFromText reads and ST_AsText prints) and WKB. Both
//! parsers check what MySQL checks: a line string has two points or more,
//! a polygon ring four or more and ends where it starts, a MULTI* has at
//! least one member, coordinates are finite numbers; and they allocate
//! nothing a count claims before the bytes for it are there.

use std::fmt::Write as _;

/// Bytes of the SRID before the WKB.
pub const SRID_BYTES: usize = 4;
/// Collections nested deeper than this are refused (each level is a
/// recursion of the parsers).
pub const NESTING_DEPTH_MAX: usize = 64;

/// A geometry column's declared type; its code is the Table_map's
/// GEOMETRY_TYPE metadata (`Field::geometry_type`), and codes 1..=7 are
/// also the WKB types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Geometry,
    Point,
    LineString,
    Polygon,
    MultiPoint,
    MultiLineString,
    MultiPolygon,
    GeometryCollection,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::Geometry,
        Kind::Point,
        Kind::LineString,
        Kind::Polygon,
        Kind::MultiPoint,
        Kind::MultiLineString,
        Kind::MultiPolygon,
        Kind::GeometryCollection,
    ];

    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u8) -> Option<Kind> {
        Kind::ALL.get(usize::from(code)).copied()
    }

    /// The type as SHOW CREATE TABLE and INFORMATION_SCHEMA print it
    /// (MySQL 8.0 prints GEOMETRYCOLLECTION as `geomcollection`).
    pub fn sql_name(self) -> &'static str {
        match self {
            Kind::Geometry => "geometry",
            Kind::Point => "point",
            Kind::LineString => "linestring",
            Kind::Polygon => "polygon",
            Kind::MultiPoint => "multipoint",
            Kind::MultiLineString => "multilinestring",
            Kind::MultiPolygon => "multipolygon",
            Kind::GeometryCollection => "geomcollection",
        }
    }

    /// The column type named `name` in DDL (any case; both spellings of
    /// the collection).
    pub fn from_sql_name(name: &str) -> Option<Kind> {
        let name = name.to_ascii_lowercase();
        if name == "geometrycollection" {
            return Some(Kind::GeometryCollection);
        }
        Kind::ALL.into_iter().find(|kind| kind.sql_name() == name)
    }

    fn wkt_name(self) -> &'static str {
        match self {
            Kind::Geometry => "GEOMETRY",
            Kind::Point => "POINT",
            Kind::LineString => "LINESTRING",
            Kind::Polygon => "POLYGON",
            Kind::MultiPoint => "MULTIPOINT",
            Kind::MultiLineString => "MULTILINESTRING",
            Kind::MultiPolygon => "MULTIPOLYGON",
            Kind::GeometryCollection => "GEOMETRYCOLLECTION",
        }
    }

    /// A column of this kind takes `shape` (GEOMETRY takes any).
    pub fn holds(self, shape: &Shape) -> bool {
        self == Kind::Geometry || self == shape.kind()
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Point(Point),
    LineString(Vec<Point>),
    /// Rings: the exterior first, then the holes.
    Polygon(Vec<Vec<Point>>),
    MultiPoint(Vec<Point>),
    MultiLineString(Vec<Vec<Point>>),
    MultiPolygon(Vec<Vec<Vec<Point>>>),
    GeometryCollection(Vec<Shape>),
}

/// Why bytes or text are not a geometry (the SQL layer turns it into
/// MySQL's 3037 or 1416).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidGeometry(pub String);

impl std::fmt::Display for InvalidGeometry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidGeometry {}

type Result<T> = std::result::Result<T, InvalidGeometry>;

fn invalid<T>(reason: impl Into<String>) -> Result<T> {
    Err(InvalidGeometry(reason.into()))
}

/// A stored geometry value: SRID and shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    pub srid: u32,
    pub shape: Shape,
}

impl Stored {
    /// Reads a column value (SRID + WKB), all of it.
    pub fn parse(bytes: &[u8]) -> Result<Stored> {
        let Some((srid, wkb)) = bytes.split_first_chunk::<SRID_BYTES>() else {
            return invalid(format!("{} bytes, shorter than an SRID", bytes.len()));
        };
        Ok(Stored { srid: u32::from_le_bytes(*srid), shape: Shape::parse_wkb(wkb)? })
    }

    /// The column value: SRID, then little-endian WKB.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.srid.to_le_bytes().to_vec();
        self.shape.write_wkb(&mut out);
        out
    }
}

impl Shape {
    pub fn kind(&self) -> Kind {
        match self {
            Shape::Point(_) => Kind::Point,
            Shape::LineString(_) => Kind::LineString,
            Shape::Polygon(_) => Kind::Polygon,
            Shape::MultiPoint(_) => Kind::MultiPoint,
            Shape::MultiLineString(_) => Kind::MultiLineString,
            Shape::MultiPolygon(_) => Kind::MultiPolygon,
            Shape::GeometryCollection(_) => Kind::GeometryCollection,
        }
    }

    /// Every point of the shape, in order.
    pub fn points_mut(&mut self) -> Vec<&mut Point> {
        match self {
            Shape::Point(point) => vec![point],
            Shape::LineString(points) | Shape::MultiPoint(points) => points.iter_mut().collect(),
            Shape::Polygon(lines) | Shape::MultiLineString(lines) => lines.iter_mut().flatten().collect(),
            Shape::MultiPolygon(polygons) => polygons.iter_mut().flatten().flatten().collect(),
            Shape::GeometryCollection(members) => members.iter_mut().flat_map(Shape::points_mut).collect(),
        }
    }

    /// x and y exchanged in every point (a geographic SRS reads and
    /// prints latitude first, and MySQL stores longitude first).
    pub fn swap_axes(&mut self) {
        for point in self.points_mut() {
            std::mem::swap(&mut point.x, &mut point.y);
        }
    }

    // ---- WKB ----

    pub fn write_wkb(&self, out: &mut Vec<u8>) {
        out.push(1);
        out.extend_from_slice(&u32::from(self.kind().code()).to_le_bytes());
        let count = |out: &mut Vec<u8>, n: usize| out.extend_from_slice(&(n as u32).to_le_bytes());
        let points = |out: &mut Vec<u8>, points: &[Point]| {
            count(out, points.len());
            points.iter().for_each(|p| write_point(out, p));
        };
        match self {
            Shape::Point(point) => write_point(out, point),
            Shape::LineString(line) => points(out, line),
            Shape::Polygon(rings) => {
                count(out, rings.len());
                rings.iter().for_each(|ring| points(out, ring));
            }
            Shape::MultiPoint(members) => {
                count(out, members.len());
                members.iter().for_each(|p| Shape::Point(*p).write_wkb(out));
            }
            Shape::MultiLineString(members) => {
                count(out, members.len());
                members.iter().for_each(|line| Shape::LineString(line.clone()).write_wkb(out));
            }
            Shape::MultiPolygon(members) => {
                count(out, members.len());
                members.iter().for_each(|rings| Shape::Polygon(rings.clone()).write_wkb(out));
            }
            Shape::GeometryCollection(members) => {
                count(out, members.len());
                members.iter().for_each(|member| member.write_wkb(out));
            }
        }
    }

    /// Reads WKB of either byte order, all of `bytes`.
    pub fn parse_wkb(bytes: &[u8]) -> Result<Shape> {
        let mut reader = WkbReader { bytes, at: 0, little: true };
        let shape = reader.shape(None, 0)?;
        if reader.at != bytes.len() {
            return invalid(format!("{} bytes after the geometry", bytes.len() - reader.at));
        }
        Ok(shape)
    }

    // ---- WKT ----

    /// Reads WKT as MySQL does: keywords in any case, MULTIPOINT's points
    /// with or without parentheses, `GEOMETRYCOLLECTION EMPTY` or `()`.
    pub fn parse_wkt(text: &str) -> Result<Shape> {
        let mut parser = WktParser { tokens: tokenize(text)?, at: 0 };
        let shape = parser.shape(0)?;
        if parser.at != parser.tokens.len() {
            return invalid("text after the geometry");
        }
        Ok(shape)
    }

    /// The WKT MySQL's ST_AsText prints: no spaces but between x and y.
    pub fn to_wkt(&self) -> String {
        let mut out = String::new();
        self.write_wkt(&mut out, true);
        out
    }

    fn write_wkt(&self, out: &mut String, named: bool) {
        if named {
            out.push_str(self.kind().wkt_name());
        }
        let point = |out: &mut String, p: &Point| {
            let _ = write!(out, "{} {}", number_text(p.x), number_text(p.y));
        };
        let line = |out: &mut String, points: &[Point]| {
            out.push('(');
            for (i, p) in points.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                point(out, p);
            }
            out.push(')');
        };
        let rings = |out: &mut String, rings: &[Vec<Point>]| {
            out.push('(');
            for (i, ring) in rings.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                line(out, ring);
            }
            out.push(')');
        };
        match self {
            Shape::Point(p) => {
                out.push('(');
                point(out, p);
                out.push(')');
            }
            Shape::LineString(points) => line(out, points),
            Shape::Polygon(polygon) => rings(out, polygon),
            Shape::MultiPoint(points) => {
                out.push('(');
                for (i, p) in points.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push('(');
                    point(out, p);
                    out.push(')');
                }
                out.push(')');
            }
            Shape::MultiLineString(lines) => rings(out, lines),
            Shape::MultiPolygon(polygons) => {
                out.push('(');
                for (i, polygon) in polygons.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    rings(out, polygon);
                }
                out.push(')');
            }
            Shape::GeometryCollection(members) if members.is_empty() => out.push_str(" EMPTY"),
            Shape::GeometryCollection(members) => {
                out.push('(');
                for (i, member) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    member.write_wkt(out, true);
                }
                out.push(')');
            }
        }
    }
}

/// A coordinate as MySQL prints it: the shortest text that reads back
/// as the same double, in exponent form when very large or small.
pub fn number_text(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-5..1e17).contains(&magnitude) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

fn write_point(out: &mut Vec<u8>, point: &Point) {
    out.extend_from_slice(&point.x.to_le_bytes());
    out.extend_from_slice(&point.y.to_le_bytes());
}

fn check_line(points: &[Point]) -> Result<()> {
    if points.len() < 2 {
        return invalid("a line string of fewer than 2 points");
    }
    Ok(())
}

fn check_ring(points: &[Point]) -> Result<()> {
    if points.len() < 4 {
        return invalid("a polygon ring of fewer than 4 points");
    }
    if points.first() != points.last() {
        return invalid("a polygon ring that does not end where it starts");
    }
    Ok(())
}

fn check_finite(point: Point) -> Result<Point> {
    if point.x.is_finite() && point.y.is_finite() {
        Ok(point)
    } else {
        invalid("a coordinate that is not a finite number")
    }
}

/// Smallest WKB of each member kind, to bound a count by the bytes left.
fn wkb_size_min(kind: Option<Kind>) -> usize {
    match kind {
        Some(Kind::Point) => 21,
        _ => 9,
    }
}

struct WkbReader<'a> {
    bytes: &'a [u8],
    at: usize,
    little: bool,
}

impl WkbReader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let Some(chunk) = self.bytes.get(self.at..self.at + N) else { return invalid("the WKB ends early") };
        self.at += N;
        Ok(chunk.try_into().expect("N bytes"))
    }

    fn u32(&mut self) -> Result<u32> {
        let bytes = self.take::<4>()?;
        Ok(if self.little { u32::from_le_bytes(bytes) } else { u32::from_be_bytes(bytes) })
    }

    fn f64(&mut self) -> Result<f64> {
        let bytes = self.take::<8>()?;
        Ok(if self.little { f64::from_le_bytes(bytes) } else { f64::from_be_bytes(bytes) })
    }

    /// A count of items of at least `size_min` bytes each, checked
    /// against the bytes left before anything is allocated for it.
    fn count(&mut self, size_min: usize) -> Result<usize> {
        let count = self.u32()? as usize;
        if count.saturating_mul(size_min) > self.bytes.len() - self.at {
            return invalid(format!("a count of {count} with {} bytes left", self.bytes.len() - self.at));
        }
        Ok(count)
    }

    fn point(&mut self) -> Result<Point> {
        check_finite(Point { x: self.f64()?, y: self.f64()? })
    }

    fn points(&mut self) -> Result<Vec<Point>> {
        let count = self.count(16)?;
        (0..count).map(|_| self.point()).collect()
    }

    fn rings(&mut self) -> Result<Vec<Vec<Point>>> {
        let count = self.count(4)?;
        if count == 0 {
            return invalid("a polygon without rings");
        }
        (0..count)
            .map(|_| {
                let ring = self.points()?;
                check_ring(&ring)?;
                Ok(ring)
            })
            .collect()
    }

    /// One whole WKB geometry (byte order, type, body); `expected` is the
    /// kind a MULTI* member must be.
    fn shape(&mut self, expected: Option<Kind>, depth: usize) -> Result<Shape> {
        if depth > NESTING_DEPTH_MAX {
            return invalid(format!("collections nested deeper than {NESTING_DEPTH_MAX}"));
        }
        self.little = match self.take::<1>()? {
            [0] => false,
            [1] => true,
            [other] => return invalid(format!("WKB byte order {other}")),
        };
        let code = self.u32()?;
        let kind = u8::try_from(code).ok().and_then(Kind::from_code).filter(|kind| *kind != Kind::Geometry);
        let Some(kind) = kind else { return invalid(format!("WKB type {code}")) };
        if expected.is_some_and(|expected| expected != kind) {
            return invalid(format!("a {} inside a {}", kind.wkt_name(), expected.map_or("", Kind::wkt_name)));
        }
        let members = |reader: &mut WkbReader<'_>, member: Kind| -> Result<Vec<Shape>> {
            let count = reader.count(wkb_size_min(Some(member)))?;
            if count == 0 {
                return invalid(format!("an empty {}", kind.wkt_name()));
            }
            (0..count).map(|_| reader.shape(Some(member), depth + 1)).collect()
        };
        Ok(match kind {
            Kind::Point => Shape::Point(self.point()?),
            Kind::LineString => {
                let line = self.points()?;
                check_line(&line)?;
                Shape::LineString(line)
            }
            Kind::Polygon => Shape::Polygon(self.rings()?),
            Kind::MultiPoint => Shape::MultiPoint(
                members(self, Kind::Point)?.into_iter().filter_map(|s| if let Shape::Point(p) = s { Some(p) } else { None }).collect(),
            ),
            Kind::MultiLineString => Shape::MultiLineString(
                members(self, Kind::LineString)?
                    .into_iter()
                    .filter_map(|s| if let Shape::LineString(l) = s { Some(l) } else { None })
                    .collect(),
            ),
            Kind::MultiPolygon => Shape::MultiPolygon(
                members(self, Kind::Polygon)?.into_iter().filter_map(|s| if let Shape::Polygon(p) = s { Some(p) } else { None }).collect(),
            ),
            Kind::GeometryCollection => {
                let count = self.count(wkb_size_min(None))?;
                let members = (0..count).map(|_| self.shape(None, depth + 1)).collect::<Result<Vec<_>>>()?;
                Shape::GeometryCollection(members)
            }
            Kind::Geometry => unreachable!("filtered above"),
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Number(f64),
    Open,
    Close,
    Comma,
}

fn tokenize(text: &str) -> Result<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' | ')' | ',' => {
                chars.next();
                tokens.push(match c {
                    '(' => Token::Open,
                    ')' => Token::Close,
                    _ => Token::Comma,
                });
            }
            c if c.is_ascii_alphabetic() => {
                let mut end = start;
                while let Some(&(at, c)) = chars.peek() {
                    if !c.is_ascii_alphabetic() {
                        break;
                    }
                    end = at + c.len_utf8();
                    chars.next();
                }
                tokens.push(Token::Word(text[start..end].to_ascii_uppercase()));
            }
            c if c.is_ascii_digit() || matches!(c, '+' | '-' | '.') => {
                let mut end = start;
                let mut previous = ' ';
                while let Some(&(at, c)) = chars.peek() {
                    let exponent_sign = matches!(c, '+' | '-') && matches!(previous, 'e' | 'E');
                    let first_sign = matches!(c, '+' | '-') && at == start;
                    if !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E') || exponent_sign || first_sign) {
                        break;
                    }
                    previous = c;
                    end = at + c.len_utf8();
                    chars.next();
                }
                let number: f64 =
                    text[start..end].parse().map_err(|_| InvalidGeometry(format!("{:?} is not a number", &text[start..end])))?;
                tokens.push(Token::Number(number));
            }
            other => return invalid(format!("{other:?} in WKT")),
        }
    }
    Ok(tokens)
}

struct WktParser {
    tokens: Vec<Token>,
    at: usize,
}

impl WktParser {
    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn expect(&mut self, token: Token) -> Result<()> {
        match self.next() {
            Some(found) if found == token => Ok(()),
            found => invalid(format!("{found:?} where {token:?} was expected")),
        }
    }

    fn number(&mut self) -> Result<f64> {
        match self.next() {
            Some(Token::Number(value)) => Ok(value),
            found => invalid(format!("{found:?} where a number was expected")),
        }
    }

    fn point(&mut self) -> Result<Point> {
        check_finite(Point { x: self.number()?, y: self.number()? })
    }

    /// `(` items separated by commas `)`, at least one.
    fn list<T>(&mut self, mut item: impl FnMut(&mut WktParser) -> Result<T>) -> Result<Vec<T>> {
        self.expect(Token::Open)?;
        let mut items = vec![item(self)?];
        loop {
            match self.next() {
                Some(Token::Comma) => items.push(item(self)?),
                Some(Token::Close) => return Ok(items),
                found => return invalid(format!("{found:?} in a list")),
            }
        }
    }

    fn line(&mut self) -> Result<Vec<Point>> {
        let line = self.list(WktParser::point)?;
        check_line(&line)?;
        Ok(line)
    }

    fn polygon(&mut self) -> Result<Vec<Vec<Point>>> {
        self.list(|parser| {
            let ring = parser.list(WktParser::point)?;
            check_ring(&ring)?;
            Ok(ring)
        })
    }

    fn shape(&mut self, depth: usize) -> Result<Shape> {
        if depth > NESTING_DEPTH_MAX {
            return invalid(format!("collections nested deeper than {NESTING_DEPTH_MAX}"));
        }
        let Some(Token::Word(word)) = self.next() else { return invalid("no geometry type") };
        Ok(match word.as_str() {
            "POINT" => {
                self.expect(Token::Open)?;
                let point = self.point()?;
                self.expect(Token::Close)?;
                Shape::Point(point)
            }
            "LINESTRING" => Shape::LineString(self.line()?),
            "POLYGON" => Shape::Polygon(self.polygon()?),
            "MULTIPOINT" => Shape::MultiPoint(self.list(|parser| {
                if parser.peek() == Some(&Token::Open) {
                    parser.next();
                    let point = parser.point()?;
                    parser.expect(Token::Close)?;
                    Ok(point)
                } else {
                    parser.point()
                }
            })?),
            "MULTILINESTRING" => Shape::MultiLineString(self.list(WktParser::line)?),
            "MULTIPOLYGON" => Shape::MultiPolygon(self.list(WktParser::polygon)?),
            "GEOMETRYCOLLECTION" | "GEOMCOLLECTION" => match self.peek() {
                Some(Token::Word(empty)) if empty == "EMPTY" => {
                    self.next();
                    Shape::GeometryCollection(Vec::new())
                }
                _ if self.tokens.get(self.at + 1) == Some(&Token::Close) => {
                    self.expect(Token::Open)?;
                    self.expect(Token::Close)?;
                    Shape::GeometryCollection(Vec::new())
                }
                _ => Shape::GeometryCollection(self.list(|parser| parser.shape(depth + 1))?),
            },
            other => return invalid(format!("{other} is not a geometry type")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        let shape = Shape::parse_wkt(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let mut wkb = Vec::new();
        shape.write_wkb(&mut wkb);
        assert_eq!(Shape::parse_wkb(&wkb).unwrap(), shape, "{text} through WKB");
        shape.to_wkt()
    }

    #[test]
    fn wkt_of_every_kind_reads_and_prints_as_mysql_prints_it() {
        let cases = [
            ("POINT(1 2)", "POINT(1 2)"),
            (" point ( -1.5  2e3 ) ", "POINT(-1.5 2000)"),
            ("LINESTRING(0 0, 1 1, 2 0.25)", "LINESTRING(0 0,1 1,2 0.25)"),
            ("POLYGON((0 0,10 0,10 10,0 10,0 0),(2 2,3 2,3 3,2 2))", "POLYGON((0 0,10 0,10 10,0 10,0 0),(2 2,3 2,3 3,2 2))"),
            ("MULTIPOINT(1 1, 2 2)", "MULTIPOINT((1 1),(2 2))"),
            ("MULTIPOINT((1 1),(2 2))", "MULTIPOINT((1 1),(2 2))"),
            ("MULTILINESTRING((0 0,1 1),(2 2,3 3))", "MULTILINESTRING((0 0,1 1),(2 2,3 3))"),
            ("MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))", "MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))"),
            (
                "GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1),GEOMETRYCOLLECTION(POINT(2 2)))",
                "GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1),GEOMETRYCOLLECTION(POINT(2 2)))",
            ),
            ("GEOMETRYCOLLECTION EMPTY", "GEOMETRYCOLLECTION EMPTY"),
            ("GEOMCOLLECTION()", "GEOMETRYCOLLECTION EMPTY"),
            ("POINT(1e300 -0.000001)", "POINT(1e300 -1e-6)"),
        ];
        for (text, printed) in cases {
            assert_eq!(round_trip(text), printed, "{text}");
        }
    }

    #[test]
    fn malformed_wkt_and_shapes_mysql_refuses_are_invalid() {
        for text in [
            "",
            "POINT()",
            "POINT(1)",
            "POINT(1 2 3)",
            "POINT(1 2",
            "POINT(1 2) x",
            "LINESTRING(0 0)",
            "POLYGON((0 0,1 0,1 1))",
            "POLYGON((0 0,1 0,1 1,2 2))",
            "MULTIPOINT()",
            "CIRCLE(1 2)",
            "POINT(a b)",
            "POINT(1 2),",
        ] {
            assert!(Shape::parse_wkt(text).is_err(), "{text:?} is refused");
        }
        let deep = format!("{}POINT(1 1){}", "GEOMETRYCOLLECTION(".repeat(NESTING_DEPTH_MAX + 2), ")".repeat(NESTING_DEPTH_MAX + 2));
        assert!(Shape::parse_wkt(&deep).is_err());
    }

    #[test]
    fn a_stored_value_is_the_srid_then_little_endian_wkb() {
        let stored = Stored { srid: 4326, shape: Shape::Point(Point { x: 1.0, y: -2.0 }) };
        let bytes = stored.encode();
        let mut expected = vec![0xE6, 0x10, 0, 0, 1, 1, 0, 0, 0];
        expected.extend_from_slice(&1.0f64.to_le_bytes());
        expected.extend_from_slice(&(-2.0f64).to_le_bytes());
        assert_eq!(bytes, expected);
        assert_eq!(Stored::parse(&bytes).unwrap(), stored);
        // Big-endian WKB reads too.
        let mut big = vec![0, 0, 0, 0, 0, 0, 0, 0, 1];
        big.extend_from_slice(&3.0f64.to_be_bytes());
        big.extend_from_slice(&4.0f64.to_be_bytes());
        assert_eq!(Stored::parse(&big).unwrap().shape, Shape::Point(Point { x: 3.0, y: 4.0 }));
        for bad in [&bytes[..3], &bytes[..20], &[&bytes[..], &[0][..]].concat()[..]] {
            assert!(Stored::parse(bad).is_err(), "{bad:?}");
        }
        // A count past the bytes left is refused before allocating.
        let mut huge = vec![0, 0, 0, 0, 1, 2, 0, 0, 0];
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(Stored::parse(&huge).is_err());
        // A MULTIPOINT member must be a point.
        let mut mixed = vec![1, 4, 0, 0, 0, 1, 0, 0, 0];
        Shape::LineString(vec![Point { x: 0.0, y: 0.0 }, Point { x: 1.0, y: 1.0 }]).write_wkb(&mut mixed);
        assert!(Shape::parse_wkb(&mixed).is_err());
    }

    #[test]
    fn kinds_are_the_table_map_geometry_type_codes() {
        assert_eq!(Kind::ALL.map(Kind::code), [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(Kind::from_sql_name("GeometryCollection"), Some(Kind::GeometryCollection));
        assert_eq!(Kind::from_sql_name("POINT"), Some(Kind::Point));
        assert_eq!(Kind::from_sql_name("circle"), None);
        assert!(Kind::Geometry.holds(&Shape::Point(Point { x: 0.0, y: 0.0 })));
        assert!(!Kind::LineString.holds(&Shape::Point(Point { x: 0.0, y: 0.0 })));
    }
}
