// DrillConsumer is a plain Apache Kafka Java consumer in a consumer group, as an
// application runs one: it reads a topic from the group's committed offsets (or the
// start), prints every record, and commits synchronously after each poll's records are
// printed, so its uncommitted window is one poll.
//
// It is embedded in strait/internal/kafkatest and run by the disaster-recovery drill
// tests: a consumer that must land, after a failover and a failback, exactly where it
// left off. It needs nothing beyond the Kafka classpath.
//
// Usage:
//   DrillConsumer --bootstrap HOST:PORT --group GROUP --topic TOPIC
//       [--idle-ms MS] [--max-ms MS]
//
// Output: one line per record, "PARTITION OFFSET VALUE", flushed as it is read. It
// exits 0 once no record came for --idle-ms (default 5000) after the last one (or
// after the start), or after --max-ms (default 120000) in all.

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class DrillConsumer {
    private DrillConsumer() {
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        String group = null;
        String topic = null;
        long idleMs = 5000;
        long maxMs = 120000;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                System.err.println("DrillConsumer: " + a + " needs a value");
                System.exit(2);
            }
            String v = args[++i];
            switch (a) {
                case "--bootstrap" -> bootstrap = v;
                case "--group" -> group = v;
                case "--topic" -> topic = v;
                case "--idle-ms" -> idleMs = Long.parseLong(v);
                case "--max-ms" -> maxMs = Long.parseLong(v);
                default -> {
                    System.err.println("DrillConsumer: unknown argument " + a);
                    System.exit(2);
                }
            }
        }
        if (bootstrap == null || group == null || topic == null) {
            System.err.println("DrillConsumer: --bootstrap, --group and --topic are required");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        // The brokers' minimum: a consumer killed with its cluster leaves
        // its group within seconds of the cluster's return.
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        long start = System.currentTimeMillis();
        long last = start;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            while (true) {
                long now = System.currentTimeMillis();
                if (now - last >= idleMs || now - start >= maxMs) {
                    break;
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    continue;
                }
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    String value = r.value() == null ? "" : new String(r.value(), StandardCharsets.UTF_8);
                    out.println(r.partition() + " " + r.offset() + " " + value);
                }
                out.flush();
                consumer.commitSync();
                last = System.currentTimeMillis();
            }
        }
        out.flush();
    }
}
