package binlogd.interop.debezium;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import binlogd.interop.common.Binlogd;

/**
 * Runs transactions on binlogd and records, for each, the change events
 * Debezium must emit for it and the GTID the server gave it (the last
 * number of `@@gtid_executed`, one writer at a time).
 */
final class Workload {
    /** A change Debezium must emit; gtid is filled in once the transaction commits. */
    record Expected(String table, String op, Map<String, String> before, Map<String, String> after, String gtid) {
    }

    private final Binlogd server;
    final List<Expected> events = new ArrayList<>();

    Workload(Binlogd server) {
        this.server = server;
    }

    /** Runs `statements` as one transaction (or one DDL) and returns its GTID. */
    String transaction(List<Expected> changes, String... statements) throws SQLException {
        try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
            String gtid = lastGtid(connection);
            for (Expected change : changes) {
                events.add(new Expected(change.table(), change.op(), change.before(), change.after(), gtid));
            }
            return gtid;
        }
    }

    static Expected insert(String table, Map<String, String> after) {
        return new Expected(table, "c", null, after, null);
    }

    static Expected update(String table, Map<String, String> before, Map<String, String> after) {
        return new Expected(table, "u", before, after, null);
    }

    static Expected delete(String table, Map<String, String> before) {
        return new Expected(table, "d", before, null, null);
    }

    /** `uuid:N` for the newest transaction in `@@global.gtid_executed` (a single source UUID). */
    static String lastGtid(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
                var rows = statement.executeQuery("SELECT @@global.gtid_executed")) {
            rows.next();
            String executed = rows.getString(1).replace("\n", "");
            String uuid = executed.substring(0, executed.indexOf(':'));
            String last = executed.substring(executed.lastIndexOf(':') + 1);
            String end = last.contains("-") ? last.substring(last.indexOf('-') + 1) : last;
            return uuid + ":" + end;
        }
    }
}
