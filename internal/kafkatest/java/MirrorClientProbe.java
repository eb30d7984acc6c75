// MirrorClientProbe asks Apache Kafka's own RemoteClusterUtils what it reads from one
// cluster's MirrorMaker 2 topics, and prints the answers as one JSON object on stdout.
//
// It is embedded in strait/internal/kafkatest and run by its tests to prove that the topics
// Strait writes keep Java tooling working. It needs nothing beyond the Kafka classpath.
//
// Usage:
//   MirrorClientProbe --bootstrap HOST:PORT [--separator SEP] [--policy-class FQCN]
//       [--source-alias ALIAS] [--translate REMOTE_ALIAS:GROUP]... [--hops ALIAS]...
//       [--timeout-ms MS]
//
// Output (keys and lists sorted, so equal states print equal bytes):
//   {"heartbeatTopics":[...],"checkpointTopics":[...],"upstreamClusters":[...],
//    "replicationHops":{"A":1},"translateOffsets":{"A:group":{"topic-0":5}}}
//
// Errors go to stderr with exit status 1.

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

public final class MirrorClientProbe {
    private MirrorClientProbe() {
    }

    /** UsageException is a bad command line; its message says which argument and why. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    /** Translation is one --translate request. */
    static final class Translation {
        final String remoteAlias;
        final String group;

        Translation(String remoteAlias, String group) {
            this.remoteAlias = remoteAlias;
            this.group = group;
        }
    }

    /** Options are the parsed command line. */
    static final class Options {
        String bootstrap;
        String separator;
        String policyClass;
        String sourceAlias;
        long timeoutMs = 30_000;
        final List<Translation> translations = new ArrayList<>();
        final List<String> hops = new ArrayList<>();
    }

    public static void main(String[] args) {
        try {
            Options opts = parse(args);
            String json = probe(opts);
            System.out.println(json);
            System.out.flush();
            // Kafka clients may leave non-daemon threads behind: do not wait for them.
            System.exit(0);
        } catch (UsageException e) {
            System.err.println("MirrorClientProbe: " + e.getMessage());
            System.exit(1);
        } catch (Throwable e) {
            System.err.println("MirrorClientProbe: " + e);
            e.printStackTrace(System.err);
            System.exit(1);
        }
    }

