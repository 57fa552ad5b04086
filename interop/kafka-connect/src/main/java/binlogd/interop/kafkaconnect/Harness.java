package binlogd.interop.kafkaconnect;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import binlogd.interop.common.Binlogd;
import binlogd.interop.common.Checks;

/**
 * The distributed path: Debezium's MySQL connector on a Kafka Connect
 * worker (distributed mode, its own JVM) streams binlogd's changes into a
 * one-node KRaft Kafka broker (its own JVM), and a plain kafka-clients
 * consumer checks the topics: one per table, every committed row change
 * once, in commit order per key; then again after a SIGTERM restart of
 * binlogd and after a SIGTERM restart of the Connect worker, with writes
 * made while the worker was down; and, after a kill -9 of the worker, each
 * change at least once, once each after deduplication by GTID.
 * Run: `run.sh PATH/TO/binlogd`; prints `N passed, M failed`.
 */
public final class Harness {
    static final String CONNECTOR = "binlogd-cdc";
    static final String PREFIX = "bd";
    static final String TOPIC_PREFIX = PREFIX + ".cdc.";
    static final String SCHEMA_HISTORY_TOPIC = "binlogd-schema-history";
    static final Set<String> TABLE_TOPICS = Set.of(TOPIC_PREFIX + "accounts", TOPIC_PREFIX + "orders");

    public static void main(String[] args) throws Exception {
        Checks checks = new Checks();
        long started = System.nanoTime();
        Path dir = Files.createTempDirectory("binlogd-kafka-connect");
        try {
            run(System.getProperty("binlogd"), dir, checks);
        } catch (Throwable error) {
            error.printStackTrace(System.out);
            if (checks.failed == 0) {
                checks.check("the harness ran to its end", false, error.toString());
            }
        } finally {
            deleteTree(dir.toFile());
        }
        System.out.printf("kafka-connect harness: %.1f s%n", (System.nanoTime() - started) / 1e9);
        checks.finish();
    }

    private static void run(String binary, Path dir, Checks checks) throws Exception {
        try (Binlogd server = new Binlogd(binary, "kafka-connect")) {
            server.execute("CREATE DATABASE cdc");
            Workload workload = new Workload(server);
            workload.create("accounts", "id INT NOT NULL, owner VARCHAR(40), balance BIGINT");
            workload.create("orders", "id INT NOT NULL, account INT NOT NULL, amount INT, status VARCHAR(40)");
            workload.seed("accounts", "id", 1, "owner", "ann", "balance", 1000L);
            workload.seed("accounts", "id", 2, "owner", "bob", "balance", 0L);
            workload.seed("accounts", "id", 3, "owner", null, "balance", null);
            workload.seed("orders", "id", 1, "account", 1, "amount", 30, "status", "new");
            workload.seed("orders", "id", 2, "account", 2, "amount", 5, "status", "new");

            KafkaBroker broker = new KafkaBroker(Files.createDirectory(dir.resolve("kafka")));
            ConnectWorker worker = null;
            try {
                broker.start();
                worker = new ConnectWorker(Files.createDirectory(dir.resolve("connect")), broker.bootstrap());
                worker.start();
                worker.putConnector(CONNECTOR, connectorConfig(server.port, broker.bootstrap()));
                checks.equal("the connector and its task are RUNNING on the Connect worker", "RUNNING",
                        worker.awaitRunning(CONNECTOR, 180));
                Topics topics = new Topics(broker);
                // The snapshot's read events first: a change committed before
                // the snapshot's binlog position would be read by it (op r)
                // rather than streamed.
                compare(topics, workload, checks, "snapshot");

                streaming(workload);
                compare(topics, workload, checks, "streaming");

                server.stop();
                server.start();
                afterBinlogdRestart(workload);
                compare(topics, workload, checks, "after a restart of binlogd");

                workerRestart(server, topics, worker, workload, checks);
                afterWorkerRestart(workload);
                compare(topics, workload, checks, "after a restart of the Connect worker");

                workerCrash(topics, worker, workload, checks);
            } catch (Throwable error) {
                checks.check("the harness ran to its end", false, error.toString());
                throw error;
            } finally {
                if (checks.failed > 0) {
                    System.out.println("--- Connect worker log (tail) ---\n" + (worker == null ? "" : worker.logTail()));
                    System.out.println("--- Kafka broker log (tail) ---\n" + broker.logTail());
                }
                if (worker != null) {
                    worker.stop();
                }
                broker.stop();
            }
        }
    }

