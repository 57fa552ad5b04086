package binlogd.interop.debezium;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;

/**
 * The consumer half of `binlogd bench cdc`: Debezium's MySQL connector,
 * embedded, streaming from a running server (binlogd or MariaDB) while the
 * benchmark drives sysbench against it. Lag is measured with probes: every
 * 10 ms a separate connection inserts a row carrying its wall-clock time
 * (µs) into `cdcprobe.probe`, and the consumer takes the time its change
 * event arrives; both clocks are this machine's. Change events of every
 * table are counted per second.
 *
 * Protocol with the benchmark, one line each on stdout: `READY` once the
 * first probe arrived (streaming has begun); then, after `seconds` of
 * measurement and the drain (every probe sent during it received),
 * `SECOND i events probes lag_p99_us` per second and a final
 * `RESULT events=N seconds=S probes_sent=Q probes=P lag_p50_us=A lag_p99_us=B
 * lag_max_us=C drain_ms=D`. Errors go to stderr with exit status 1.
 *
 * Run: `java -cp ... binlogd.interop.debezium.CdcThroughput PORT SECONDS`.
 */
public final class CdcThroughput {
    private static final long PROBE_INTERVAL_MS = 10;
    private static final String PROBE_TOPIC_SUFFIX = ".cdcprobe.probe";

    private final long origin = System.nanoTime();
    private final List<long[]> lags = Collections.synchronizedList(new ArrayList<>());
    private final AtomicLong[] eventsPerSecond;
    private final AtomicLong firstProbeSeen = new AtomicLong(-1);
    private final AtomicLong lastProbeReceived = new AtomicLong(-1);
    private volatile long measureStart = Long.MAX_VALUE;
    /** Wall-clock µs of the window's start: probes sent before it are not measured. */
    private volatile long measureStartMicros = Long.MAX_VALUE;
    private volatile Throwable failure;

    private CdcThroughput(int seconds) {
        eventsPerSecond = new AtomicLong[seconds + 1];
        for (int i = 0; i < eventsPerSecond.length; i++) {
            eventsPerSecond[i] = new AtomicLong();
        }
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int seconds = Integer.parseInt(args[1]);
        try {
            new CdcThroughput(seconds).run(port, seconds);
            System.exit(0);
        } catch (Throwable error) {
            error.printStackTrace();
            System.exit(1);
        }
    }

