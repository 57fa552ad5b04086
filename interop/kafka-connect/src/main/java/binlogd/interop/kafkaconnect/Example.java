package binlogd.interop.kafkaconnect;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Pattern;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

import binlogd.interop.common.Binlogd;

/**
 * The README's runnable example (`example.sh PATH/TO/binlogd`): binlogd, a
 * KRaft broker and a Connect worker running the Debezium connector, all on
 * 127.0.0.1, and a consumer that prints every change record of
 * `bd.<database>.<table>` as it arrives, until Ctrl-C stops everything.
 */
public final class Example {
    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("binlogd-kafka-example");
        try (Binlogd server = new Binlogd(System.getProperty("binlogd"), "kafka-example")) {
            // A table to start with, which the connector's snapshot reads.
            // It also gives the server a GTID: with an empty gtid_executed
            // (a server that never committed anything, MySQL's or binlogd's)
            // Debezium 3.6.1's binlog client fails its first dump request
            // (setGtidSet("") leaves its GTID set null).
            server.execute("CREATE DATABASE shop", "CREATE TABLE shop.items (id INT NOT NULL PRIMARY KEY, name VARCHAR(40))",
                    "INSERT INTO shop.items VALUES (1, 'pen'), (2, 'ink')");
            KafkaBroker broker = new KafkaBroker(Files.createDirectory(dir.resolve("kafka")));
            broker.start();
            ConnectWorker worker = new ConnectWorker(Files.createDirectory(dir.resolve("connect")), broker.bootstrap());
            try {
                worker.start();
                java.util.Map<String, String> config = Harness.connectorConfig(server.port, broker.bootstrap());
                // Every database but the server's own.
                config.remove("database.include.list");
                worker.putConnector(Harness.CONNECTOR, config);
                System.out.println("connector: " + worker.awaitRunning(Harness.CONNECTOR, 180));
                System.out.println();
                System.out.println("binlogd       mariadb -h127.0.0.1 -P" + server.port + " -uroot");
                System.out.println("Kafka         bootstrap 127.0.0.1:" + broker.port);
                System.out.println("Connect REST  curl http://127.0.0.1:" + worker.restPort + "/connectors/" + Harness.CONNECTOR
                        + "/status");
                System.out.println();
                System.out.println("Change rows of shop.items, or of any table with a primary key; each change is");
                System.out.println("printed below as topic, partition, offset, key and value (JSON), after the");
                System.out.println("snapshot of shop.items. Ctrl-C stops binlogd, Kafka and Connect.");
                System.out.println();
                tail(broker.bootstrap());
            } finally {
                worker.stop();
                broker.stop();
                Harness.deleteTree(dir.toFile());
            }
        }
    }

    /** Prints the change topics' records until the JVM is asked to stop. */
    private static void tail(String bootstrap) throws InterruptedException {
        Properties props = new Properties();
        props.setProperty(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.setProperty(ConsumerConfig.GROUP_ID_CONFIG, "binlogd-example");
        props.setProperty(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // A new table's topic is subscribed to within a second.
        props.setProperty(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        props.setProperty(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.setProperty(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        CountDownLatch stopped = new CountDownLatch(1);
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props);
        Thread main = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            consumer.wakeup();
            try {
                stopped.await();
                main.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        try {
            consumer.subscribe(Pattern.compile(Pattern.quote(Harness.PREFIX + ".") + "[^.]+\\.[^.]+"));
            while (true) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofSeconds(1))) {
                    System.out.println(record.topic() + " " + record.partition() + "@" + record.offset() + " " + record.key()
                            + " " + record.value());
                }
            }
        } catch (WakeupException stopping) {
            // Ctrl-C.
        } finally {
            consumer.close();
            stopped.countDown();
        }
    }
}
