//! Spatial columns end to end against a served binlogd: GEOMETRY, POINT,
//! LINESTRING, POLYGON, MULTIPOINT, MULTILINESTRING, MULTIPOLYGON and
//! GEOMETRYCOLLECTION, with and without `SRID n`, written by
//! ST_GeomFromText, POINT() and ST_GeomFromWKB through both protocols,
//! updated and deleted; then
//! - the text and the binary protocol return the stored bytes (SRID u32 LE
//!   then little-endian WKB, built here by hand) as MYSQL_TYPE_GEOMETRY
//!   columns, and ST_AsText prints MySQL's WKT;
//! - mysql_common decodes every row image to the same bytes and reads the
//!   Table_map's GEOMETRY_TYPE metadata;
//! - `mariadb-binlog --verbose` reads the file (exit 0);
//! - python-mysql-replication returns the same bytes;
//! - a MariaDB replica applies the rows and ends with the same bytes
//!   (MariaDB stores geometries the same way; it has no `SRID n` clause,
//!   so its table has none);
//! - SHOW CREATE TABLE and INFORMATION_SCHEMA.COLUMNS print MySQL's types
//!   and SRIDs, also after a restart;
//! - bad input gets MySQL's errors (3037, 3548, 3643, 1416, 1101, 1221)
//!   and changes nothing.

mod support;

use std::collections::BTreeMap;
use std::process::Command;

use mysql_common::binlog::consts::BinlogVersion;
use mysql_common::binlog::events::{EventData, OptionalMetadataField, RowsEventData};
use mysql_common::binlog::value::BinlogValue;
use mysql_common::binlog::BinlogFile;
use mysql_common::constants::{ColumnFlags, ColumnType};
use serde_json::Value as Json;
use support::mariadb::MariaDb;
use support::{python_script, Binlogd};
use testkit::raw_client::{MValue, RawClient, Response};

const CREATE: &str = "CREATE TABLE gt.t (
    id INT NOT NULL PRIMARY KEY,
    g GEOMETRY,
    p POINT,
    l LINESTRING,
    a POLYGON,
    mp MULTIPOINT,
    ml MULTILINESTRING,
    ma MULTIPOLYGON,
    gc GEOMETRYCOLLECTION,
    geo POINT SRID 4326
)";

/// The spatial columns in table order.
const COLUMNS: [&str; 9] = ["g", "p", "l", "a", "mp", "ml", "ma", "gc", "geo"];

/// Little-endian WKB, written independently of binlogd's encoder.
struct Wkb(Vec<u8>);

impl Wkb {
    fn new(wkb_type: u32) -> Wkb {
        let mut bytes = vec![1];
        bytes.extend_from_slice(&wkb_type.to_le_bytes());
        Wkb(bytes)
    }
    fn count(mut self, n: u32) -> Wkb {
        self.0.extend_from_slice(&n.to_le_bytes());
        self
    }
    fn xy(mut self, x: f64, y: f64) -> Wkb {
        self.0.extend_from_slice(&x.to_le_bytes());
        self.0.extend_from_slice(&y.to_le_bytes());
        self
    }
    fn points(self, points: &[(f64, f64)]) -> Wkb {
        points.iter().fold(self.count(points.len() as u32), |wkb, &(x, y)| wkb.xy(x, y))
    }
    fn member(mut self, member: Wkb) -> Wkb {
        self.0.extend_from_slice(&member.0);
        self
    }
    fn stored(self, srid: u32) -> Vec<u8> {
        let mut bytes = srid.to_le_bytes().to_vec();
        bytes.extend_from_slice(&self.0);
        bytes
    }
}

fn point(x: f64, y: f64) -> Wkb {
    Wkb::new(1).xy(x, y)
}

fn line(points: &[(f64, f64)]) -> Wkb {
    Wkb::new(2).points(points)
}

fn polygon(rings: &[&[(f64, f64)]]) -> Wkb {
    rings.iter().fold(Wkb::new(3).count(rings.len() as u32), |wkb, ring| wkb.points(ring))
}

