//! Spatial values: the spatial reference systems binlogd knows, a value
//! made fit for a GEOMETRY, POINT, ... column, and the functions that make
//! and read geometries, with MySQL's results and errors: ST_GeomFromText
//! (ST_GeometryFromText), ST_GeomFromWKB (ST_GeometryFromWKB), POINT,
//! ST_AsText (ST_AsWKT), ST_AsBinary (ST_AsWKB), ST_X, ST_Y, ST_SRID.
//!
//! A geometry is a `Value::Bytes` holding what the column stores (SRID
//! u32 LE + little-endian WKB, see `binlog_format::value::geometry`), as
//! MySQL's geometry values are binary strings.
//!
//! Spatial reference systems: 0 (the Cartesian plane), 3857 (WGS 84 /
//! Pseudo-Mercator, projected: x east, y north) and 4326 (WGS 84,
//! geographic: latitude first). Any other SRID is 3548, as MySQL's for an
//! SRID its data dictionary lacks. A geographic geometry is stored
//! longitude first, as MySQL stores it, and read and printed latitude
//! first; its coordinates are checked against the ranges of both axes.

use binlog_format::value::geometry::{InvalidGeometry, Kind, Point, Shape, Stored};
use engine::ColumnDef;
use protocol::MysqlError;

use crate::error::SqlResult;
use crate::eval::value::{to_number, Number, Value};

/// The SRIDs binlogd knows, and whether each is geographic.
const SPATIAL_REFERENCE_SYSTEMS: [(u32, bool); 3] = [(0, false), (3857, false), (4326, true)];

/// Functions whose result is a geometry (MYSQL_TYPE_GEOMETRY columns).
pub const RETURNING_GEOMETRY: [&str; 5] = ["ST_GEOMFROMTEXT", "ST_GEOMETRYFROMTEXT", "ST_GEOMFROMWKB", "ST_GEOMETRYFROMWKB", "POINT"];
/// Functions whose result is a DOUBLE.
pub const RETURNING_DOUBLE: [&str; 2] = ["ST_X", "ST_Y"];

/// Whether `srid` is geographic; 3548 when binlogd does not know it.
pub fn spatial_reference_system(srid: u32) -> SqlResult<bool> {
    SPATIAL_REFERENCE_SYSTEMS
        .iter()
        .find(|(known, _)| *known == srid)
        .map(|(_, geographic)| *geographic)
        .ok_or_else(|| MysqlError::new(3548, "SR001", format!("There's no spatial reference system with SRID {srid}.")))
}

/// 3037 ER_GIS_INVALID_DATA for `function` (lower case, as MySQL names it).
fn invalid_data(function: &str) -> MysqlError {
    MysqlError::new(3037, "22023", format!("Invalid GIS data provided to function {function}."))
}

/// 1416 ER_CANT_CREATE_GEOMETRY_OBJECT: what a geometry column says of a
/// value that is not a geometry of its kind.
fn not_a_geometry() -> MysqlError {
    MysqlError::new(1416, "22003", "Cannot get geometry object from data you send to the GEOMETRY field")
}

/// Latitude and longitude inside their ranges (3617, 3616 as MySQL's).
fn check_geographic(shape: &mut Shape, function: &str) -> SqlResult<()> {
    for point in shape.points_mut() {
        // Stored longitude first: x is the longitude, y the latitude.
        if !(-90.0..=90.0).contains(&point.y) {
            return Err(MysqlError::new(
                3617,
                "22S03",
                format!("Latitude {:.6} is out of range in function {function}. It must be within [-90.000000, 90.000000].", point.y),
            ));
        }
        if !(point.x > -180.0 && point.x <= 180.0) {
            return Err(MysqlError::new(
                3616,
                "22S02",
                format!("Longitude {:.6} is out of range in function {function}. It must be within (-180.000000, 180.000000].", point.x),
            ));
        }
    }
    Ok(())
}

/// A shape given in `srid`'s axis order, as stored: a geographic one is
/// swapped to longitude first and checked.
fn stored_from_input(mut shape: Shape, srid: u32, function: &str) -> SqlResult<Value> {
    if spatial_reference_system(srid)? {
        shape.swap_axes();
        check_geographic(&mut shape, function)?;
    }
    Ok(Value::Bytes(Stored { srid, shape }.encode()))
}

/// The stored geometry in a function argument; 3037 when it is none.
fn geometry_argument(value: &Value, function: &str) -> SqlResult<Stored> {
    match value {
        Value::Bytes(bytes) => Stored::parse(bytes).map_err(|_| invalid_data(function)),
        _ => Err(invalid_data(function)),
    }
}

