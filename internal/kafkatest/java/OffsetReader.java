// OffsetReader is Apache Kafka's Java consumer reading a topic without a group, from
// given offsets, as an application that stores only the offset numbers it reached (a
// stream processor's checkpoint, a sink's own store) resumes: it assigns the partitions,
// seeks each to its offset, and reads up to the end a consumer of its isolation level
// sees then (the last stable offset for read_committed).
//
// It is embedded in strait/internal/kafkatest and run by the offset-preserving tests,
// which read the same offsets on the source and on the target and compare.
//
// Usage:
//   OffsetReader --bootstrap HOST:PORT --topic TOPIC [--from P:OFFSET,...]
//       [--isolation read_committed|read_uncommitted] [--max-ms MS]
//
// A partition not in --from is read from its log start. Output: one line per record,
// "PARTITION OFFSET TIMESTAMP KEY VALUE HEADERS", KEY and VALUE in hex ("-" for null, "="
// for empty), HEADERS as key=hexvalue joined with "," ("-" for none, "key=-" for a
// null value), then a last line "END P:OFFSET,..." with each partition's end. It exits 1
// if the ends are not reached within --max-ms (default 60000).

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class OffsetReader {
    private OffsetReader() {
    }

    private static String hex(byte[] b) {
        return b == null ? "-" : (b.length == 0 ? "=" : HexFormat.of().formatHex(b));
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        String topic = null;
        String isolation = "read_committed";
        Map<Integer, Long> from = new HashMap<>();
        long maxMs = 60000;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                System.err.println("OffsetReader: " + a + " needs a value");
                System.exit(2);
            }
            String v = args[++i];
            switch (a) {
                case "--bootstrap" -> bootstrap = v;
                case "--topic" -> topic = v;
                case "--isolation" -> isolation = v;
                case "--max-ms" -> maxMs = Long.parseLong(v);
                case "--from" -> {
                    for (String po : v.split(",")) {
                        String[] f = po.split(":");
                        from.put(Integer.parseInt(f[0]), Long.parseLong(f[1]));
                    }
                }
                default -> {
                    System.err.println("OffsetReader: unknown argument " + a);
                    System.exit(2);
                }
            }
        }
        if (bootstrap == null || topic == null) {
            System.err.println("OffsetReader: --bootstrap and --topic are required");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        long start = System.currentTimeMillis();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo p : consumer.partitionsFor(topic, Duration.ofMillis(maxMs))) {
                tps.add(new TopicPartition(topic, p.partition()));
            }
            consumer.assign(tps);
            Map<TopicPartition, Long> begins = consumer.beginningOffsets(tps);
            Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
            Map<Integer, Long> endOf = new TreeMap<>();
            for (TopicPartition tp : tps) {
                Long at = from.get(tp.partition());
                consumer.seek(tp, at != null ? at : begins.get(tp));
                endOf.put(tp.partition(), ends.get(tp));
            }
            while (true) {
                boolean done = true;
                for (TopicPartition tp : tps) {
                    if (consumer.position(tp) < ends.get(tp)) {
                        done = false;
                    }
                }
                if (done) {
                    break;
                }
                if (System.currentTimeMillis() - start >= maxMs) {
                    System.err.println("OffsetReader: the ends " + ends + " not reached within " + maxMs + " ms");
                    out.flush();
                    System.exit(1);
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.offset() >= ends.get(new TopicPartition(topic, r.partition()))) {
                        continue; // past the end listed at the start: not compared
                    }
                    StringBuilder hs = new StringBuilder();
                    for (Header h : r.headers()) {
                        if (hs.length() > 0) {
                            hs.append(',');
                        }
                        hs.append(h.key()).append('=').append(hex(h.value()));
                    }
                    out.println(r.partition() + " " + r.offset() + " " + r.timestamp() + " "
                            + hex(r.key()) + " " + hex(r.value()) + " " + (hs.length() == 0 ? "-" : hs));
                }
            }
            StringBuilder e = new StringBuilder("END ");
            for (Map.Entry<Integer, Long> en : endOf.entrySet()) {
                if (e.length() > 4) {
                    e.append(',');
                }
                e.append(en.getKey()).append(':').append(en.getValue());
            }
            out.println(e);
        }
        out.flush();
    }
}