    /**
     * SIGTERM of the Connect worker: its state stays in Kafka, its last
     * offset commit covers every record it sent; then writes while it is
     * down, which the restarted worker streams.
     */
    private static void workerRestart(Binlogd server, Topics topics, ConnectWorker worker, Workload workload, Checks checks)
            throws Exception {
        worker.stop();
        Set<String> all = topics.names("");
        checks.check("a stopped Connect worker's state is in Kafka: its configs, offsets and statuses, and the connector's"
                + " schema history", all.containsAll(List.of(ConnectWorker.CONFIGS_TOPIC, ConnectWorker.OFFSETS_TOPIC,
                        ConnectWorker.STATUS_TOPIC, SCHEMA_HISTORY_TOPIC)), all.toString());
        // Debezium's offset names the transactions before the one its last
        // record came from; on restart it reads that one again and skips
        // the events it had sent.
        String executed = server.scalar("SELECT @@global.gtid_executed").replace("\n", "");
        int dash = executed.lastIndexOf('-');
        checks.equal("a cleanly stopped Connect worker committed the connector's offset: every GTID binlogd executed but the"
                + " last, the transaction of its last record", executed.substring(0, dash + 1)
                        + (Long.parseLong(executed.substring(dash + 1)) - 1), topics.lastOffset(CONNECTOR).path("gtids").asText());
        workload.begin().update("accounts", 2, "balance", 77L).commit();
        workload.begin().insert("accounts", "id", 6, "owner", "written while the worker was down", "balance", 6L).commit();
        worker.start();
        checks.equal("after a restart of the Connect worker: the connector and its task are RUNNING again", "RUNNING",
                worker.awaitRunning(CONNECTOR, 180));
    }

    /** Debezium's MySQL connector as an operator registers it: schema history in a Kafka topic. */
    static Map<String, String> connectorConfig(int port, String bootstrap) {
        Map<String, String> config = new TreeMap<>();
        config.put("connector.class", "io.debezium.connector.mysql.MySqlConnector");
        config.put("tasks.max", "1");
        config.put("database.hostname", "127.0.0.1");
        config.put("database.port", Integer.toString(port));
        config.put("database.user", "root");
        config.put("database.password", "");
        config.put("database.server.id", "5401");
        config.put("topic.prefix", PREFIX);
        config.put("database.include.list", "cdc");
        config.put("snapshot.mode", "initial");
        config.put("schema.history.internal.kafka.bootstrap.servers", bootstrap);
        config.put("schema.history.internal.kafka.topic", SCHEMA_HISTORY_TOPIC);
        config.put("connect.keep.alive.interval.ms", "5000");
        // binlogd's restart is a retriable error: the task reconnects.
        config.put("errors.max.retries", "-1");
        config.put("errors.retry.delay.initial.ms", "300");
        config.put("errors.retry.delay.max.ms", "1000");
        config.put("poll.interval.ms", "50");
        return config;
    }

    private static void streaming(Workload workload) throws Exception {
        workload.begin().insert("accounts", "id", 4, "owner", "dan", "balance", 40L).commit();
        // A transaction over both tables: an order, its debit, the order paid.
        workload.begin().insert("orders", "id", 3, "account", 1, "amount", 50, "status", "new")
                .update("accounts", 1, "balance", 950L).update("orders", 1, "status", "paid").commit();
        // The same keys changed again and again, interleaved: their order is what the topics must keep.
        for (int i = 1; i <= 5; i++) {
            workload.begin().update("accounts", 2, "balance", (long) i * 10).commit();
            workload.begin().update("accounts", 3, "owner", "carol-" + i).commit();
        }
        // One statement, several rows.
        workload.begin().update("orders", List.of(1, 2, 3), "status", "shipped").commit();
        workload.begin().delete("accounts", 4).commit();
        workload.begin().insert("accounts", "id", 4, "owner", "dan again", "balance", 4L).commit();
        workload.begin().update("accounts", 4, "balance", 5L).update("accounts", 4, "balance", 6L).commit();
    }

    private static void afterBinlogdRestart(Workload workload) throws Exception {
        workload.begin().update("accounts", 1, "balance", 900L).commit();
        workload.begin().insert("orders", "id", 4, "account", 3, "amount", 12, "status", "new").delete("orders", 2).commit();
        workload.begin().insert("accounts", "id", 5, "owner", "eve", "balance", 5L).commit();
    }

    private static void afterWorkerRestart(Workload workload) throws Exception {
        workload.begin().update("accounts", 6, "balance", 66L).commit();
        workload.begin().update("orders", List.of(3, 4), "status", "delivered").update("accounts", 2, "balance", 78L).commit();
        workload.begin().delete("accounts", 5).commit();
    }