    static Options parse(String[] args) throws UsageException {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (i + 1 >= args.length) {
                throw new UsageException(flag.startsWith("--")
                    ? flag + " needs a value"
                    : "unexpected argument '" + flag + "'");
            }
            String value = args[++i];
            switch (flag) {
                case "--bootstrap":
                    o.bootstrap = value;
                    break;
                case "--separator":
                    o.separator = value;
                    break;
                case "--policy-class":
                    o.policyClass = value;
                    break;
                case "--source-alias":
                    o.sourceAlias = value;
                    break;
                case "--translate": {
                    int colon = value.indexOf(':');
                    if (colon <= 0 || colon == value.length() - 1) {
                        throw new UsageException("--translate '" + value + "' must be REMOTE_ALIAS:GROUP, e.g. A:my-group");
                    }
                    o.translations.add(new Translation(value.substring(0, colon), value.substring(colon + 1)));
                    break;
                }
                case "--hops":
                    o.hops.add(value);
                    break;
                case "--timeout-ms":
                    try {
                        o.timeoutMs = Long.parseLong(value);
                    } catch (NumberFormatException e) {
                        throw new UsageException("--timeout-ms '" + value + "' is not a whole number of milliseconds");
                    }
                    if (o.timeoutMs <= 0) {
                        throw new UsageException("--timeout-ms must be positive, not " + value);
                    }
                    break;
                default:
                    throw new UsageException("unknown argument '" + flag + "'; known: --bootstrap --separator --policy-class"
                        + " --source-alias --translate --hops --timeout-ms");
            }
        }
        if (o.bootstrap == null || o.bootstrap.isEmpty()) {
            throw new UsageException("--bootstrap HOST:PORT is required");
        }
        return o;
    }

    /** props is the map RemoteClusterUtils builds its MirrorClient from. */
    static Map<String, Object> props(Options o) {
        Map<String, Object> p = new HashMap<>();
        p.put("bootstrap.servers", o.bootstrap);
        if (o.policyClass != null) {
            p.put("replication.policy.class", o.policyClass);
        }
        if (o.separator != null) {
            p.put("replication.policy.separator", o.separator);
        }
        if (o.sourceAlias != null) {
            p.put("source.cluster.alias", o.sourceAlias);
        }
        return p;
    }

    static String probe(Options o) throws Exception {
        Map<String, Object> p = props(o);
        StringBuilder b = new StringBuilder();
        b.append('{');
        b.append("\"heartbeatTopics\":");
        appendList(b, RemoteClusterUtils.heartbeatTopics(p));
        b.append(",\"checkpointTopics\":");
        appendList(b, RemoteClusterUtils.checkpointTopics(p));
        b.append(",\"upstreamClusters\":");
        appendList(b, RemoteClusterUtils.upstreamClusters(p));

        TreeMap<String, Integer> hops = new TreeMap<>();
        for (String alias : o.hops) {
            hops.put(alias, RemoteClusterUtils.replicationHops(p, alias));
        }
        b.append(",\"replicationHops\":{");
        boolean first = true;
        for (Map.Entry<String, Integer> e : hops.entrySet()) {
            if (!first) {
                b.append(',');
            }
            first = false;
            appendString(b, e.getKey());
            b.append(':').append(e.getValue().intValue());
        }
        b.append('}');

        TreeMap<String, TreeMap<String, Long>> translated = new TreeMap<>();
        for (Translation t : o.translations) {
            Map<TopicPartition, OffsetAndMetadata> offsets =
                RemoteClusterUtils.translateOffsets(p, t.remoteAlias, t.group, Duration.ofMillis(o.timeoutMs));
            TreeMap<String, Long> byPartition = new TreeMap<>();
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
                byPartition.put(e.getKey().topic() + "-" + e.getKey().partition(), e.getValue().offset());
            }
            translated.put(t.remoteAlias + ":" + t.group, byPartition);
        }
        b.append(",\"translateOffsets\":{");
        first = true;
        for (Map.Entry<String, TreeMap<String, Long>> e : translated.entrySet()) {
            if (!first) {
                b.append(',');
            }
            first = false;
            appendString(b, e.getKey());
            b.append(":{");
            boolean firstPartition = true;
            for (Map.Entry<String, Long> pe : e.getValue().entrySet()) {
                if (!firstPartition) {
                    b.append(',');
                }
                firstPartition = false;
                appendString(b, pe.getKey());
                b.append(':').append(pe.getValue().longValue());
            }
            b.append('}');
        }
        b.append("}}");
        return b.toString();
    }

    static void appendList(StringBuilder b, Collection<String> values) {
        b.append('[');
        boolean first = true;
        for (String v : new TreeSet<>(values)) {
            if (!first) {
                b.append(',');
            }
            first = false;
            appendString(b, v);
        }
        b.append(']');
    }

    /** appendString writes s as a JSON string: quotes, backslashes and control characters escaped. */
    static void appendString(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    b.append("\\\"");
                    break;
                case '\\':
                    b.append("\\\\");
                    break;
                case '\n':
                    b.append("\\n");
                    break;
                case '\r':
                    b.append("\\r");
                    break;
                case '\t':
                    b.append("\\t");
                    break;
                case '\b':
                    b.append("\\b");
                    break;
                case '\f':
                    b.append("\\f");
                    break;
                default:
                    // Control characters and everything beyond ASCII are escaped, so the
                    // output does not depend on the JVM's default charset (locale-bound on 17).
                    if (c < 0x20 || c > 0x7e) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        b.append('"');
    }
}
