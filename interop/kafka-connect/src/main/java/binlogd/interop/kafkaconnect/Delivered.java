package binlogd.interop.kafkaconnect;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The change topics' records grouped by row key, in the order a consumer
 * of the key's partition reads them, each as one line of text (op, GTID,
 * before, after; or `tombstone`) so that what the workload committed and
 * what Kafka holds compare as two maps of lists.
 */
final class Delivered {
    static final String TOMBSTONE = "tombstone";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Key -> its records' lines, in offset order. */
    final Map<String, List<String>> byKey = new TreeMap<>();
    /** Key -> the partitions its records are in (one, for per-key order to hold). */
    final Map<String, List<Integer>> partitions = new TreeMap<>();
    /** Partition (`topic-N`) -> its change events' GTID sequence numbers, in offset order. */
    final Map<String, List<Long>> gtidsByPartition = new TreeMap<>();
    int records;

    /** `prefix` is the connector's topic.prefix plus the database, e.g. `bd.cdc.`. */
    Delivered(List<Topics.Message> messages, String prefix) throws JsonProcessingException {
        for (Topics.Message message : messages) {
            records++;
            String table = message.topic().substring(prefix.length());
            String key = table + "/" + JSON.readTree(message.key()).path("id").asText();
            List<Integer> seenIn = partitions.computeIfAbsent(key, k -> new ArrayList<>());
            if (!seenIn.contains(message.partition())) {
                seenIn.add(message.partition());
            }
            if (message.value() == null) {
                byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(TOMBSTONE);
                continue;
            }
            JsonNode value = JSON.readTree(message.value());
            String op = value.path("op").asText();
            String gtid = value.path("source").path("gtid").isNull() ? null : value.path("source").path("gtid").asText();
            byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(line(op, gtid, row(value.get("before")), row(value.get("after"))));
            if (gtid != null) {
                gtidsByPartition.computeIfAbsent(message.topic() + "-" + message.partition(), p -> new ArrayList<>())
                        .add(Long.parseLong(gtid.substring(gtid.lastIndexOf(':') + 1)));
            }
        }
    }

    /** What the topics must hold for `committed`: each change once, a tombstone after each delete. */
    static Map<String, List<String>> expected(List<Workload.Change> committed) {
        Map<String, List<String>> byKey = new TreeMap<>();
        for (Workload.Change change : committed) {
            List<String> lines = byKey.computeIfAbsent(change.key(), k -> new ArrayList<>());
            lines.add(line(change.op(), change.gtid(), change.before(), change.after()));
            if (change.op().equals("d")) {
                lines.add(TOMBSTONE);
            }
        }
        return byKey;
    }

    /**
     * Each key's records with a repeat of an earlier record of the same
     * key dropped (every change line names its GTID): what a consumer that
     * remembers the GTIDs it applied per key keeps of an at-least-once
     * delivery. A tombstone is kept when it follows a kept delete.
     */
    Map<String, List<String>> deduplicated() {
        Map<String, List<String>> kept = new TreeMap<>();
        byKey.forEach((key, lines) -> {
            List<String> unique = new ArrayList<>();
            for (String line : lines) {
                boolean keep = line.equals(TOMBSTONE) ? !unique.isEmpty() && unique.get(unique.size() - 1).startsWith("d ")
                        : !unique.contains(line);
                if (keep) {
                    unique.add(line);
                }
            }
            kept.put(key, unique);
        });
        return kept;
    }

    static int count(Map<String, List<String>> byKey) {
        return byKey.values().stream().mapToInt(List::size).sum();
    }

    /** A snapshot read carries no GTID of its own: only a change event's is compared. */
    static String line(String op, String gtid, Map<String, String> before, Map<String, String> after) {
        return op + (op.equals("r") ? "" : " " + gtid) + " before=" + before + " after=" + after;
    }

    private static Map<String, String> row(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        Map<String, String> row = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> fields = node.fields(); fields.hasNext();) {
            Map.Entry<String, JsonNode> field = fields.next();
            row.put(field.getKey(), field.getValue().isNull() ? null : field.getValue().asText());
        }
        return row;
    }
}
