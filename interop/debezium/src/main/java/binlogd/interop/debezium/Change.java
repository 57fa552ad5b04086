package binlogd.interop.debezium;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A row change event as the harness compares it: the table, Debezium's op
 * (r snapshot read, c insert, u update, d delete), the before and after
 * images with every value in a canonical text form ({@link #canonical}),
 * and the source block's gtid, file and pos.
 */
record Change(String table, String op, Map<String, String> before, Map<String, String> after, String gtid, String file,
        long pos) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The change in a record of topic `prefix.database.table`; null for other records (schema changes). */
    static Change of(SourceRecord record, String prefix) {
        String[] topic = record.topic().split("\\.");
        if (topic.length != 3 || !topic[0].equals(prefix) || !(record.value() instanceof Struct value)) {
            return null;
        }
        Struct source = value.getStruct("source");
        return new Change(topic[2], value.getString("op"), image(value.getStruct("before")), image(value.getStruct("after")),
                source.getString("gtid"), source.getString("file"), source.getInt64("pos"));
    }

    private static Map<String, String> image(Struct row) {
        if (row == null) {
            return null;
        }
        Map<String, String> values = new LinkedHashMap<>();
        for (Field field : row.schema().fields()) {
            values.put(field.name(), canonical(row.get(field), field.schema().name()));
        }
        return values;
    }

    /**
     * One text per value whatever Java type Debezium chose for it: numbers
     * as plain decimals without trailing zeros, bytes as lower-case hex,
     * JSON re-serialized compactly (Debezium prints the binlog's binary
     * JSON without spaces, and the snapshot's text as the server sent it).
     */
    static String canonical(Object value, String logicalType) {
        if (value == null) {
            return null;
        }
        if (value instanceof ByteBuffer buffer) {
            byte[] bytes = new byte[buffer.remaining()];
            buffer.duplicate().get(bytes);
            return hex(bytes);
        }
        if (value instanceof byte[] bytes) {
            return hex(bytes);
        }
        if (value instanceof Number number) {
            return number(number.toString());
        }
        if ("io.debezium.data.Json".equals(logicalType)) {
            try {
                return JSON.readTree(value.toString()).toString();
            } catch (Exception e) {
                return "unparsable JSON " + value;
            }
        }
        return value.toString();
    }

    static String number(String text) {
        BigDecimal decimal = new BigDecimal(text).stripTrailingZeros();
        return decimal.signum() == 0 ? "0" : decimal.toPlainString();
    }

    static String hex(byte[] bytes) {
        StringBuilder text = new StringBuilder();
        for (byte b : bytes) {
            text.append(String.format("%02x", b));
        }
        return text.toString();
    }

    static String json(String text) {
        return canonical(text, "io.debezium.data.Json");
    }
}
