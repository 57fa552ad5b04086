package binlogd.interop.debezium;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import binlogd.interop.common.Binlogd;
import binlogd.interop.common.Checks;

import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

import binlogd.interop.debezium.Workload.Expected;

/**
 * Debezium's MySQL connector (embedded, offsets and schema history in
 * memory) against binlogd: the initial snapshot of sysbench-shaped tables
 * and a table of every column type, then streaming of inserts, updates,
 * deletes, DDL, a rotation, a promoted large transaction, a restart of
 * binlogd and a kill -9 of it, each change event compared with the values,
 * GTID, file and position the workload implies.
 * Run: `run.sh PATH/TO/binlogd`; prints `N passed, M failed`.
 */
public final class Harness {
    private static final String PREFIX = "bd";
    private static final int SBTEST_ROWS = 20;
    /** 24 x 500 KB = 12 MB of binlog, past the 10 MiB minimum promotion threshold. */
    private static final int LARGE_ROWS = 24;
    private static final int LARGE_TEXT_BYTES = 500_000;

    public static void main(String[] args) throws Exception {
        String binary = System.getProperty("binlogd");
        Checks checks = new Checks();
        long started = System.nanoTime();
        try {
            run(binary, checks);
        } catch (Throwable error) {
            error.printStackTrace(System.out);
            checks.check("the harness ran to its end", false, error.toString());
        }
        System.out.printf("debezium harness: %.1f s%n", (System.nanoTime() - started) / 1e9);
        checks.finish();
    }

