package binlogd.interop.kafkaconnect;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A main class run in a JVM of its own, on the harness's classpath, its
 * output appended to a log file: the broker and the Connect worker are
 * separate processes so that a restart is a real one (a new JVM reading
 * only what the old one left on disk and in Kafka). Stopped by PID.
 */
final class ChildJvm {
    /** Small heaps and one GC thread: the machine has two cores and other JVMs. */
    private static final List<String> JVM_OPTIONS = List.of("-Xms64m", "-Xmx512m", "-XX:+UseSerialGC",
            "-Djava.awt.headless=true");

    private final String mainClass;
    private final List<String> args;
    final Path log;
    private Process process;

    ChildJvm(String mainClass, List<String> args, Path log) {
        this.mainClass = mainClass;
        this.args = args;
        this.log = log;
    }

    void start() throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JVM_OPTIONS);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.redirectErrorStream(true);
        builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        Process started = builder.start();
        // Should the harness itself be stopped, its servers go with it.
        Runtime.getRuntime().addShutdownHook(new Thread(started::destroyForcibly));
        process = started;
    }

    /** Runs to its end (a tool such as the storage formatter); its exit status. */
    int runToEnd(long timeoutSeconds) throws IOException, InterruptedException {
        start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new IllegalStateException(mainClass + " did not end in " + timeoutSeconds + " s: " + logTail());
        }
        return process.exitValue();
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    /** SIGTERM, as an operator's restart: the JVM's shutdown hooks run. */
    void stop() throws InterruptedException {
        if (!alive()) {
            return;
        }
        process.destroy();
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new IllegalStateException(mainClass + " did not stop on SIGTERM");
        }
    }

    /** SIGKILL: a crash, nothing flushed. */
    void kill() throws InterruptedException {
        if (alive()) {
            process.destroyForcibly().waitFor();
        }
    }

    /** The log's last lines, for a failure's report. */
    String logTail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }
}
