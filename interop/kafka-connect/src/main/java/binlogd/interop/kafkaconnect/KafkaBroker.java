package binlogd.interop.kafkaconnect;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * One Kafka node in KRaft mode, broker and controller in one process
 * (`kafka.Kafka`, from the kafka_2.13 jar), listening on 127.0.0.1 only;
 * its storage is formatted with a random cluster id before the first start.
 */
final class KafkaBroker {
    /** Partitions of every topic the broker creates on first use: more than one, so per-key order means something. */
    static final int PARTITIONS = 3;

    final int port;
    private final int controllerPort;
    private final ChildJvm process;

    KafkaBroker(Path dir) throws IOException, InterruptedException {
        this.port = FreePort.pick();
        this.controllerPort = FreePort.pick();
        Path config = dir.resolve("server.properties");
        Files.writeString(config, String.join("\n", List.of(
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
                "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs=" + dir.resolve("data"),
                "num.partitions=" + PARTITIONS,
                // One node: every internal topic has one replica, and few partitions.
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "transaction.state.log.num.partitions=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0")) + "\n");
        ChildJvm format = new ChildJvm("kafka.tools.StorageTool",
                List.of("format", "-t", Uuid.randomUuid().toString(), "-c", config.toString()), dir.resolve("format.log"));
        if (format.runToEnd(120) != 0) {
            throw new IllegalStateException("kafka-storage format failed: " + format.logTail());
        }
        this.process = new ChildJvm("kafka.Kafka", List.of(config.toString()), dir.resolve("broker.log"));
    }

    String bootstrap() {
        return "127.0.0.1:" + port;
    }

    /** Starts the process and waits until it listens, then until it answers an admin request. */
    void start() throws Exception {
        process.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        // A client that cannot connect logs a warning per try: wait for the port first.
        while (true) {
            try (Socket socket = new Socket("127.0.0.1", port)) {
                break;
            } catch (IOException notYet) {
                if (!process.alive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("the Kafka broker did not listen: " + process.logTail());
                }
                Thread.sleep(200);
            }
        }
        while (true) {
            try (Admin admin = admin()) {
                admin.describeCluster().nodes().get(5, TimeUnit.SECONDS);
                return;
            } catch (Exception notYet) {
                if (!process.alive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("the Kafka broker did not start: " + process.logTail());
                }
                Thread.sleep(200);
            }
        }
    }

    void stop() throws InterruptedException {
        process.stop();
    }

    Admin admin() {
        Properties props = new Properties();
        props.setProperty(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        props.setProperty(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        props.setProperty(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        return Admin.create(props);
    }

    String logTail() {
        return process.logTail();
    }
}
