package binlogd.interop.kafkaconnect;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A Kafka Connect worker in distributed mode (`ConnectDistributed` from
 * connect-runtime): connector configs, source offsets and statuses live in
 * Kafka topics, so a new process picks up where the old one stopped. Its
 * REST API listens on 127.0.0.1; the Debezium connector is on its classpath.
 */
final class ConnectWorker {
    static final String CONFIGS_TOPIC = "binlogd-connect-configs";
    static final String OFFSETS_TOPIC = "binlogd-connect-offsets";
    static final String STATUS_TOPIC = "binlogd-connect-status";

    private static final ObjectMapper JSON = new ObjectMapper();

    final int restPort;
    private final ChildJvm process;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    ConnectWorker(Path dir, String bootstrap) throws IOException {
        this.restPort = FreePort.pick();
        Path config = dir.resolve("worker.properties");
        Files.writeString(config, String.join("\n", List.of(
                "bootstrap.servers=" + bootstrap,
                "group.id=binlogd-connect",
                "listeners=http://127.0.0.1:" + restPort,
                "rest.advertised.host.name=127.0.0.1",
                "rest.advertised.port=" + restPort,
                // Plain JSON, without the schema beside each key and value:
                // what a consumer in any language reads.
                "key.converter=org.apache.kafka.connect.json.JsonConverter",
                "value.converter=org.apache.kafka.connect.json.JsonConverter",
                "key.converter.schemas.enable=false",
                "value.converter.schemas.enable=false",
                "config.storage.topic=" + CONFIGS_TOPIC,
                "offset.storage.topic=" + OFFSETS_TOPIC,
                "status.storage.topic=" + STATUS_TOPIC,
                "config.storage.replication.factor=1",
                "offset.storage.replication.factor=1",
                "status.storage.replication.factor=1",
                "offset.storage.partitions=1",
                "status.storage.partitions=1",
                // Source offsets are committed every minute (Connect's
                // default) and on a clean stop: a kill -9 in between makes
                // the restarted task send the changes since the last commit
                // again.
                "offset.flush.interval.ms=60000",
                // A restarted lone worker takes its connector back at once
                // rather than waiting for the old member to return.
                "scheduled.rebalance.max.delay.ms=0",
                // The connector is on the classpath with ServiceLoader
                // manifests: no plugin.path, no class scan.
                "plugin.discovery=service_load")) + "\n");
        this.process = new ChildJvm("org.apache.kafka.connect.cli.ConnectDistributed", List.of(config.toString()),
                dir.resolve("worker.log"));
    }

    /** Starts the process and waits until its REST API answers. */
    void start() throws Exception {
        process.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (true) {
            try {
                if (get("/connectors").statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // Not listening yet.
            }
            if (!process.alive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("the Connect worker did not start: " + process.logTail());
            }
            Thread.sleep(200);
        }
    }

    void stop() throws InterruptedException {
        process.stop();
    }

    void kill() throws InterruptedException {
        process.kill();
    }

    /** PUT /connectors/NAME/config: creates the connector, or updates it. */
    void putConnector(String name, Map<String, String> config) throws Exception {
        // A worker that has just started may still be joining its group
        // (409, rebalance in progress): try again for a while.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri("/connectors/" + name + "/config"))
                    .header("Content-Type", "application/json")
                    .PUT(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(config))).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() == 200 || response.statusCode() == 201) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("PUT connector config: " + response.statusCode() + " " + response.body());
            }
            Thread.sleep(500);
        }
    }

    /**
     * Waits until the connector and its one task are RUNNING (GET
     * /connectors/NAME/status); the last status seen.
     */
    String awaitRunning(String name, int seconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        String last = "";
        while (System.nanoTime() < deadline) {
            HttpResponse<String> response = get("/connectors/" + name + "/status");
            last = response.statusCode() + " " + response.body();
            if (response.statusCode() == 200) {
                JsonNode status = JSON.readTree(response.body());
                JsonNode tasks = status.path("tasks");
                if (status.path("connector").path("state").asText().equals("RUNNING") && tasks.size() == 1
                        && tasks.get(0).path("state").asText().equals("RUNNING")) {
                    return "RUNNING";
                }
                if (tasks.size() == 1 && tasks.get(0).path("state").asText().equals("FAILED")) {
                    return last;
                }
            }
            Thread.sleep(250);
        }
        return last;
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + restPort + path);
    }

    String logTail() {
        return process.logTail();
    }
}
