package binlogd.interop.debezium;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * `cdc.types`: a column of every type binlogd supports, each with two
 * values, and the value Debezium's MySQL connector emits for each under
 * its defaults (decimal.handling.mode=precise,
 * time.precision.mode=adaptive_time_microseconds,
 * binary.handling.mode=bytes) and bigint.unsigned.handling.mode=precise,
 * in {@link Change#canonical} form, computed from the literal
 * (io.debezium.time.ZonedTimestamp prints as many fraction digits as the
 * column's precision).
 */
final class TypedColumns {
    record Column(String name, String type, String first, String firstExpected, String second, String secondExpected) {
    }

    static final List<Column> COLUMNS = List.of(
            new Column("tiny", "TINYINT", "-128", "-128", "127", "127"),
            new Column("small", "SMALLINT", "-32768", "-32768", "32767", "32767"),
            new Column("medium", "MEDIUMINT", "-8388608", "-8388608", "8388607", "8388607"),
            new Column("num", "INT", "-2147483648", "-2147483648", "2147483647", "2147483647"),
            new Column("unum", "INT UNSIGNED", "4294967295", "4294967295", "0", "0"),
            new Column("big", "BIGINT", "-9223372036854775808", "-9223372036854775808", "9223372036854775807",
                    "9223372036854775807"),
            new Column("ubig", "BIGINT UNSIGNED", "18446744073709551615", "18446744073709551615", "1", "1"),
            new Column("f", "FLOAT", "0.5", "0.5", "-2.25", "-2.25"),
            new Column("d", "DOUBLE", "-1.25", "-1.25", "1e100", Change.number("1e100")),
            new Column("dec", "DECIMAL(10,2)", "12345678.90", "12345678.9", "-0.01", "-0.01"),
            new Column("ch", "CHAR(4)", "'ab'", "ab", "''", ""),
            new Column("vc", "VARCHAR(40)", "'h\u00e9llo \u2713'", "h\u00e9llo \u2713", "'x'", "x"),
            new Column("bn", "BINARY(4)", "X'6162'", "61620000", "X'01020304'", "01020304"),
            new Column("vb", "VARBINARY(8)", "X'00ff'", "00ff", "''", ""),
            new Column("tt", "TINYTEXT", "'tiny'", "tiny", "''", ""),
            new Column("tx", "TEXT", "'some text'", "some text", "'more'", "more"),
            new Column("lt", "LONGTEXT", "REPEAT('z', 3000)", "z".repeat(3000), "'l'", "l"),
            new Column("bl", "BLOB", "X'deadbeef'", "deadbeef", "X'00'", "00"),
            new Column("dt", "DATE", "'2024-01-02'", days("2024-01-02"), "'1969-12-31'", days("1969-12-31")),
            new Column("dtm", "DATETIME", "'2024-01-02 03:04:05'", millis("2024-01-02T03:04:05"), "'1999-12-31 23:59:59'",
                    millis("1999-12-31T23:59:59")),
            new Column("dtm3", "DATETIME(3)", "'2024-01-02 03:04:05.123'", millis("2024-01-02T03:04:05.123"),
                    "'2000-02-29 00:00:00.001'", millis("2000-02-29T00:00:00.001")),
            new Column("dtm6", "DATETIME(6)", "'2024-01-02 03:04:05.123456'", micros("2024-01-02T03:04:05.123456"),
                    "'2038-01-19 03:14:08.000001'", micros("2038-01-19T03:14:08.000001")),
            new Column("ts", "TIMESTAMP NULL", "'2024-01-02 03:04:05'", "2024-01-02T03:04:05Z", "'2001-09-09 01:46:40'",
                    "2001-09-09T01:46:40Z"),
            new Column("ts6", "TIMESTAMP(6) NULL", "'2024-01-02 03:04:05.123456'", "2024-01-02T03:04:05.123456Z",
                    "'2020-06-01 12:00:00.5'", "2020-06-01T12:00:00.500000Z"),
            new Column("tm", "TIME", "'03:04:05'", timeMicros("03:04:05"), "'23:59:59'", timeMicros("23:59:59")),
            new Column("tm6", "TIME(6)", "'01:02:03.456789'", timeMicros("01:02:03.456789"), "'00:00:00.000001'",
                    timeMicros("00:00:00.000001")),
            new Column("yr", "YEAR", "2024", "2024", "1901", "1901"),
            new Column("bit1", "BIT(1)", "b'1'", "true", "b'0'", "false"),
            new Column("bits", "BIT(8)", "b'10100101'", "a5", "b'00000001'", "01"),
            new Column("e", "ENUM('small','large')", "'large'", "large", "'small'", "small"),
            new Column("s", "SET('x','y','z')", "'x,z'", "x,z", "''", ""),
            new Column("j", "JSON", "'{\"a\": [1, 2.5, \"x\"], \"b\": null}'", Change.json("{\"a\":[1,2.5,\"x\"],\"b\":null}"),
                    "'[true, {\"k\": \"v\"}]'", Change.json("[true,{\"k\":\"v\"}]")));

    static String createTable(String table) {
        StringBuilder sql = new StringBuilder("CREATE TABLE " + table + " (id INT NOT NULL");
        for (Column column : COLUMNS) {
            sql.append(", ").append(column.name()).append(' ').append(column.type());
        }
        return sql.append(", PRIMARY KEY (id))").toString();
    }

    /** INSERT of row `id` with the first (or second) value of every column. */
    static String insert(String table, int id, boolean first) {
        StringBuilder sql = new StringBuilder("INSERT INTO " + table + " VALUES (" + id);
        for (Column column : COLUMNS) {
            sql.append(", ").append(first ? column.first() : column.second());
        }
        return sql.append(')').toString();
    }

    /** UPDATE of row `id` to the first (or second) values. */
    static String update(String table, int id, boolean first) {
        StringBuilder sql = new StringBuilder("UPDATE " + table + " SET ");
        for (int i = 0; i < COLUMNS.size(); i++) {
            Column column = COLUMNS.get(i);
            sql.append(i == 0 ? "" : ", ").append(column.name()).append(" = ").append(first ? column.first() : column.second());
        }
        return sql.append(" WHERE id = ").append(id).toString();
    }

    static Map<String, String> expected(int id, boolean first) {
        Map<String, String> row = new LinkedHashMap<>();
        row.put("id", Integer.toString(id));
        for (Column column : COLUMNS) {
            row.put(column.name(), first ? column.firstExpected() : column.secondExpected());
        }
        return row;
    }

    static Map<String, String> nulls(int id) {
        Map<String, String> row = new LinkedHashMap<>();
        row.put("id", Integer.toString(id));
        for (Column column : COLUMNS) {
            row.put(column.name(), null);
        }
        return row;
    }

    /** io.debezium.time.Date: days since the epoch. */
    static String days(String date) {
        return Long.toString(LocalDate.parse(date).toEpochDay());
    }

    /** io.debezium.time.Timestamp: DATETIME(0-3) as milliseconds since the epoch, read as UTC. */
    static String millis(String dateTime) {
        return Long.toString(LocalDateTime.parse(dateTime).toInstant(ZoneOffset.UTC).toEpochMilli());
    }

    /** io.debezium.time.MicroTimestamp: DATETIME(4-6) in microseconds. */
    static String micros(String dateTime) {
        return Long.toString(ChronoUnit.MICROS.between(LocalDateTime.of(1970, 1, 1, 0, 0), LocalDateTime.parse(dateTime)));
    }

    /** io.debezium.time.MicroTime: TIME as microseconds since midnight. */
    static String timeMicros(String time) {
        return Long.toString(LocalTime.parse(time).toNanoOfDay() / 1000);
    }

    private TypedColumns() {
    }
}
