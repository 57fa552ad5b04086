package binlogd.interop.connectorj;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import binlogd.interop.common.Binlogd;
import binlogd.interop.common.Checks;

/**
 * MySQL Connector/J against binlogd, as JDBC applications, ORMs and
 * migration tools use it: a login with the driver's defaults and one with
 * a password, server-side and client-side prepared statements, rewritten
 * batches, a streaming result set, generated keys, transactions with
 * savepoints, and DatabaseMetaData. Run: `run.sh PATH/TO/binlogd`; prints
 * `N passed, M failed`.
 */
public final class Harness {
    private static final int STREAMED_ROWS = 20_000;

    public static void main(String[] args) throws Exception {
        Checks checks = new Checks();
        long started = System.nanoTime();
        try (Binlogd server = new Binlogd(System.getProperty("binlogd"), "connector-j")) {
            run(server, checks);
        } catch (Throwable error) {
            error.printStackTrace(System.out);
            checks.check("the harness ran to its end", false, error.toString());
        }
        System.out.printf("connector-j harness: %.1f s%n", (System.nanoTime() - started) / 1e9);
        checks.finish();
    }

    interface Step {
        void run() throws Exception;
    }

    /** One check that a thrown error fails rather than ending the harness. */
    static void step(Checks checks, String name, Step step) {
        try {
            step.run();
        } catch (Throwable error) {
            error.printStackTrace(System.out);
            checks.check(name, false, error.toString());
        }
    }

    private static void run(Binlogd server, Checks checks) throws Exception {
        server.execute("CREATE DATABASE app", "CREATE TABLE app.person (id BIGINT NOT NULL AUTO_INCREMENT, name VARCHAR(40) NOT NULL,"
                + " born DATE, score DECIMAL(8,2), photo VARBINARY(16), seen DATETIME(3), PRIMARY KEY (id), KEY by_name (name))",
                "CREATE USER 'app'@'%' IDENTIFIED BY 'app-secret'", "GRANT ALL ON app.* TO 'app'@'%'");

        step(checks, "defaults", () -> defaults(server, checks));
        for (boolean serverSide : new boolean[] {true, false}) {
            step(checks, "prepared", () -> prepared(server, checks, serverSide));
        }
        step(checks, "batches", () -> batches(server, checks));
        step(checks, "streaming", () -> streaming(server, checks));
        step(checks, "generated keys", () -> generatedKeys(server, checks));
        step(checks, "savepoints", () -> savepoints(server, checks));
        step(checks, "metadata", () -> metadata(server, checks));
    }