    /**
     * Reads the change topics until they hold every change the workload
     * committed (then a second more, for a duplicate to show), and
     * compares them with it, key by key: each change exactly once.
     */
    private static void compare(Topics topics, Workload workload, Checks checks, String phase) throws Exception {
        Map<String, List<String>> expected = Delivered.expected(workload.committed);
        int want = Delivered.count(expected);
        Delivered delivered = await(topics, want, checks, phase);
        checks.equal(phase + ": as many records as committed row changes and deletes' tombstones", want, delivered.records);
        checks.equal(phase + ": every committed row change once, in commit order per key (op, GTID, before, after)", expected,
                delivered.byKey);
        checks.check(phase + ": each key's records are in one partition", delivered.partitions.values().stream()
                .allMatch(p -> p.size() == 1), delivered.partitions.toString());
        checks.check(phase + ": each partition's change events are in commit (GTID) order",
                delivered.gtidsByPartition.values().stream().allMatch(Harness::ascending), delivered.gtidsByPartition.toString());
    }

    /**
     * Waits until the change topics hold `want` distinct records; checks
     * their names; all records then, a second later.
     */
    private static Delivered await(Topics topics, int want, Checks checks, String phase) throws Exception {
        Delivered delivered = await(topics, want);
        checks.equal(phase + ": one topic per table", TABLE_TOPICS, topics.names(TOPIC_PREFIX));
        return delivered;
    }

    private static Delivered await(Topics topics, int want) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (Delivered.count(new Delivered(topics.readAll(topics.names(TOPIC_PREFIX)), TOPIC_PREFIX).deduplicated()) < want
                && System.nanoTime() < deadline) {
            Thread.sleep(250);
        }
        Thread.sleep(1000);
        return new Delivered(topics.readAll(topics.names(TOPIC_PREFIX)), TOPIC_PREFIX);
    }

    /**
     * kill -9 of the Connect worker just after a burst of changes reached
     * Kafka, most likely before its source offsets were next committed
     * (every minute, ConnectWorker): Kafka Connect delivers at least once,
     * so the restarted task sends again the changes after the last
     * committed offset. Checked:
     * every change is there; deduplicated by GTID per key, each once in
     * commit order; and only changes committed before the kill repeat.
     */
    private static void workerCrash(Topics topics, ConnectWorker worker, Workload workload, Checks checks) throws Exception {
        String phase = "after a kill -9 of the Connect worker";
        for (int i = 1; i <= 5; i++) {
            workload.begin().insert("orders", "id", 10 + i, "account", 1, "amount", i, "status", "new")
                    .update("accounts", 1, "balance", 900L - i).commit();
        }
        String lastBeforeKill = workload.committed.get(workload.committed.size() - 1).gtid();
        await(topics, Delivered.count(Delivered.expected(workload.committed)));
        worker.kill();
        workload.begin().update("orders", List.of(11, 12), "status", "written while the worker was dead").commit();
        worker.start();
        checks.equal(phase + ": the connector and its task are RUNNING again", "RUNNING", worker.awaitRunning(CONNECTOR, 180));
        workload.begin().delete("orders", 13).update("accounts", 6, "owner", "after the crash").commit();

        Map<String, List<String>> expected = Delivered.expected(workload.committed);
        Delivered delivered = await(topics, Delivered.count(expected), checks, phase);
        checks.equal(phase + ": every committed row change there; deduplicated by GTID per key, each once in commit order",
                expected, delivered.deduplicated());
        long killSequence = sequence(lastBeforeKill);
        List<String> repeated = new ArrayList<>();
        delivered.byKey.forEach((key, lines) -> {
            List<String> rest = new ArrayList<>(lines);
            delivered.deduplicated().get(key).forEach(rest::remove);
            rest.stream().filter(line -> !line.equals(Delivered.TOMBSTONE)).forEach(line -> repeated.add(key + " " + line));
        });
        checks.check(phase + ": only changes committed before the kill are delivered again", repeated.stream()
                .allMatch(line -> !line.split(" ")[1].equals("r") && sequence(line.split(" ")[2]) <= killSequence), repeated.toString());
        checks.check(phase + ": each key's records are in one partition", delivered.partitions.values().stream()
                .allMatch(p -> p.size() == 1), delivered.partitions.toString());
        System.out.println("     (" + repeated.size() + " change records delivered twice after the kill -9)");
    }

    /** N of `uuid:N`. */
    private static long sequence(String gtid) {
        return Long.parseLong(gtid.substring(gtid.lastIndexOf(':') + 1));
    }

    private static boolean ascending(List<Long> values) {
        for (int i = 1; i < values.size(); i++) {
            if (values.get(i) < values.get(i - 1)) {
                return false;
            }
        }
        return true;
    }

    static void deleteTree(File file) {
        File[] children = file.listFiles();
        if (children != null) {
            for (File child : children) {
                deleteTree(child);
            }
        }
        file.delete();
    }
}
