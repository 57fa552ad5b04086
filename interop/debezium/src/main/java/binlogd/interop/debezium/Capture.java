package binlogd.interop.debezium;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.connect.source.SourceRecord;

import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.debezium.embedded.Connect;

/**
 * Debezium's MySQL connector in an embedded engine, with offsets and schema
 * history in memory (no Kafka); every record it emits lands in a queue.
 */
final class Capture implements AutoCloseable {
    private final LinkedBlockingQueue<SourceRecord> records = new LinkedBlockingQueue<>();
    private final ExecutorService executor = Executors.newSingleThreadExecutor();
    private final DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;
    volatile Throwable failure;

    /**
     * What every embedded MySQL connector of these harnesses shares: binlogd
     * on 127.0.0.1 as root, offsets and schema history in memory.
     */
    static Properties embeddedProperties(String name, int port, int serverId, String topicPrefix, String databases) {
        Properties props = new Properties();
        props.setProperty("name", name);
        props.setProperty("connector.class", "io.debezium.connector.mysql.MySqlConnector");
        props.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        props.setProperty("schema.history.internal", "io.debezium.relational.history.MemorySchemaHistory");
        props.setProperty("database.hostname", "127.0.0.1");
        props.setProperty("database.port", Integer.toString(port));
        props.setProperty("database.user", "root");
        props.setProperty("database.password", "");
        props.setProperty("database.server.id", Integer.toString(serverId));
        props.setProperty("topic.prefix", topicPrefix);
        props.setProperty("database.include.list", databases);
        // A loaded CI machine can take minutes to start the task.
        props.setProperty("internal.task.management.timeout.ms", "600000");
        return props;
    }

    Capture(int port, String databases) {
        Properties props = embeddedProperties("binlogd-harness", port, 5400, "bd", databases);
        props.setProperty("offset.flush.interval.ms", "0");
        props.setProperty("snapshot.mode", "initial");
        props.setProperty("bigint.unsigned.handling.mode", "precise");
        props.setProperty("include.schema.changes", "true");
        props.setProperty("connect.keep.alive.interval.ms", "5000");
        props.setProperty("errors.max.retries", "-1");
        props.setProperty("errors.retry.delay.initial.ms", "300");
        props.setProperty("errors.retry.delay.max.ms", "1000");
        props.setProperty("poll.interval.ms", "50");
        engine = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
                .using(props)
                .notifying(event -> records.add(event.record()))
                .using((success, message, error) -> {
                    if (!success) {
                        failure = error != null ? error : new IllegalStateException(message);
                        System.err.println("debezium engine stopped: " + message);
                    }
                })
                .build();
        executor.execute(engine);
    }

    /** Waits until `done` holds for the records so far; all records then. */
    List<SourceRecord> await(java.util.function.Predicate<List<SourceRecord>> done, long seconds) throws InterruptedException {
        List<SourceRecord> seen = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!done.test(seen)) {
            if (failure != null) {
                throw new IllegalStateException("the connector failed", failure);
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            SourceRecord record = records.poll(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)), TimeUnit.NANOSECONDS);
            if (record != null) {
                seen.add(record);
                records.drainTo(seen);
            }
        }
        return seen;
    }

    @Override
    public void close() throws Exception {
        engine.close();
        executor.shutdown();
        executor.awaitTermination(60, TimeUnit.SECONDS);
    }
}
