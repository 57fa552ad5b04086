package binlogd.interop.common;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A `binlogd serve` process on 127.0.0.1 with its own data directory, for
 * every harness under interop/ (each adds this directory to its sources).
 * The port is fixed for the object's life so that a restarted server is
 * where a connector reconnects; stopped by PID (SIGTERM, or SIGKILL for a
 * crash).
 */
public final class Binlogd implements AutoCloseable {
    private final String binary;
    private final Path dir;
    private final Path datadir;
    private final Path log;
    public final int port;
    private Process process;
    private int readyLines;

    /** Starts the server; `harness` names its temporary directory. */
    public Binlogd(String binary, String harness) throws IOException {
        this.binary = binary;
        this.dir = Files.createTempDirectory("binlogd-" + harness);
        this.datadir = dir.resolve("data");
        this.log = dir.resolve("server.log");
        try (ServerSocket socket = new ServerSocket(0)) {
            this.port = socket.getLocalPort();
        }
        start();
    }

    public void start() throws IOException {
        ProcessBuilder builder = new ProcessBuilder(binary, "serve", "--datadir", datadir.toString(), "--port",
                Integer.toString(port), "--bind=127.0.0.1");
        builder.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        builder.redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        Process started = builder.start();
        // Should the harness itself be stopped, its server goes with it.
        Runtime.getRuntime().addShutdownHook(new Thread(started::destroyForcibly));
        process = started;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            String text = Files.exists(log) ? Files.readString(log) : "";
            long ready = text.lines().filter(line -> line.contains("ready for connections")).count();
            if (ready > readyLines) {
                readyLines = (int) ready;
                return;
            }
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("binlogd did not get ready: " + text);
            }
            sleep(20);
        }
    }

    /** SIGTERM, as an operator's restart: the server closes connections and the binlog. */
    public void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("binlogd did not stop on SIGTERM");
        }
    }

    /** SIGKILL: a crash, nothing flushed beyond what was made durable. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** A root connection that may send several statements in one query. */
    public Connection connect() throws SQLException {
        return connect("user=root&password=&allowPublicKeyRetrieval=true&allowMultiQueries=true");
    }

    /** A connection with Connector/J's defaults but for the given URL properties. */
    public Connection connect(String properties) throws SQLException {
        return connectTo("", properties);
    }

    public Connection connectTo(String database, String properties) throws SQLException {
        return DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + port + "/" + database + "?" + properties);
    }

    /** Runs statements on a fresh connection. */
    public void execute(String... statements) throws SQLException {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        }
    }

    /** The first column of every row. */
    public List<String> column(String query) throws SQLException {
        List<String> values = new ArrayList<>();
        try (Connection connection = connect(); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(query)) {
            while (rows.next()) {
                values.add(rows.getString(1));
            }
        }
        return values;
    }

    public String scalar(String query) throws SQLException {
        return column(query).get(0);
    }

    public String logText() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() throws Exception {
        if (process.isAlive()) {
            stop();
        }
        deleteTree(dir.toFile());
    }

    private static void deleteTree(File file) {
        File[] children = file.listFiles();
        if (children != null) {
            for (File child : children) {
                deleteTree(child);
            }
        }
        file.delete();
    }

    public static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
