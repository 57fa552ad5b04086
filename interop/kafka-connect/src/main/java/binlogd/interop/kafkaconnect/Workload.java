package binlogd.interop.kafkaconnect;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import binlogd.interop.common.Binlogd;

/**
 * Transactions on binlogd and a model of the tables they change: each
 * committed row change, with its before and after images and the GTID the
 * server gave its transaction, is what Debezium must put in Kafka, once.
 * One writer at a time, so the newest GTID in `@@gtid_executed` is the
 * transaction's.
 */
final class Workload {
    /** A row change as the topics must carry it; key is `table/id`, gtid null for a snapshot read. */
    record Change(String table, int id, String op, Map<String, String> before, Map<String, String> after, String gtid) {
        String key() {
            return table + "/" + id;
        }
    }

    private final Binlogd server;
    /** Table -> id -> column -> value, as committed. */
    private final Map<String, Map<Integer, Map<String, Object>>> tables = new TreeMap<>();
    final List<Change> committed = new ArrayList<>();

    Workload(Binlogd server) {
        this.server = server;
    }

    /** Creates a table whose first column is the INT primary key `id`. */
    void create(String table, String columns) throws SQLException {
        server.execute("CREATE TABLE cdc." + table + " (" + columns + ", PRIMARY KEY (id))");
        tables.put(table, new TreeMap<>());
    }

    /** A row that is there before the connector starts: the snapshot reads it (op r). */
    void seed(String table, Object... namesAndValues) throws SQLException {
        Map<String, Object> row = row(namesAndValues);
        server.execute(insertSql(table, row));
        tables.get(table).put((Integer) row.get("id"), row);
        committed.add(new Change(table, (Integer) row.get("id"), "r", null, text(row), null));
    }

    Transaction begin() {
        return new Transaction();
    }

    /** Statements of one transaction, and the row changes they make, in order. */
    final class Transaction {
        private final List<String> statements = new ArrayList<>();
        private final List<Change> changes = new ArrayList<>();

        Transaction insert(String table, Object... namesAndValues) {
            Map<String, Object> row = row(namesAndValues);
            statements.add(insertSql(table, row));
            tables.get(table).put((Integer) row.get("id"), row);
            changes.add(new Change(table, (Integer) row.get("id"), "c", null, text(row), null));
            return this;
        }

        /** One UPDATE statement that sets `column` on every row of `ids`: one Rows event, several rows. */
        Transaction update(String table, List<Integer> ids, String column, Object value) {
            statements.add("UPDATE cdc." + table + " SET " + column + " = " + literal(value) + " WHERE id IN ("
                    + ids.stream().map(String::valueOf).collect(Collectors.joining(", ")) + ")");
            for (int id : ids) {
                Map<String, Object> before = tables.get(table).get(id);
                Map<String, Object> after = new LinkedHashMap<>(before);
                after.put(column, value);
                tables.get(table).put(id, after);
                changes.add(new Change(table, id, "u", text(before), text(after), null));
            }
            return this;
        }

        Transaction update(String table, int id, String column, Object value) {
            return update(table, List.of(id), column, value);
        }

        Transaction delete(String table, int id) {
            statements.add("DELETE FROM cdc." + table + " WHERE id = " + id);
            changes.add(new Change(table, id, "d", text(tables.get(table).remove(id)), null, null));
            return this;
        }

        /** Runs the statements between BEGIN and COMMIT; the transaction's GTID. */
        String commit() throws SQLException {
            try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
                statement.execute("BEGIN");
                for (String sql : statements) {
                    statement.execute(sql);
                }
                statement.execute("COMMIT");
                String gtid = lastGtid(statement);
                for (Change change : changes) {
                    committed.add(new Change(change.table(), change.id(), change.op(), change.before(), change.after(), gtid));
                }
                return gtid;
            }
        }
    }

    /** `uuid:N` for the newest transaction in `@@global.gtid_executed` (a single source UUID). */
    static String lastGtid(Statement statement) throws SQLException {
        try (ResultSet rows = statement.executeQuery("SELECT @@global.gtid_executed")) {
            rows.next();
            String executed = rows.getString(1).replace("\n", "");
            String uuid = executed.substring(0, executed.indexOf(':'));
            String last = executed.substring(executed.lastIndexOf(':') + 1);
            return uuid + ":" + last.substring(last.indexOf('-') + 1);
        }
    }

    private static Map<String, Object> row(Object... namesAndValues) {
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            row.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return row;
    }

    private static String insertSql(String table, Map<String, Object> row) {
        return "INSERT INTO cdc." + table + " (" + String.join(", ", row.keySet()) + ") VALUES ("
                + row.values().stream().map(Workload::literal).collect(Collectors.joining(", ")) + ")";
    }

    private static String literal(Object value) {
        if (value == null) {
            return "NULL";
        }
        return value instanceof String text ? "'" + text.replace("'", "''") + "'" : value.toString();
    }

    /** Column values as text, as the JSON converter's numbers and strings read back. */
    static Map<String, String> text(Map<String, Object> row) {
        Map<String, String> text = new TreeMap<>();
        row.forEach((name, value) -> text.put(name, value == null ? null : value.toString()));
        return text;
    }
}