/// The shape in `srid`'s axis order (latitude first when geographic).
fn shape_for_output(stored: Stored) -> SqlResult<Shape> {
    let mut shape = stored.shape;
    if spatial_reference_system(stored.srid)? {
        shape.swap_axes();
    }
    Ok(shape)
}

fn srid_argument(value: &Value) -> SqlResult<u32> {
    match to_number(value) {
        Some(Number::Int(srid)) if (0..=i128::from(u32::MAX)).contains(&srid) => Ok(srid as u32),
        Some(Number::Float(srid)) if srid.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&srid) => Ok(srid as u32),
        _ => Err(MysqlError::new(1210, "HY000", "Incorrect arguments to SRID")),
    }
}

fn coordinate(value: &Value) -> Option<f64> {
    to_number(value).map(Number::as_f64)
}

/// Calls spatial function `name` (upper case) on evaluated `values`;
/// `None` when `name` is not one.
pub fn call(name: &str, values: &[Value]) -> Option<SqlResult<Value>> {
    let function = name.to_ascii_lowercase();
    let function = function.as_str();
    let arity = match name {
        "ST_GEOMFROMTEXT" | "ST_GEOMETRYFROMTEXT" | "ST_GEOMFROMWKB" | "ST_GEOMETRYFROMWKB" | "ST_SRID" => 1..=2,
        "POINT" => 2..=2,
        "ST_ASTEXT" | "ST_ASWKT" | "ST_ASBINARY" | "ST_ASWKB" | "ST_X" | "ST_Y" => 1..=1,
        _ => return None,
    };
    if !arity.contains(&values.len()) {
        return Some(Err(crate::error::wrong_argument_count(function)));
    }
    // Every spatial function is NULL for a NULL argument.
    if values.iter().any(|value| matches!(value, Value::Null)) {
        return Some(Ok(Value::Null));
    }
    Some(evaluate(name, function, values))
}

fn evaluate(name: &str, function: &str, values: &[Value]) -> SqlResult<Value> {
    let srid = || values.get(1).map_or(Ok(0), srid_argument);
    match name {
        "ST_GEOMFROMTEXT" | "ST_GEOMETRYFROMTEXT" => {
            let text = crate::eval::value::text(&values[0]);
            let shape = Shape::parse_wkt(&text).map_err(|_: InvalidGeometry| invalid_data(function))?;
            stored_from_input(shape, srid()?, function)
        }
        "ST_GEOMFROMWKB" | "ST_GEOMETRYFROMWKB" => {
            let Value::Bytes(wkb) = &values[0] else { return Err(invalid_data(function)) };
            let shape = Shape::parse_wkb(wkb).map_err(|_| invalid_data(function))?;
            stored_from_input(shape, srid()?, function)
        }
        "POINT" => {
            let (Some(x), Some(y)) = (coordinate(&values[0]), coordinate(&values[1])) else { return Err(invalid_data(function)) };
            Ok(Value::Bytes(Stored { srid: 0, shape: Shape::Point(Point { x, y }) }.encode()))
        }
        "ST_ASTEXT" | "ST_ASWKT" => {
            let shape = shape_for_output(geometry_argument(&values[0], function)?)?;
            Ok(Value::Bytes(shape.to_wkt().into_bytes()))
        }
        "ST_ASBINARY" | "ST_ASWKB" => {
            let shape = shape_for_output(geometry_argument(&values[0], function)?)?;
            let mut wkb = Vec::new();
            shape.write_wkb(&mut wkb);
            Ok(Value::Bytes(wkb))
        }
        "ST_X" | "ST_Y" => {
            let shape = shape_for_output(geometry_argument(&values[0], function)?)?;
            let Shape::Point(point) = shape else {
                return Err(MysqlError::new(
                    3516,
                    "22S01",
                    format!("POINT value is a geometry of unexpected type {} in {function}.", shape.kind().sql_name().to_ascii_uppercase()),
                ));
            };
            Ok(Value::Double(if name == "ST_X" { point.x } else { point.y }))
        }
        "ST_SRID" => {
            let stored = geometry_argument(&values[0], function)?;
            match values.get(1) {
                None => Ok(Value::Int(i64::from(stored.srid))),
                // ST_SRID(g, srid) relabels g's coordinates as they are stored.
                Some(srid) => {
                    let srid = srid_argument(srid)?;
                    let mut shape = stored.shape;
                    if spatial_reference_system(srid)? {
                        check_geographic(&mut shape, function)?;
                    }
                    Ok(Value::Bytes(Stored { srid, shape }.encode()))
                }
            }
        }
        _ => unreachable!("call checked the name"),
    }
}

