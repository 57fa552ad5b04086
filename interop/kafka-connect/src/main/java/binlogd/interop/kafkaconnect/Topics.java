package binlogd.interop.kafkaconnect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * What a downstream consumer sees: a plain kafka-clients consumer (no
 * group, partitions assigned by hand) reads every record of the change
 * topics from the beginning to their current end.
 */
final class Topics {
    /** One record as a consumer gets it: key and value are JSON text, the value null for a tombstone. */
    record Message(String topic, int partition, long offset, String key, String value) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final KafkaBroker broker;

    Topics(KafkaBroker broker) {
        this.broker = broker;
    }

    /** The names of the topics that start with `prefix`. */
    Set<String> names(String prefix) throws Exception {
        try (Admin admin = broker.admin()) {
            Set<String> names = new TreeSet<>();
            for (String name : admin.listTopics().names().get(30, TimeUnit.SECONDS)) {
                if (name.startsWith(prefix)) {
                    names.add(name);
                }
            }
            return names;
        }
    }

    /**
     * The connector's newest committed source offset in Connect's offsets
     * topic (key `["connector",{"server":...}]`, value Debezium's offset:
     * binlog file, position, `gtids`); a missing node if none.
     */
    JsonNode lastOffset(String connector) throws JsonProcessingException {
        JsonNode last = MissingNode.getInstance();
        for (Message message : readAll(Set.of(ConnectWorker.OFFSETS_TOPIC))) {
            JsonNode key = JSON.readTree(message.key());
            if (key.path(0).asText().equals(connector) && message.value() != null) {
                last = JSON.readTree(message.value());
            }
        }
        return last;
    }

    /** Every record of `topics` up to each partition's end now, in partition then offset order. */
    List<Message> readAll(Set<String> topics) {
        Properties props = new Properties();
        props.setProperty(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        props.setProperty(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.setProperty(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        props.setProperty(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.setProperty(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<Message> messages = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (String topic : topics) {
                for (PartitionInfo info : consumer.partitionsFor(topic, Duration.ofSeconds(30))) {
                    partitions.add(new TopicPartition(topic, info.partition()));
                }
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (partitions.stream().anyMatch(p -> consumer.position(p, Duration.ofSeconds(30)) < ends.get(p))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read the topics to their end " + ends);
                }
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    if (record.offset() < ends.get(new TopicPartition(record.topic(), record.partition()))) {
                        messages.add(new Message(record.topic(), record.partition(), record.offset(), record.key(), record.value()));
                    }
                }
            }
        }
        messages.sort(java.util.Comparator.comparing(Message::topic).thenComparingInt(Message::partition)
                .thenComparingLong(Message::offset));
        return messages;
    }
}