const SQUARE: &[(f64, f64)] = &[(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0), (0.0, 0.0)];
const HOLE: &[(f64, f64)] = &[(2.0, 2.0), (3.0, 2.0), (3.0, 3.0), (2.0, 2.0)];
const TRIANGLE: &[(f64, f64)] = &[(5.0, 5.0), (6.0, 5.0), (6.0, 6.0), (5.0, 5.0)];

/// One row: (id, per column: SQL expression written, WKT ST_AsText
/// prints, stored bytes), `None` for NULL.
type Cell = Option<(String, String, Vec<u8>)>;

fn cell(sql: &str, wkt: &str, stored: Vec<u8>) -> Cell {
    Some((sql.to_owned(), wkt.to_owned(), stored))
}

fn from_text(wkt: &str) -> String {
    format!("ST_GeomFromText('{wkt}')")
}

fn rows() -> Vec<(i64, Vec<Cell>)> {
    let full = vec![
        cell(&from_text("LINESTRING(0 0,1.5 -2)"), "LINESTRING(0 0,1.5 -2)", line(&[(0.0, 0.0), (1.5, -2.0)]).stored(0)),
        cell("POINT(1, -2.25)", "POINT(1 -2.25)", point(1.0, -2.25).stored(0)),
        cell(
            &from_text("linestring( 0 0 , 10 10, 20 25 )"),
            "LINESTRING(0 0,10 10,20 25)",
            line(&[(0.0, 0.0), (10.0, 10.0), (20.0, 25.0)]).stored(0),
        ),
        cell(
            &from_text("POLYGON((0 0,10 0,10 10,0 10,0 0),(2 2,3 2,3 3,2 2))"),
            "POLYGON((0 0,10 0,10 10,0 10,0 0),(2 2,3 2,3 3,2 2))",
            polygon(&[SQUARE, HOLE]).stored(0),
        ),
        cell(
            &from_text("MULTIPOINT(1 1,2 2)"),
            "MULTIPOINT((1 1),(2 2))",
            Wkb::new(4).count(2).member(point(1.0, 1.0)).member(point(2.0, 2.0)).stored(0),
        ),
        cell(
            &from_text("MULTILINESTRING((0 0,1 1),(2 2,3 3))"),
            "MULTILINESTRING((0 0,1 1),(2 2,3 3))",
            Wkb::new(5).count(2).member(line(&[(0.0, 0.0), (1.0, 1.0)])).member(line(&[(2.0, 2.0), (3.0, 3.0)])).stored(0),
        ),
        cell(
            &from_text("MULTIPOLYGON(((0 0,10 0,10 10,0 10,0 0)),((5 5,6 5,6 6,5 5)))"),
            "MULTIPOLYGON(((0 0,10 0,10 10,0 10,0 0)),((5 5,6 5,6 6,5 5)))",
            Wkb::new(6).count(2).member(polygon(&[SQUARE])).member(polygon(&[TRIANGLE])).stored(0),
        ),
        cell(
            &from_text("GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1),GEOMETRYCOLLECTION EMPTY)"),
            "GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1),GEOMETRYCOLLECTION EMPTY)",
            Wkb::new(7).count(3).member(point(1.0, 1.0)).member(line(&[(0.0, 0.0), (1.0, 1.0)])).member(Wkb::new(7).count(0)).stored(0),
        ),
        // Latitude 59.3, longitude 18.05: stored longitude first.
        cell("ST_GeomFromText('POINT(59.3 18.05)', 4326)", "POINT(59.3 18.05)", point(18.05, 59.3).stored(4326)),
    ];
    let edges = vec![
        cell(&from_text("GEOMETRYCOLLECTION EMPTY"), "GEOMETRYCOLLECTION EMPTY", Wkb::new(7).count(0).stored(0)),
        cell("POINT(-0.5, 1e300)", "POINT(-0.5 1e300)", point(-0.5, 1e300).stored(0)),
        cell(&from_text("LINESTRING(-1 -1,-1 -1)"), "LINESTRING(-1 -1,-1 -1)", line(&[(-1.0, -1.0), (-1.0, -1.0)]).stored(0)),
        cell(
            &from_text("POLYGON((0 0,1 0,1 1,0 0))"),
            "POLYGON((0 0,1 0,1 1,0 0))",
            polygon(&[&[(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 0.0)]]).stored(0),
        ),
        cell(&from_text("MULTIPOINT((7 8))"), "MULTIPOINT((7 8))", Wkb::new(4).count(1).member(point(7.0, 8.0)).stored(0)),
        None,
        None,
        cell(
            &from_text("GEOMCOLLECTION(POINT(0 0))"),
            "GEOMETRYCOLLECTION(POINT(0 0))",
            Wkb::new(7).count(1).member(point(0.0, 0.0)).stored(0),
        ),
        cell("ST_GeomFromText('POINT(-90 180)', 4326)", "POINT(-90 180)", point(180.0, -90.0).stored(4326)),
    ];
    vec![(1, full), (2, vec![None; COLUMNS.len()]), (3, edges)]
}