/// `value` made fit for geometry column `column`: a geometry of the
/// column's kind (1416 otherwise), with the column's SRID when it has one
/// (3643), stored little-endian.
pub fn for_column(column: &ColumnDef, value: &Value) -> SqlResult<Value> {
    let Value::Bytes(bytes) = value else {
        return if matches!(value, Value::Null) { Ok(Value::Null) } else { Err(not_a_geometry()) };
    };
    let stored = Stored::parse(bytes).map_err(|_| not_a_geometry())?;
    let declared = column.attributes.geometry;
    if !declared.map_or(Kind::Geometry, |geometry| geometry.kind).holds(&stored.shape) {
        return Err(not_a_geometry());
    }
    if let Some(srid) = declared.and_then(|geometry| geometry.srid) {
        if stored.srid != srid {
            return Err(MysqlError::new(
                3643,
                "HY000",
                format!(
                    "The SRID of the geometry does not match the SRID of the column '{}'. The SRID of the geometry is {}, but the SRID of the column is {srid}. Consider changing the SRID of the geometry or the SRID property of the column.",
                    column.name, stored.srid
                ),
            ));
        }
    }
    spatial_reference_system(stored.srid)?;
    Ok(Value::Bytes(stored.encode()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, values: &[Value]) -> SqlResult<Value> {
        call(name, values).expect("a spatial function")
    }

    fn bytes(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn wkt(value: SqlResult<Value>) -> String {
        match run("ST_ASTEXT", &[value.unwrap()]).unwrap() {
            Value::Bytes(text) => String::from_utf8(text).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn geographic_points_are_stored_longitude_first_and_read_latitude_first() {
        let point = run("ST_GEOMFROMTEXT", &[bytes("POINT(10 20)"), Value::Int(4326)]).unwrap();
        let Value::Bytes(stored) = &point else { panic!() };
        assert_eq!(&stored[..4], &4326u32.to_le_bytes());
        assert_eq!(&stored[9..17], &20f64.to_le_bytes(), "longitude first");
        assert_eq!(wkt(Ok(point.clone())), "POINT(10 20)");
        assert_eq!(run("ST_X", std::slice::from_ref(&point)).unwrap(), Value::Double(10.0));
        assert_eq!(run("ST_SRID", &[point]).unwrap(), Value::Int(4326));
        let error = run("ST_GEOMFROMTEXT", &[bytes("POINT(91 0)"), Value::Int(4326)]).unwrap_err();
        assert_eq!(error.code, 3617);
        let error = run("ST_GEOMFROMTEXT", &[bytes("POINT(0 -180)"), Value::Int(4326)]).unwrap_err();
        assert_eq!(error.code, 3616);
    }

    #[test]
    fn bad_text_unknown_srids_and_wrong_arities_get_mysqls_errors() {
        let error = run("ST_GEOMFROMTEXT", &[bytes("POINT(1)")]).unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (3037, "Invalid GIS data provided to function st_geomfromtext."));
        let error = run("ST_GEOMFROMTEXT", &[bytes("POINT(1 2)"), Value::Int(1234)]).unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (3548, "There's no spatial reference system with SRID 1234."));
        assert_eq!(run("ST_ASTEXT", &[bytes("nope")]).unwrap_err().code, 3037);
        assert_eq!(run("POINT", &[Value::Int(1)]).unwrap_err().code, 1582);
        assert_eq!(run("ST_X", &[run("ST_GEOMFROMTEXT", &[bytes("LINESTRING(0 0,1 1)")]).unwrap()]).unwrap_err().code, 3516);
        assert_eq!(run("ST_ASTEXT", &[Value::Null]).unwrap(), Value::Null);
        assert!(call("ST_BUFFER", &[]).is_none());
    }

    #[test]
    fn wkb_round_trips_and_point_builds_a_cartesian_point() {
        let point = run("POINT", &[Value::Int(1), Value::Double(-2.5)]).unwrap();
        assert_eq!(wkt(Ok(point.clone())), "POINT(1 -2.5)");
        let wkb = run("ST_ASBINARY", std::slice::from_ref(&point)).unwrap();
        assert_eq!(run("ST_GEOMFROMWKB", &[wkb]).unwrap(), point);
        let relabelled = run("ST_SRID", &[point, Value::Int(3857)]).unwrap();
        assert_eq!(run("ST_SRID", &[relabelled]).unwrap(), Value::Int(3857));
    }
}