    static Map<String, String> row(Object... namesAndValues) {
        Map<String, String> row = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            Object value = namesAndValues[i + 1];
            row.put((String) namesAndValues[i], value == null ? null : value.toString());
        }
        return row;
    }

    static Map<String, String> sbtest(int id, int k, String c) {
        return row("id", id, "k", k, "c", c, "pad", "pad-" + id);
    }

    static String sbtestC(int id) {
        return "c-" + id + "-" + "0123456789".repeat(3);
    }

    private static void run(String binary, Checks checks) throws Exception {
        try (Binlogd server = new Binlogd(binary, "debezium")) {
            List<String> setup = new ArrayList<>(List.of("CREATE DATABASE cdc",
                    "CREATE TABLE cdc.sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT '0',"
                            + " c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k))",
                    "CREATE TABLE cdc.items (id INT NOT NULL, name VARCHAR(40), qty BIGINT, PRIMARY KEY (id))",
                    TypedColumns.createTable("cdc.types"),
                    "CREATE TABLE cdc.big (id INT NOT NULL, note LONGTEXT, PRIMARY KEY (id))",
                    "CREATE TABLE cdc.crash (id INT NOT NULL, note VARCHAR(20), PRIMARY KEY (id))",
                    "INSERT INTO cdc.items VALUES (1, 'pen', 7), (2, NULL, NULL)",
                    TypedColumns.insert("cdc.types", 1, true), "INSERT INTO cdc.types (id) VALUES (2)"));
            for (int id = 1; id <= SBTEST_ROWS; id++) {
                setup.add("INSERT INTO cdc.sbtest1 VALUES (" + id + ", " + id * 10 + ", '" + sbtestC(id) + "', 'pad-" + id + "')");
            }
            server.execute(setup.toArray(String[]::new));

            try (Capture capture = new Capture(server.port, "cdc")) {
                Stream stream = new Stream(capture);
                snapshot(stream, checks);
                Workload workload = new Workload(server);
                streaming(server, workload, stream, checks);
                restart(server, workload, stream, checks);
                crash(server, stream, checks);
            }
        }
    }

    /** Collects the records the connector emits, in order. */
    static final class Stream {
        final Capture capture;
        final List<SourceRecord> records = new ArrayList<>();

        Stream(Capture capture) {
            this.capture = capture;
        }

        List<Change> changes() {
            return records.stream().map(record -> Change.of(record, PREFIX)).filter(c -> c != null).toList();
        }

        /** Waits (up to `seconds`) until `done` holds for the change events so far. */
        List<Change> awaitChanges(java.util.function.Predicate<List<Change>> done, int seconds) throws InterruptedException {
            long deadline = System.nanoTime() + seconds * 1_000_000_000L;
            while (!done.test(changes()) && System.nanoTime() < deadline) {
                records.addAll(capture.await(batch -> !batch.isEmpty(), 1));
            }
            return changes();
        }

        List<String> ddl() {
            List<String> statements = new ArrayList<>();
            for (SourceRecord record : records) {
                if (record.topic().equals(PREFIX) && record.value() instanceof Struct value) {
                    statements.add(value.getString("ddl"));
                }
            }
            return statements;
        }
    }

    private static void snapshot(Stream stream, Checks checks) throws InterruptedException {
        int rows = SBTEST_ROWS + 2 + 2;
        List<Change> changes = stream.awaitChanges(all -> all.size() >= rows, 180);
        checks.equal("snapshot: one read event per row", rows, changes.size());
        checks.check("snapshot: every event is a read (op r) without a before image",
                changes.stream().allMatch(c -> c.op().equals("r") && c.before() == null), changes.toString());
        Map<String, List<Map<String, String>>> byTable = new HashMap<>();
        for (Change change : changes) {
            byTable.computeIfAbsent(change.table(), t -> new ArrayList<>()).add(change.after());
        }
        byTable.values().forEach(list -> list.sort(Comparator.comparing(r -> Integer.parseInt(r.get("id")))));
        List<Map<String, String>> sbtest = new ArrayList<>();
        for (int id = 1; id <= SBTEST_ROWS; id++) {
            sbtest.add(sbtest(id, id * 10, sbtestC(id)));
        }
        checks.equal("snapshot: cdc.sbtest1 rows", sbtest, byTable.get("sbtest1"));
        checks.equal("snapshot: cdc.items rows", List.of(row("id", 1, "name", "pen", "qty", 7), row("id", 2, "name", null, "qty", null)),
                byTable.get("items"));
        List<Map<String, String>> types = byTable.getOrDefault("types", List.of());
        checks.equal("snapshot: cdc.types row of first values", TypedColumns.expected(1, true), types.isEmpty() ? null : types.get(0));
        System.out.println(types);
        checks.equal("snapshot: cdc.types row of NULLs", TypedColumns.nulls(2), types.size() < 2 ? null : types.get(1));
        stream.records.clear();
    }

    private static void streaming(Binlogd server, Workload workload, Stream stream, Checks checks) throws Exception {
        Map<String, String> pen = row("id", 1, "name", "pen", "qty", 7);
        Map<String, String> quill = row("id", 1, "name", "quill", "qty", 8);
        Map<String, String> nothing = row("id", 2, "name", null, "qty", null);
        Map<String, String> ink = row("id", 3, "name", "ink", "qty", 9000000000L);
        Map<String, String> nib = row("id", 4, "name", "nib", "qty", -1);
        workload.transaction(List.of(Workload.insert("items", ink), Workload.insert("items", nib)),
                "INSERT INTO cdc.items VALUES (3, 'ink', 9000000000), (4, 'nib', -1)");
        workload.transaction(List.of(Workload.update("items", pen, quill)),
                "UPDATE cdc.items SET name = 'quill', qty = qty + 1 WHERE id = 1");
        workload.transaction(List.of(Workload.delete("items", nothing)), "DELETE FROM cdc.items WHERE id = 2");
        // A multi-statement transaction over every type.
        workload.transaction(List.of(Workload.insert("types", TypedColumns.expected(3, false)),
                Workload.update("types", TypedColumns.expected(1, true), TypedColumns.expected(1, false)),
                Workload.update("types", TypedColumns.nulls(2), TypedColumns.expected(2, true)),
                Workload.delete("types", TypedColumns.expected(3, false))),
                "BEGIN", TypedColumns.insert("cdc.types", 3, false), TypedColumns.update("cdc.types", 1, false),
                TypedColumns.update("cdc.types", 2, true),
                "DELETE FROM cdc.types WHERE id = 3", "COMMIT");
        // sysbench's oltp_write_only transaction, as its Lua script sends it.
        int id = 5;
        workload.transaction(
                List.of(Workload.update("sbtest1", sbtest(id, 50, sbtestC(id)), sbtest(id, 51, sbtestC(id))),
                        Workload.update("sbtest1", sbtest(id + 1, 60, sbtestC(id + 1)), sbtest(id + 1, 60, "changed")),
                        Workload.delete("sbtest1", sbtest(id + 2, 70, sbtestC(id + 2))),
                        Workload.insert("sbtest1", row("id", id + 2, "k", 71, "c", "reinserted", "pad", "pad-" + (id + 2)))),
                "BEGIN", "UPDATE cdc.sbtest1 SET k = k + 1 WHERE id = " + id, "UPDATE cdc.sbtest1 SET c = 'changed' WHERE id = " + (id + 1),
                "DELETE FROM cdc.sbtest1 WHERE id = " + (id + 2),
                "INSERT INTO cdc.sbtest1 (id, k, c, pad) VALUES (" + (id + 2) + ", 71, 'reinserted', 'pad-" + (id + 2) + "')", "COMMIT");
        // DDL: Debezium parses each Query event with its own MySQL grammar
        // and applies it to its schema history.
        String create = "CREATE TABLE cdc.later (id INT NOT NULL PRIMARY KEY, v VARCHAR(8), n DECIMAL(5,1) DEFAULT '1.5')";
        String drop = "DROP TABLE cdc.doomed";  // Debezium prints it back quoted
        workload.transaction(List.of(), create);
        workload.transaction(List.of(Workload.insert("later", row("id", 1, "v", "new", "n", "1.5"))),
                "INSERT INTO cdc.later (id, v) VALUES (1, 'new')");
        workload.transaction(List.of(), "CREATE TABLE cdc.doomed (id INT NOT NULL PRIMARY KEY)");
        workload.transaction(List.of(), drop);
        workload.transaction(List.of(), "CREATE TABLE cdc.doomed (id BIGINT NOT NULL PRIMARY KEY, s VARCHAR(3))");
        workload.transaction(List.of(Workload.insert("doomed", row("id", 5000000000L, "s", "two"))),
                "INSERT INTO cdc.doomed VALUES (5000000000, 'two')");
        // A rotation: the next transaction is in the next file.
        server.execute("FLUSH BINARY LOGS");
        workload.transaction(List.of(Workload.update("items", row("id", 4, "name", "nib", "qty", -1),
                row("id", 4, "name", "rotated", "qty", -1))), "UPDATE cdc.items SET name = 'rotated' WHERE id = 4");
        // A large transaction, promoted to its own binlog file.
        server.execute("SET GLOBAL binlog_large_transaction_optimization_threshold = 10485760");
        List<Expected> large = new ArrayList<>();
        List<String> statements = new ArrayList<>(List.of("BEGIN"));
        for (int row = 1; row <= LARGE_ROWS; row++) {
            large.add(Workload.insert("big", row("id", row, "note", ("" + (char) ('a' + row % 26)).repeat(LARGE_TEXT_BYTES))));
            statements.add("INSERT INTO cdc.big VALUES (" + row + ", REPEAT('" + (char) ('a' + row % 26) + "', " + LARGE_TEXT_BYTES + "))");
        }
        statements.add("COMMIT");
        workload.transaction(large, statements.toArray(String[]::new));
        checks.equal("the large transaction was promoted", "1",
                server.column("SHOW GLOBAL STATUS LIKE 'binlog_large_transaction_optimization_count'").isEmpty() ? null
                        : statusValue(server, "binlog_large_transaction_optimization_count"));
        workload.transaction(List.of(Workload.delete("items", row("id", 3, "name", "ink", "qty", 9000000000L))),
                "DELETE FROM cdc.items WHERE id = 3");

        compareStream(server, workload, stream, checks, "streaming");
        List<String> ddl = stream.ddl();
        checks.check("streaming: CREATE TABLE and DROP TABLE reached Debezium's schema history as schema changes",
                ddl.contains(create) && ddl.stream().anyMatch(d -> d.equals(drop) || d.equals("DROP TABLE `cdc`.`doomed`")), ddl.toString());
        stream.records.clear();
        workload.events.clear();
    }

    static String statusValue(Binlogd server, String name) throws SQLException {
        try (Connection connection = server.connect(); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SHOW GLOBAL STATUS LIKE '" + name + "'")) {
            return rows.next() ? rows.getString(2) : null;
        }
    }

    /** Waits for every expected event and compares them, in order, with what the connector emitted. */
    static void compareStream(Binlogd server, Workload workload, Stream stream, Checks checks, String phase) throws Exception {
        List<Expected> expected = workload.events;
        List<Change> changes = stream.awaitChanges(all -> all.size() >= expected.size(), 180);
        // Give a duplicate the chance to show up.
        Binlogd.sleep(1000);
        changes = stream.awaitChanges(all -> true, 0);
        checks.equal(phase + ": one change event per changed row", expected.size(), changes.size());
        Map<String, Located> binlog = binlogTransactions(server);
        int mismatched = 0;
        long previousPos = -1;
        String previousGtid = null;
        for (int i = 0; i < Math.min(expected.size(), changes.size()); i++) {
            Expected want = expected.get(i);
            Change got = changes.get(i);
            Located at = binlog.get(want.gtid());
            // source.pos is the position of the Rows event that holds the
            // row: one of the transaction's on the row's table, in order.
            boolean pos = false;
            if (at != null) {
                for (int e = 0; e < at.rowsEvents().size(); e++) {
                    pos |= at.rowsEvents().get(e)[0] == got.pos() && want.table().equals(at.tables().get(e));
                }
                pos &= !want.gtid().equals(previousGtid) || got.pos() >= previousPos;
            }
            previousPos = got.pos();
            previousGtid = want.gtid();
            boolean same = want.table().equals(got.table()) && want.op().equals(got.op()) && java.util.Objects.equals(want.before(), got.before())
                    && java.util.Objects.equals(want.after(), got.after()) && want.gtid().equals(got.gtid()) && at != null
                    && at.file().equals(got.file()) && pos;
            if (!same && mismatched++ < 5) {
                checks.check(phase + ": event " + i, false, want.table() + " " + want.op() + " " + want.gtid() + " in "
                        + (at == null ? "?" : at.file() + " rows events at " + at.rowsEvents().stream().map(p -> Long.toString(p[0])).toList())
                        + "\n     got " + got.table() + " " + got.op() + " " + got.gtid() + " at " + got.file()
                        + ":" + got.pos() + "\n     before:" + Checks.difference(want.before(), got.before()) + "\n     after:"
                        + Checks.difference(want.after(), got.after()));
            }
        }
        checks.check(phase + ": every event's table, op, before, after, source.gtid, source.file and source.pos as expected",
                mismatched == 0, mismatched + " events differ");
    }

    /** A transaction in the binlog: its file and its rows events' positions and tables. */
    record Located(String file, List<long[]> rowsEvents, List<String> tables) {
    }

    /**
     * Every GTID's transaction in the binlog, from SHOW BINARY LOGS and SHOW
     * BINLOG EVENTS: the file and, for each Write/Update/Delete_rows event,
     * its position and the table its Table_map names.
     */
    static Map<String, Located> binlogTransactions(Binlogd server) throws SQLException {
        Map<String, Located> transactions = new HashMap<>();
        try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
            List<String> files = new ArrayList<>();
            try (ResultSet rows = statement.executeQuery("SHOW BINARY LOGS")) {
                while (rows.next()) {
                    files.add(rows.getString(1));
                }
            }
            for (String file : files) {
                Located current = null;
                Map<String, String> tableIds = new HashMap<>();
                try (ResultSet rows = statement.executeQuery("SHOW BINLOG EVENTS IN '" + file + "' LIMIT 10000")) {
                    while (rows.next()) {
                        String type = rows.getString("Event_type");
                        String info = rows.getString("Info");
                        if (type.equals("Gtid")) {
                            current = new Located(file, new ArrayList<>(), new ArrayList<>());
                            transactions.put(info.substring(info.indexOf('\'') + 1, info.lastIndexOf('\'')), current);
                        } else if (type.equals("Table_map")) {
                            // "table_id: N (db.table)"
                            String id = info.substring(info.indexOf(':') + 1).trim().split("\\s+")[0];
                            String name = info.substring(info.indexOf('(') + 1, info.lastIndexOf(')'));
                            tableIds.put(id, name.substring(name.indexOf('.') + 1));
                        } else if (type.endsWith("_rows") && current != null) {
                            // "table_id: N" and, on a statement's last, "flags: STMT_END_F"
                            String id = info.substring(info.indexOf(':') + 1).trim().split("\\s+")[0];
                            current.rowsEvents().add(new long[] {rows.getLong("Pos")});
                            current.tables().add(tableIds.get(id));
                        }
                    }
                }
            }
        }
        return transactions;
    }

    private static void restart(Binlogd server, Workload workload, Stream stream, Checks checks) throws Exception {
        // SIGTERM, then writes while the connector reconnects.
        server.stop();
        server.start();
        workload.transaction(List.of(Workload.insert("items", row("id", 20, "name", "after restart", "qty", 20))),
                "INSERT INTO cdc.items (id, name, qty) VALUES (20, 'after restart', 20)");
        workload.transaction(List.of(Workload.update("later", row("id", 1, "v", "new", "n", "1.5"), row("id", 1, "v", "again", "n", "1.5"))),
                "UPDATE cdc.later SET v = 'again' WHERE id = 1");
        compareStream(server, workload, stream, checks, "after a restart of binlogd");
        stream.records.clear();
    }

    /**
     * kill -9 of binlogd while a writer commits row after row: after the
     * restart, the connector's events for cdc.crash, deduplicated by GTID,
     * are exactly the committed transactions (the rows in the table and the
     * GTIDs the server executed), and every acknowledged commit is among them.
     */
    private static void crash(Binlogd server, Stream stream, Checks checks) throws Exception {
        int firstGtid;
        String uuid;
        try (Connection connection = server.connect()) {
            String last = Workload.lastGtid(connection);
            uuid = last.substring(0, last.indexOf(':'));
            firstGtid = Integer.parseInt(last.substring(last.indexOf(':') + 1)) + 1;
        }
        Set<Integer> acknowledged = java.util.Collections.synchronizedSet(new TreeSet<>());
        AtomicInteger next = new AtomicInteger(1);
        Thread writer = new Thread(() -> {
            try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
                while (true) {
                    int id = next.getAndIncrement();
                    statement.execute("INSERT INTO cdc.crash VALUES (" + id + ", 'before kill')");
                    acknowledged.add(id);
                }
            } catch (SQLException expected) {
                // The server went away.
            }
        });
        writer.start();
        while (acknowledged.size() < 40) {
            Binlogd.sleep(5);
        }
        server.kill();
        writer.join();
        server.start();
        int after = next.get() + 1;
        for (int id = after; id < after + 5; id++) {
            server.execute("INSERT INTO cdc.crash VALUES (" + id + ", 'after kill')");
        }
        List<Integer> committed = server.column("SELECT id FROM cdc.crash ORDER BY id").stream().map(Integer::parseInt).toList();
        int lastGtid;
        try (Connection connection = server.connect()) {
            String last = Workload.lastGtid(connection);
            lastGtid = Integer.parseInt(last.substring(last.indexOf(':') + 1));
        }
        checks.check("kill -9: every acknowledged commit survived", committed.containsAll(acknowledged),
                "acknowledged " + acknowledged + ", table " + committed);
        checks.equal("kill -9: one GTID per committed row", committed.size(), lastGtid - firstGtid + 1);
        Set<Integer> committedSet = new HashSet<>(committed);
        List<Change> changes = stream.awaitChanges(all -> all.stream().filter(c -> c.table().equals("crash")).map(Change::gtid)
                .collect(Collectors.toSet()).size() >= committedSet.size(), 180);
        Map<String, List<String>> byGtid = new LinkedHashMap<>();
        for (Change change : changes) {
            if (change.table().equals("crash")) {
                byGtid.putIfAbsent(change.gtid(), new ArrayList<>());
                List<String> seen = byGtid.get(change.gtid());
                String id = change.after() == null ? "?" : change.after().get("id");
                if (!seen.contains(id)) {
                    seen.add(id);
                }
            }
        }
        Set<String> expectedGtids = new TreeSet<>();
        for (int n = firstGtid; n <= lastGtid; n++) {
            expectedGtids.add(uuid + ":" + n);
        }
        checks.equal("kill -9: the events' GTIDs are the executed GTIDs", expectedGtids, new TreeSet<>(byGtid.keySet()));
        List<Integer> emitted = byGtid.values().stream().flatMap(List::stream).map(Integer::parseInt).sorted().toList();
        checks.equal("kill -9: the events, deduplicated by GTID, are the committed rows once each", committed, emitted);
        checks.check("kill -9: every event is an insert with the row's values", changes.stream().filter(c -> c.table().equals("crash"))
                .allMatch(c -> c.op().equals("c") && c.after().get("note").equals(Integer.parseInt(c.after().get("id")) < after
                        ? "before kill" : "after kill")), "");
    }
}