fn insert_sql(id: i64, cells: &[Cell]) -> String {
    let values: Vec<String> = cells.iter().map(|cell| cell.as_ref().map_or("NULL".to_owned(), |(sql, _, _)| sql.clone())).collect();
    format!("INSERT INTO t VALUES ({id}, {})", values.join(", "))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every row as the text protocol returns it: id, then the stored bytes.
fn stored_rows(client: &mut RawClient) -> Vec<Vec<Option<Vec<u8>>>> {
    let Response::Rows { rows, columns, .. } = client.query(&format!("SELECT id, {} FROM t ORDER BY id", COLUMNS.join(", "))).unwrap()
    else {
        panic!("rows")
    };
    for column in &columns[1..] {
        assert_eq!((column.column_type(), column.character_set()), (ColumnType::MYSQL_TYPE_GEOMETRY, 63), "{column:?}");
        assert!(column.flags().contains(ColumnFlags::BLOB_FLAG | ColumnFlags::BINARY_FLAG));
    }
    rows
}

/// One row image of table t: (event, id, the spatial values' bytes).
type Image = (&'static str, i64, Vec<Option<Vec<u8>>>);

/// The row images of table t mysql_common decodes, and the GEOMETRY_TYPE
/// codes of t's Table_map.
fn binlog_images(path: &std::path::Path) -> (Vec<Image>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let mut binlog = BinlogFile::new(BinlogVersion::Version4, &bytes[..]).expect("mysql_common reads the file");
    let mut images = Vec::new();
    let mut geometry_types = Vec::new();
    while let Some(event) = binlog.next() {
        let event = event.expect("mysql_common reads every event");
        match event.read_data().expect("mysql_common decodes the event") {
            Some(EventData::TableMapEvent(map)) if map.table_name() == "t" => {
                geometry_types.clear();
                for field in map.iter_optional_meta() {
                    if let OptionalMetadataField::GeometryType(types) = field.expect("mysql_common reads the optional metadata") {
                        geometry_types = types.iter_geometry_types().map(|kind| kind.expect("a known geometry type") as u8).collect();
                    }
                }
            }
            Some(EventData::RowsEvent(rows)) => {
                let table_map = binlog.reader().get_tme(rows.table_id()).expect("table map precedes rows");
                if table_map.table_name() != "t" {
                    continue;
                }
                let kind = match rows {
                    RowsEventData::WriteRowsEvent(_) => "write",
                    RowsEventData::UpdateRowsEvent(_) => "update",
                    RowsEventData::DeleteRowsEvent(_) => "delete",
                    _ => "other",
                };
                for row in rows.rows(table_map) {
                    let (before, after) = row.expect("mysql_common decodes the row");
                    for image in [before, after].into_iter().flatten() {
                        let values = image.unwrap();
                        let BinlogValue::Value(MValue::Int(id)) = values[0] else { panic!("id {:?}", values[0]) };
                        let spatial = values[1..]
                            .iter()
                            .map(|value| match value {
                                BinlogValue::Value(MValue::NULL) => None,
                                BinlogValue::Value(MValue::Bytes(bytes)) => Some(bytes.clone()),
                                other => panic!("a geometry decoded as {other:?}"),
                            })
                            .collect();
                        images.push((kind, id, spatial));
                    }
                }
            }
            _ => {}
        }
    }
    (images, geometry_types)
}

/// python-mysql-replication's images of table t: (event, id, hex values).
fn python_images(server: &Binlogd) -> Vec<(String, i64, Vec<Option<String>>)> {
    let output = Command::new("python3")
        .arg(python_script("read_hex_rows.py"))
        .args([&server.port.to_string(), &server.binlog_files()[0], "t"])
        .output()
        .expect("run python3 (pip install mysql-replication pymysql)");
    assert!(output.status.success(), "read_hex_rows.py: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let line: Json = serde_json::from_str(line).unwrap();
            let values = &line["values"];
            let spatial = COLUMNS.iter().map(|name| values[name].as_str().map(str::to_owned)).collect();
            (line["event"].as_str().unwrap().to_owned(), values["id"].as_i64().unwrap(), spatial)
        })
        .collect()
}

#[test]
fn geometries_round_trip_through_both_protocols_and_every_binlog_reader() {
    let server = Binlogd::start(&[]);
    server.query(&format!("CREATE DATABASE gt; {CREATE}"));
    let mut client = RawClient::login_to(server.port, "root", "", Some("gt")).unwrap();
    let rows = rows();
    for (id, cells) in &rows {
        client.query(&insert_sql(*id, cells)).unwrap();
    }
    // A prepared INSERT: WKB and an SRID as parameters.
    let (insert, _, _) = client.prepare("INSERT INTO t (id, g, geo) VALUES (?, ST_GeomFromWKB(?), ST_GeomFromWKB(?, ?))").unwrap();
    let wkb_point = point(3.0, 4.0).0;
    client
        .execute(insert, &[MValue::Int(4), MValue::Bytes(wkb_point.clone()), MValue::Bytes(point(45.0, 90.0).0), MValue::Int(4326)])
        .unwrap();

    // Text protocol: the stored bytes, and ST_AsText's WKT.
    let mut expected: BTreeMap<i64, Vec<Option<Vec<u8>>>> =
        rows.iter().map(|(id, cells)| (*id, cells.iter().map(|c| c.as_ref().map(|(_, _, stored)| stored.clone())).collect())).collect();
    let mut fourth = vec![None; COLUMNS.len()];
    fourth[0] = Some(point(3.0, 4.0).stored(0));
    // WKB for SRID 4326 is latitude first: (45, 90) is latitude 45, longitude 90.
    fourth[8] = Some(point(90.0, 45.0).stored(4326));
    expected.insert(4, fourth);
    let read = stored_rows(&mut client);
    assert_eq!(read.len(), expected.len());
    for row in &read {
        let id: i64 = String::from_utf8(row[0].clone().unwrap()).unwrap().parse().unwrap();
        assert_eq!(
            row[1..].iter().map(|v| v.as_deref().map(hex)).collect::<Vec<_>>(),
            expected[&id].iter().map(|v| v.as_deref().map(hex)).collect::<Vec<_>>(),
            "row {id}"
        );
    }
    for (id, cells) in &rows {
        let texts: Vec<String> = COLUMNS.iter().map(|c| format!("ST_AsText({c})")).collect();
        let got = client.query_rows(&format!("SELECT {} FROM t WHERE id = {id}", texts.join(", "))).unwrap();
        let wanted: Vec<Option<String>> = cells.iter().map(|c| c.as_ref().map(|(_, wkt, _)| wkt.clone())).collect();
        assert_eq!(got[0], wanted, "row {id}");
    }
    let functions = [
        ("SELECT ST_X(p), ST_Y(p), ST_SRID(p) FROM t WHERE id = 1", vec!["1", "-2.25", "0"]),
        ("SELECT ST_X(geo), ST_Y(geo), ST_SRID(geo) FROM t WHERE id = 1", vec!["59.3", "18.05", "4326"]),
        (
            "SELECT ST_AsText(ST_GeomFromWKB(ST_AsBinary(a))) FROM t WHERE id = 1",
            vec!["POLYGON((0 0,10 0,10 10,0 10,0 0),(2 2,3 2,3 3,2 2))"],
        ),
        ("SELECT ST_AsWKT(ST_GeometryFromText('MULTIPOINT(0 0)')), ST_AsText(NULL)", vec!["MULTIPOINT((0 0))", "NULL"]),
    ];
    for (sql, wanted) in functions {
        let got = client.query_rows(sql).unwrap();
        let got: Vec<String> = got[0].iter().map(|v| v.clone().unwrap_or_else(|| "NULL".into())).collect();
        assert_eq!(got, wanted, "{sql}");
    }
    // ST_AsBinary of an SRID 4326 point is latitude first, as MySQL's.
    let Response::Rows { rows: binary, .. } = client.query("SELECT ST_AsBinary(geo) FROM t WHERE id = 4").unwrap() else { panic!("rows") };
    assert_eq!(binary[0][0].as_deref().map(hex), Some(hex(&point(45.0, 90.0).0)));

    // Binary protocol: the same bytes, the same column definition.
    let (select, _, columns) = client.prepare("SELECT g, p, geo FROM t WHERE id = ?").unwrap();
    assert!(columns.iter().all(|c| c.column_type() == ColumnType::MYSQL_TYPE_GEOMETRY));
    for (id, stored) in &expected {
        let Response::BinaryRows { rows: binary, .. } = client.execute(select, &[MValue::Int(*id)]).unwrap() else { panic!("binary rows") };
        let values: Vec<Option<Vec<u8>>> = binary[0]
            .iter()
            .map(|value| match value {
                MValue::NULL => None,
                MValue::Bytes(bytes) => Some(bytes.clone()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(values, vec![stored[0].clone(), stored[1].clone(), stored[8].clone()], "row {id} through the binary protocol");
    }
    let Response::Rows { columns, .. } = client.query("SELECT POINT(1, 2), ST_GeomFromText('POINT(1 2)'), ST_X(POINT(1, 2))").unwrap()
    else {
        panic!("rows")
    };
    assert_eq!(
        columns.iter().map(|c| c.column_type()).collect::<Vec<_>>(),
        [ColumnType::MYSQL_TYPE_GEOMETRY, ColumnType::MYSQL_TYPE_GEOMETRY, ColumnType::MYSQL_TYPE_DOUBLE]
    );

    // An update of every geometry of row 1 to row 3's, then every row goes.
    client.query("UPDATE t SET g = p, p = POINT(5, 6), l = NULL WHERE id = 1").unwrap();
    let mut updated = expected[&1].clone();
    updated[0] = expected[&1][1].clone();
    updated[1] = Some(point(5.0, 6.0).stored(0));
    updated[2] = None;
    client.query("DELETE FROM t").unwrap();

    // The binlog: every image, as mysql_common and python-mysql-replication read it.
    let mut images: Vec<Image> = Vec::new();
    for id in [1, 2, 3, 4] {
        images.push(("write", id, expected[&id].clone()));
    }
    images.push(("update", 1, expected[&1].clone()));
    images.push(("update", 1, updated.clone()));
    for id in [1, 2, 3, 4] {
        images.push(("delete", id, if id == 1 { updated.clone() } else { expected[&id].clone() }));
    }
    let file = server.binlog_dir().join(&server.binlog_files()[0]);
    let (decoded, geometry_types) = binlog_images(&file);
    assert_eq!(geometry_types, [0, 1, 2, 3, 4, 5, 6, 7, 1], "GEOMETRY_TYPE metadata");
    assert_eq!(decoded.len(), images.len());
    for (ours, theirs) in images.iter().zip(&decoded) {
        assert_eq!(ours, theirs, "mysql_common");
    }
    let output = Command::new("mariadb-binlog").arg("--verbose").arg(&file).output().expect("run mariadb-binlog");
    assert!(output.status.success(), "mariadb-binlog --verbose: {}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("### INSERT INTO `gt`.`t`"));
    let python = python_images(&server);
    assert_eq!(python.len(), images.len());
    for ((kind, id, values), theirs) in images.iter().zip(&python) {
        let ours = (kind.to_string(), *id, values.iter().map(|v| v.as_deref().map(hex)).collect::<Vec<_>>());
        assert_eq!(&ours, theirs, "python-mysql-replication");
    }
}

#[test]
fn spatial_columns_print_as_mysql_prints_them_and_survive_a_restart() {
    let mut server = Binlogd::start(&[]);
    server.query(&format!("CREATE DATABASE gt; {CREATE}; CREATE TABLE gt.s (id INT NOT NULL PRIMARY KEY, g GEOMETRY NOT NULL SRID 0, p POINT NOT NULL SRID 3857)"));
    server.query("INSERT INTO gt.s VALUES (1, POINT(1, 2), ST_GeomFromText('POINT(3 4)', 3857))");
    for _ in 0..2 {
        let create = server.query("SHOW CREATE TABLE gt.s");
        assert!(create.contains("`g` geometry NOT NULL /*!80003 SRID 0 */,"), "{create}");
        assert!(create.contains("`p` point NOT NULL /*!80003 SRID 3857 */,"), "{create}");
        let create = server.query("SHOW CREATE TABLE gt.t");
        for line in [
            "`g` geometry DEFAULT NULL",
            "`p` point DEFAULT NULL",
            "`l` linestring DEFAULT NULL",
            "`a` polygon DEFAULT NULL",
            "`mp` multipoint DEFAULT NULL",
            "`ml` multilinestring DEFAULT NULL",
            "`ma` multipolygon DEFAULT NULL",
            "`gc` geomcollection DEFAULT NULL",
            "`geo` point /*!80003 SRID 4326 */ DEFAULT NULL",
        ] {
            assert!(create.contains(line), "{line} in {create}");
        }
        let columns = server.query(
            "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, SRS_ID, CHARACTER_SET_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'gt' AND TABLE_NAME = 's' ORDER BY ORDINAL_POSITION",
        );
        assert_eq!(columns.trim(), "id\tint\tint\tNULL\tNULL\ng\tgeometry\tgeometry\t0\tNULL\np\tpoint\tpoint\t3857\tNULL");
        assert_eq!(server.query("SELECT ST_AsText(g), ST_AsText(p), ST_SRID(p) FROM gt.s").trim(), "POINT(1 2)\tPOINT(3 4)\t3857");
        server.restart();
    }
}

#[test]
fn bad_geometries_get_mysqls_errors_and_change_nothing() {
    let server = Binlogd::start(&[]);
    server.query(&format!(
        "CREATE DATABASE gt; {CREATE}; INSERT INTO gt.t (id, p, geo) VALUES (1, POINT(1, 1), ST_GeomFromText('POINT(1 1)', 4326))"
    ));
    let mut client = RawClient::login_to(server.port, "root", "", Some("gt")).unwrap();
    let cases = [
        ("INSERT INTO t (id, g) VALUES (2, ST_GeomFromText('POINT(1)'))", 3037, "22023", "Invalid GIS data provided to function st_geomfromtext."),
        ("INSERT INTO t (id, g) VALUES (2, ST_GeomFromText('POLYGON((0 0,1 0,1 1))'))", 3037, "22023", "Invalid GIS data provided to function st_geomfromtext."),
        ("SELECT ST_AsText('not a geometry')", 3037, "22023", "Invalid GIS data provided to function st_astext."),
        ("INSERT INTO t (id, g) VALUES (2, ST_GeomFromText('POINT(1 1)', 1234))", 3548, "SR001", "There's no spatial reference system with SRID 1234."),
        ("CREATE TABLE u (g GEOMETRY SRID 1234)", 3548, "SR001", "There's no spatial reference system with SRID 1234."),
        ("INSERT INTO t (id, p) VALUES (2, ST_GeomFromText('LINESTRING(0 0,1 1)'))", 1416, "22003", "Cannot get geometry object from data you send to the GEOMETRY field"),
        ("INSERT INTO t (id, g) VALUES (2, 'abc')", 1416, "22003", "Cannot get geometry object from data you send to the GEOMETRY field"),
        ("UPDATE t SET gc = POINT(1, 1) WHERE id = 1", 1416, "22003", "Cannot get geometry object from data you send to the GEOMETRY field"),
        (
            "INSERT INTO t (id, geo) VALUES (2, POINT(1, 1))",
            3643,
            "HY000",
            "The SRID of the geometry does not match the SRID of the column 'geo'. The SRID of the geometry is 0, but the SRID of the column is 4326. Consider changing the SRID of the geometry or the SRID property of the column.",
        ),
        ("INSERT INTO t (id, geo) VALUES (2, ST_GeomFromText('POINT(95 0)', 4326))", 3617, "22S03", "Latitude 95.000000 is out of range in function st_geomfromtext. It must be within [-90.000000, 90.000000]."),
        ("CREATE TABLE u (g POINT DEFAULT 'x')", 1101, "42000", "BLOB, TEXT, GEOMETRY or JSON column 'g' can't have a default value"),
        ("CREATE TABLE u (i INT SRID 0)", 1221, "HY000", "Incorrect usage of SRID and non-geometry column"),
        ("SELECT ST_X(ST_GeomFromText('LINESTRING(0 0,1 1)'))", 3516, "22S01", "POINT value is a geometry of unexpected type LINESTRING in st_x."),
    ];
    for (sql, code, state, message) in cases {
        let error = client.query(sql).unwrap_err();
        assert_eq!((error.code, error.state.as_str(), error.message.as_str()), (code, state, message), "{sql}");
    }
    // The connection is still usable and the committed row unchanged.
    assert_eq!(client.value("SELECT COUNT(*) FROM t"), "1");
    assert_eq!(
        client.query_rows("SELECT ST_AsText(p), ST_AsText(geo) FROM t").unwrap()[0],
        [Some("POINT(1 1)".into()), Some("POINT(1 1)".into())]
    );
    assert!(client.query("SHOW CREATE TABLE u").is_err(), "no table u was created");
}

#[test]
fn a_mariadb_replica_applies_the_spatial_rows() {
    let source = Binlogd::start(&[]);
    let replica = MariaDb::start(&["--server-id=2", "--skip-log-bin"]);
    replica.query(&format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='root', MASTER_PASSWORD='',
             MASTER_USE_GTID=no, MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=4, MASTER_HEARTBEAT_PERIOD=1;
         START SLAVE;",
        source.port
    ));
    let create = CREATE.replace("gt.t", "gr.t").replace(",\n    geo POINT SRID 4326", "");
    source.query(&format!("CREATE DATABASE gr; {create}"));
    let mut client = RawClient::login_to(source.port, "root", "", Some("gr")).unwrap();
    for (id, cells) in rows() {
        client.query(&insert_sql(id, &cells[..COLUMNS.len() - 1])).unwrap();
    }
    client.query("UPDATE t SET g = a, p = POINT(-7, 8.5) WHERE id = 1").unwrap();
    client.query("DELETE FROM t WHERE id = 2").unwrap();

    replica.wait_caught_up(&source);
    let spatial = &COLUMNS[..COLUMNS.len() - 1];
    let Response::Rows { rows: ours, .. } = client.query(&format!("SELECT id, {} FROM t ORDER BY id", spatial.join(", "))).unwrap() else {
        panic!("rows")
    };
    let ours: Vec<String> = ours
        .iter()
        .map(|row| {
            let id = String::from_utf8(row[0].clone().unwrap()).unwrap();
            let values: Vec<String> = row[1..].iter().map(|v| v.as_deref().map_or("NULL".to_owned(), |b| hex(b).to_uppercase())).collect();
            format!("{id}\t{}", values.join("\t"))
        })
        .collect();
    assert_eq!(ours.len(), 2);
    let hexes: Vec<String> = spatial.iter().map(|c| format!("HEX({c})")).collect();
    let theirs = replica.query(&format!("SELECT id, {} FROM gr.t ORDER BY id", hexes.join(", ")));
    // MariaDB's HEX of NULL is NULL, which its client prints as NULL.
    assert_eq!(theirs.trim_end().lines().collect::<Vec<_>>(), ours, "the MariaDB replica's rows");
}