    /**
     * The driver's defaults (sslMode PREFERRED, caching_sha2_password asked
     * first): root without a password, then an account with one, whose
     * password over a plain connection needs the server's RSA key
     * (allowPublicKeyRetrieval) when the plugin is caching_sha2_password.
     */
    private static void defaults(Binlogd server, Checks checks) throws Exception {
        try (Connection connection = server.connect("user=root")) {
            DatabaseMetaData meta = connection.getMetaData();
            checks.check("defaults: root logs in; the server is MySQL 8.4", meta.getDatabaseProductVersion().startsWith("8.4")
                    && meta.getDatabaseMajorVersion() == 8, meta.getDatabaseProductVersion());
            try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery("SELECT CURRENT_USER(), 1 + 1")) {
                rows.next();
                checks.equal("defaults: a query", "root@localhost 2", rows.getString(1) + " " + rows.getInt(2));
            }
        }
        try (Connection connection = server.connectTo("app", "user=app&password=app-secret&allowPublicKeyRetrieval=true");
                Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery("SELECT DATABASE(), CURRENT_USER()")) {
            rows.next();
            checks.equal("defaults: an account with a password logs in", "app app@%", rows.getString(1) + " " + rows.getString(2));
        }
        // The password sent inside TLS, then over a plain connection, where
        // caching_sha2_password encrypts it with the server's RSA key: an
        // account of its own for each, so each login is the account's first
        // and takes the full authentication rather than the cached fast path.
        for (String sslMode : new String[] {"REQUIRED", "DISABLED"}) {
            String user = "login_" + sslMode.toLowerCase();
            server.execute("CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw-" + sslMode + "'");
            try (Connection connection = server.connect("user=" + user + "&password=pw-" + sslMode + "&allowPublicKeyRetrieval=true&sslMode=" + sslMode);
                    Statement statement = connection.createStatement();
                    ResultSet rows = statement.executeQuery("SHOW SESSION STATUS LIKE 'Ssl_cipher'")) {
                rows.next();
                checks.equal("sslMode=" + sslMode + ": an account with a password logs in, over TLS: " + sslMode.equals("REQUIRED"),
                        sslMode.equals("REQUIRED"), !rows.getString(2).isEmpty());
            }
        }
        try (Connection connection = server.connect("user=app&password=wrong&allowPublicKeyRetrieval=true")) {
            checks.check("defaults: a wrong password is refused", false, "logged in");
        } catch (SQLException refused) {
            checks.equal("defaults: a wrong password is refused with 1045 28000", "1045 28000", refused.getErrorCode() + " " + refused.getSQLState());
        }
    }

    private static void prepared(Binlogd server, Checks checks, boolean serverSide) throws Exception {
        String mode = serverSide ? "server-side prepare" : "client-side prepare";
        String table = serverSide ? "app.ssp" : "app.csp";
        server.execute("CREATE TABLE " + table + " (id INT NOT NULL PRIMARY KEY, name VARCHAR(40), born DATE, score DECIMAL(8,2),"
                + " photo VARBINARY(16), seen DATETIME(3), big BIGINT UNSIGNED, ratio DOUBLE)");
        String properties = "user=root&useServerPrepStmts=" + serverSide + "&cachePrepStmts=true";
        try (Connection connection = server.connect(properties)) {
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + table + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
                for (int id = 1; id <= 3; id++) {
                    insert.setInt(1, id);
                    insert.setString(2, id == 2 ? null : "n\u00e4me " + id + " '\"\\");
                    insert.setObject(3, LocalDate.of(2000 + id, id, 28));
                    insert.setBigDecimal(4, new BigDecimal("-123456.7" + id));
                    insert.setBytes(5, new byte[] {0, (byte) 0xff, (byte) id});
                    insert.setObject(6, LocalDateTime.of(2024, 1, id, 3, 4, 5, 123_000_000));
                    insert.setString(7, "18446744073709551615");
                    insert.setDouble(8, id / 4.0);
                    checks.equal(mode + ": insert " + id + " changes one row", 1, insert.executeUpdate());
                }
            }
            try (PreparedStatement select = connection.prepareStatement("SELECT * FROM " + table + " WHERE id >= ? AND (name IS NULL OR name LIKE ?) ORDER BY id")) {
                select.setInt(1, 2);
                select.setString(2, "n%");
                try (ResultSet rows = select.executeQuery()) {
                    List<String> seen = new ArrayList<>();
                    while (rows.next()) {
                        seen.add(rows.getInt("id") + "|" + rows.getString("name") + "|" + rows.getObject("born", LocalDate.class) + "|"
                                + rows.getBigDecimal("score") + "|" + Arrays.toString(rows.getBytes("photo")) + "|"
                                + rows.getObject("seen", LocalDateTime.class) + "|" + rows.getString("big") + "|" + rows.getDouble("ratio"));
                    }
                    checks.equal(mode + ": the rows read back with their types", List.of(
                            "2|null|2002-02-28|-123456.72|[0, -1, 2]|2024-01-02T03:04:05.123|18446744073709551615|0.5",
                            "3|n\u00e4me 3 '\"\\|2003-03-28|-123456.73|[0, -1, 3]|2024-01-03T03:04:05.123|18446744073709551615|0.75"), seen);
                }
                // The same statement again, with other parameters.
                select.setInt(1, 1);
                select.setString(2, "none");
                try (ResultSet rows = select.executeQuery()) {
                    checks.check(mode + ": a re-executed statement binds its new parameters", rows.next() && rows.getInt(1) == 2 && !rows.next(), "");
                }
            }
            // BIGINT UNSIGNED above 2^63-1: a BigInteger by the column's
            // UNSIGNED flag, as the stored column and as computed by MAX().
            try (PreparedStatement select = connection.prepareStatement("SELECT big, MAX(big), big - 1 FROM " + table + " WHERE id = ? GROUP BY big")) {
                select.setInt(1, 1);
                try (ResultSet rows = select.executeQuery()) {
                    rows.next();
                    Object big = rows.getObject(1);
                    Object max = rows.getObject(2);
                    Object less = rows.getObject(3);
                    checks.equal(mode + ": BIGINT UNSIGNED reads as BigInteger (column, MAX(), arithmetic)",
                            "BigInteger 18446744073709551615 BigInteger 18446744073709551615 BigInteger 18446744073709551614",
                            big.getClass().getSimpleName() + " " + big + " " + max.getClass().getSimpleName() + " " + max + " "
                                    + less.getClass().getSimpleName() + " " + less);
                    checks.equal(mode + ": BIGINT UNSIGNED's metadata", "BIGINT UNSIGNED java.math.BigInteger false",
                            rows.getMetaData().getColumnTypeName(1) + " " + rows.getMetaData().getColumnClassName(1) + " "
                                    + rows.getMetaData().isSigned(1));
                }
            }
            try (PreparedStatement bad = connection.prepareStatement("INSERT INTO " + table + " (id) VALUES (?)")) {
                bad.setInt(1, 1);
                bad.executeUpdate();
                checks.check(mode + ": a duplicate key is refused", false, "inserted");
            } catch (SQLException duplicate) {
                checks.equal(mode + ": a duplicate key is refused with 1062 23000", "1062 23000", duplicate.getErrorCode() + " " + duplicate.getSQLState());
            }
        }
    }

    private static void batches(Binlogd server, Checks checks) throws Exception {
        server.execute("CREATE TABLE app.batch (id INT NOT NULL PRIMARY KEY, v VARCHAR(20))");
        try (Connection connection = server.connect("user=root&rewriteBatchedStatements=true");
                PreparedStatement insert = connection.prepareStatement("INSERT INTO app.batch (id, v) VALUES (?, ?)")) {
            for (int id = 1; id <= 500; id++) {
                insert.setInt(1, id);
                insert.setString(2, "v" + id);
                insert.addBatch();
            }
            int[] counts = insert.executeBatch();
            checks.equal("rewriteBatchedStatements: one count per batched row", 500, counts.length);
            checks.check("rewriteBatchedStatements: every count is success", Arrays.stream(counts).allMatch(c -> c == 1 || c == Statement.SUCCESS_NO_INFO),
                    Arrays.toString(counts));
            try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery("SELECT COUNT(*), SUM(id) FROM app.batch")) {
                rows.next();
                checks.equal("rewriteBatchedStatements: the rows are in the table", "500 125250", rows.getLong(1) + " " + rows.getLong(2));
            }
            try (Statement statement = connection.createStatement()) {
                statement.addBatch("UPDATE app.batch SET v = 'odd' WHERE id % 2 = 1");
                statement.addBatch("DELETE FROM app.batch WHERE id > 400");
                checks.equal("rewriteBatchedStatements: a statement batch's counts", "[250, 100]", Arrays.toString(statement.executeBatch()));
            }
        }
    }

    /** setFetchSize(Integer.MIN_VALUE): rows one at a time as the server sends them. */
    private static void streaming(Binlogd server, Checks checks) throws Exception {
        server.execute("CREATE TABLE app.many (id INT NOT NULL PRIMARY KEY, pad VARCHAR(100))");
        try (Connection connection = server.connect("user=root&rewriteBatchedStatements=true")) {
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO app.many VALUES (?, ?)")) {
                for (int id = 1; id <= STREAMED_ROWS; id++) {
                    insert.setInt(1, id);
                    insert.setString(2, "p".repeat(id % 100));
                    insert.addBatch();
                }
                insert.executeBatch();
            }
            try (Statement statement = connection.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
                statement.setFetchSize(Integer.MIN_VALUE);
                long count = 0;
                long sum = 0;
                boolean ordered = true;
                try (ResultSet rows = statement.executeQuery("SELECT id, pad FROM app.many ORDER BY id")) {
                    while (rows.next()) {
                        count++;
                        ordered &= rows.getInt(1) == count && rows.getString(2).length() == count % 100;
                        sum += rows.getInt(1);
                    }
                }
                checks.equal("streaming result set: every row, in order", STREAMED_ROWS + " " + (long) STREAMED_ROWS * (STREAMED_ROWS + 1) / 2 + " true",
                        count + " " + sum + " " + ordered);
            }
            // The connection is usable again once the stream is closed.
            try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery("SELECT COUNT(*) FROM app.many")) {
                rows.next();
                checks.equal("streaming result set: the connection serves the next query", STREAMED_ROWS, rows.getInt(1));
            }
        }
    }

    private static void generatedKeys(Binlogd server, Checks checks) throws Exception {
        try (Connection connection = server.connect("user=root")) {
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO app.person (name) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
                insert.setString(1, "ada");
                insert.executeUpdate();
                try (ResultSet keys = insert.getGeneratedKeys()) {
                    checks.check("getGeneratedKeys: the AUTO_INCREMENT id of an insert", keys.next() && keys.getLong(1) == 1 && !keys.next(), "");
                }
            }
            try (Statement statement = connection.createStatement()) {
                statement.executeUpdate("INSERT INTO app.person (name) VALUES ('bob'), ('cy'), ('di')", Statement.RETURN_GENERATED_KEYS);
                List<Long> ids = new ArrayList<>();
                try (ResultSet keys = statement.getGeneratedKeys()) {
                    while (keys.next()) {
                        ids.add(keys.getLong(1));
                    }
                }
                checks.equal("getGeneratedKeys: the ids of a multi-row insert", List.of(2L, 3L, 4L), ids);
            }
        }
    }

    private static void savepoints(Binlogd server, Checks checks) throws Exception {
        server.execute("CREATE TABLE app.ledger (id INT NOT NULL PRIMARY KEY, amount INT)");
        try (Connection connection = server.connect("user=root")) {
            connection.setAutoCommit(false);
            try (Statement statement = connection.createStatement()) {
                statement.executeUpdate("INSERT INTO app.ledger VALUES (1, 10)");
                Savepoint first = connection.setSavepoint("first");
                statement.executeUpdate("INSERT INTO app.ledger VALUES (2, 20)");
                Savepoint second = connection.setSavepoint();
                statement.executeUpdate("INSERT INTO app.ledger VALUES (3, 30)");
                connection.rollback(second);
                connection.releaseSavepoint(first);
                connection.commit();
                statement.executeUpdate("INSERT INTO app.ledger VALUES (4, 40)");
                connection.rollback();
            }
            connection.setAutoCommit(true);
        }
        checks.equal("savepoints: rollback to a savepoint, release, commit, rollback", List.of("1", "2"),
                server.column("SELECT id FROM app.ledger ORDER BY id"));
    }

    /** What ORMs and migration tools read: tables, columns with their types, primary keys. */
    private static void metadata(Binlogd server, Checks checks) throws Exception {
        try (Connection connection = server.connect("user=root&databaseTerm=SCHEMA")) {
            DatabaseMetaData meta = connection.getMetaData();
            List<String> tables = new ArrayList<>();
            try (ResultSet rows = meta.getTables(null, "app", "%", new String[] {"TABLE"})) {
                while (rows.next()) {
                    tables.add(rows.getString("TABLE_SCHEM") + "." + rows.getString("TABLE_NAME") + ":" + rows.getString("TABLE_TYPE"));
                }
            }
            checks.equal("getTables", List.of("app.batch:TABLE", "app.csp:TABLE", "app.ledger:TABLE", "app.many:TABLE", "app.person:TABLE",
                    "app.ssp:TABLE"), tables);
            List<String> columns = new ArrayList<>();
            try (ResultSet rows = meta.getColumns(null, "app", "person", "%")) {
                while (rows.next()) {
                    columns.add(rows.getString("COLUMN_NAME") + " " + rows.getString("TYPE_NAME") + "(" + rows.getInt("COLUMN_SIZE") + ","
                            + rows.getInt("DECIMAL_DIGITS") + ") jdbc " + rows.getInt("DATA_TYPE") + " nullable " + rows.getString("IS_NULLABLE")
                            + " auto " + rows.getString("IS_AUTOINCREMENT") + " #" + rows.getInt("ORDINAL_POSITION"));
                }
            }
            checks.equal("getColumns", List.of("id BIGINT(19,0) jdbc -5 nullable NO auto YES #1", "name VARCHAR(40,0) jdbc 12 nullable NO auto NO #2",
                    "born DATE(10,0) jdbc 91 nullable YES auto NO #3", "score DECIMAL(8,2) jdbc 3 nullable YES auto NO #4",
                    "photo VARBINARY(16,0) jdbc -3 nullable YES auto NO #5", "seen DATETIME(23,0) jdbc 93 nullable YES auto NO #6"), columns);
            List<String> keys = new ArrayList<>();
            try (ResultSet rows = meta.getPrimaryKeys(null, "app", "person")) {
                while (rows.next()) {
                    keys.add(rows.getString("COLUMN_NAME") + " " + rows.getShort("KEY_SEQ") + " " + rows.getString("PK_NAME"));
                }
            }
            checks.equal("getPrimaryKeys", List.of("id 1 PRIMARY"), keys);
            List<String> indexes = new ArrayList<>();
            try (ResultSet rows = meta.getIndexInfo(null, "app", "person", false, false)) {
                while (rows.next()) {
                    indexes.add(rows.getString("INDEX_NAME") + " " + rows.getString("COLUMN_NAME") + " unique " + !rows.getBoolean("NON_UNIQUE"));
                }
            }
            checks.equal("getIndexInfo", List.of("PRIMARY id unique true", "by_name name unique false"), indexes);
        }
        // The driver's default databaseTerm=CATALOG, as Hibernate and Flyway
        // leave it: the database is the catalog and there are no schemas.
        try (Connection connection = server.connect("user=root")) {
            DatabaseMetaData meta = connection.getMetaData();
            List<String> seen = new ArrayList<>();
            try (ResultSet rows = meta.getTables("app", null, "per%", null)) {
                while (rows.next()) {
                    seen.add("table " + rows.getString("TABLE_CAT") + "." + rows.getString("TABLE_NAME") + ":" + rows.getString("TABLE_TYPE"));
                }
            }
            try (ResultSet rows = meta.getColumns("app", null, "person", "s%")) {
                while (rows.next()) {
                    seen.add("column " + rows.getString("COLUMN_NAME") + " " + rows.getString("TYPE_NAME"));
                }
            }
            try (ResultSet rows = meta.getPrimaryKeys("app", null, "person")) {
                while (rows.next()) {
                    seen.add("key " + rows.getString("TABLE_CAT") + "." + rows.getString("COLUMN_NAME"));
                }
            }
            checks.equal("databaseTerm=CATALOG: getTables, getColumns, getPrimaryKeys",
                    List.of("table app.person:TABLE", "column score DECIMAL", "column seen DATETIME", "key app.id"), seen);
        }
    }
}