    private static long nowMicros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    private void run(int port, int seconds) throws Exception {
        String url = "jdbc:mysql://127.0.0.1:" + port + "/?user=root&password=&allowPublicKeyRetrieval=true";
        try (Connection connection = DriverManager.getConnection(url); Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE IF NOT EXISTS cdcprobe");
            statement.execute("CREATE TABLE IF NOT EXISTS cdcprobe.probe (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, sent_us BIGINT NOT NULL)");
        }
        ExecutorService executor = Executors.newSingleThreadExecutor();
        DebeziumEngine<RecordChangeEvent<SourceRecord>> engine = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
                .using(properties(port))
                .notifying(event -> receive(event.record()))
                .using((success, message, error) -> {
                    if (!success) {
                        failure = error != null ? error : new IllegalStateException(message);
                    }
                })
                .build();
        executor.execute(engine);
        try (Connection probes = DriverManager.getConnection(url);
                PreparedStatement insert = probes.prepareStatement("INSERT INTO cdcprobe.probe (sent_us) VALUES (?)")) {
            long sent = 0;
            long readyDeadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (firstProbeSeen.get() < 0) {
                check(readyDeadline, "no probe arrived within 5 minutes of the connector's start");
                insert.setLong(1, nowMicros());
                insert.executeUpdate();
                Thread.sleep(PROBE_INTERVAL_MS);
            }
            System.out.println("READY");
            System.out.flush();
            measureStart = System.nanoTime();
            measureStartMicros = nowMicros();
            long measureEnd = measureStart + TimeUnit.SECONDS.toNanos(seconds);
            while (System.nanoTime() < measureEnd) {
                check(Long.MAX_VALUE, "");
                insert.setLong(1, nowMicros());
                insert.executeUpdate();
                sent++;
                Thread.sleep(PROBE_INTERVAL_MS);
            }
            long endMicros = nowMicros();
            long drainStart = System.nanoTime();
            long drainDeadline = drainStart + TimeUnit.MINUTES.toNanos(10);
            // The drain ends when a probe sent after the window arrives.
            insert.setLong(1, endMicros);
            insert.executeUpdate();
            while (lastProbeReceived.get() < endMicros) {
                check(drainDeadline, "the connector did not catch up within 10 minutes of the run's end");
                Thread.sleep(5);
            }
            long drainMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - drainStart);
            report(seconds, sent, drainMs);
        } finally {
            engine.close();
            executor.shutdown();
            executor.awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    private void check(long deadline, String timeout) {
        if (failure != null) {
            throw new IllegalStateException("the connector failed", failure);
        }
        if (System.nanoTime() > deadline) {
            throw new IllegalStateException(timeout);
        }
    }

    private static Properties properties(int port) {
        Properties props = Capture.embeddedProperties("binlogd-cdc-bench", port, 5401, "bench", "sbtest,cdcprobe");
        props.setProperty("offset.flush.interval.ms", "1000");
        // The tables exist before the connector starts; their rows are not the measurement.
        props.setProperty("snapshot.mode", "no_data");
        props.setProperty("tombstones.on.delete", "false");
        props.setProperty("max.batch.size", "4096");
        props.setProperty("max.queue.size", "16384");
        props.setProperty("poll.interval.ms", "10");
        return props;
    }

    private void receive(SourceRecord record) {
        if (!(record.value() instanceof Struct value) || value.schema().field("op") == null) {
            return;
        }
        long now = System.nanoTime();
        if (now >= measureStart) {
            int second = (int) TimeUnit.NANOSECONDS.toSeconds(now - measureStart);
            if (second < eventsPerSecond.length) {
                eventsPerSecond[second].incrementAndGet();
            }
        }
        if (record.topic().endsWith(PROBE_TOPIC_SUFFIX) && "c".equals(value.getString("op"))) {
            long sent = value.getStruct("after").getInt64("sent_us");
            long received = nowMicros();
            firstProbeSeen.compareAndSet(-1, received);
            lastProbeReceived.accumulateAndGet(sent, Math::max);
            if (sent >= measureStartMicros) {
                int second = (int) TimeUnit.NANOSECONDS.toSeconds(now - measureStart);
                lags.add(new long[] {second, Math.max(0, received - sent)});
            }
        }
    }

    private void report(int seconds, long sent, long drainMs) {
        List<long[]> samples;
        synchronized (lags) {
            samples = new ArrayList<>(lags);
        }
        long events = 0;
        for (int second = 0; second < seconds; second++) {
            long count = eventsPerSecond[second].get();
            events += count;
            int s = second;
            long[] lagsOfSecond = samples.stream().filter(sample -> sample[0] == s).mapToLong(sample -> sample[1]).sorted().toArray();
            System.out.printf("SECOND %d %d %d %d%n", second, count, lagsOfSecond.length, percentile(lagsOfSecond, 0.99));
        }
        long[] all = samples.stream().filter(sample -> sample[0] < seconds).mapToLong(sample -> sample[1]).sorted().toArray();
        System.out.printf("RESULT events=%d seconds=%d probes_sent=%d probes=%d lag_p50_us=%d lag_p99_us=%d lag_max_us=%d drain_ms=%d%n", events,
                seconds, sent, all.length, percentile(all, 0.50), percentile(all, 0.99), all.length == 0 ? 0 : all[all.length - 1], drainMs);
        System.out.flush();
    }

    private static long percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        int index = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }
}
