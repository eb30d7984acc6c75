package kafkaclient

import (
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/config"
)

func client(kv ...string) config.Client {
	var c config.Client
	for i := 0; i+1 < len(kv); i += 2 {
		c.Props = append(c.Props, config.ClientProp{
			Key: kv[i], Value: config.NewSecret(kv[i+1]),
			Origin: config.Origin{Key: "B.producer." + kv[i], Line: i/2 + 1},
		})
	}
	return c
}

func TestMap(t *testing.T) {
	tests := []struct {
		name     string
		role     Role
		props    []string
		want     func(Settings) bool
		opts     int    // franz-go options expected
		warnWith string // a warning must contain this
		errWith  string // the error must contain this
	}{
		{name: "defaults", role: Consumer, want: func(s Settings) bool {
			return s.AutoOffsetReset == "earliest" && s.ReadCommitted
		}},
		{name: "producer settings map to options", role: Producer,
			props: []string{"compression.type", "zstd", "linger.ms", "20", "acks", "all", "max.request.size", "2097152", "buffer.memory", "67108864", "delivery.timeout.ms", "120000"},
			opts:  7, want: func(s Settings) bool {
				return s.Compression == "zstd" && s.BufferBytes == 67108864 && s.Idempotent
			}},
		{name: "acks=1 disables idempotence", role: Producer, props: []string{"acks", "1"},
			want: func(s Settings) bool { return !s.Idempotent && s.Acks == "1" }},
		{name: "acks=-1 is all", role: Producer, props: []string{"acks", "-1"},
			want: func(s Settings) bool { return s.Idempotent && s.Acks == "all" }},
		{name: "enable.idempotence=false keeps acks=all", role: Producer, props: []string{"enable.idempotence", "false"},
			want: func(s Settings) bool { return !s.Idempotent && s.Acks == "all" }, warnWith: "retries may duplicate records"},
		{name: "in-flight with idempotence is left to franz-go", role: Producer, props: []string{"max.in.flight.requests.per.connection", "5"}, warnWith: "managed by franz-go"},
		{name: "too many in flight for idempotence", role: Producer, props: []string{"max.in.flight.requests.per.connection", "6"}, errWith: "at most 5"},
		{name: "Strait names transactional ids", role: Producer, props: []string{"transactional.id", "t"}, warnWith: "transactional.id is ignored: Strait names its transactional ids itself (the progress group and the node), so that restarts fence their predecessors"},
		{name: "transaction.timeout.ms outside exactly-once mode", role: Producer, props: []string{"transaction.timeout.ms", "30000"}, warnWith: "transaction.timeout.ms applies only in exactly-once mode"},
		{name: "batch.size has no equivalent", role: Producer, props: []string{"batch.size", "16384"}, warnWith: "batch.size has no franz-go equivalent"},
		{name: "unknown producer key", role: Producer, props: []string{"foo.bar", "1"}, warnWith: "foo.bar is not a Java producer setting"},
		{name: "bad compression", role: Producer, props: []string{"compression.type", "brotli"}, errWith: `compression.type must be one of none, gzip, snappy, lz4, zstd; got "brotli"`},
		{name: "compression level of the codec in use", role: Producer, props: []string{"compression.type", "zstd", "compression.zstd.level", "-7"},
			want: func(s Settings) bool { return s.Compression == "zstd" && s.CompressionLevel == -7 }},
		{name: "compression level before compression.type", role: Producer, props: []string{"compression.gzip.level", "9", "compression.type", "GZIP"},
			want: func(s Settings) bool { return s.Compression == "gzip" && s.CompressionLevel == 9 }},
		{name: "no compression level is the default", role: Producer, props: []string{"compression.type", "lz4"},
			want: func(s Settings) bool { return s.Compression == "lz4" && s.CompressionLevel == 0 }},
		{name: "level of another codec is accepted without effect", role: Producer, props: []string{"compression.type", "gzip", "compression.zstd.level", "5"},
			want:     func(s Settings) bool { return s.Compression == "gzip" && s.CompressionLevel == 0 },
			warnWith: "compression.zstd.level has no effect with compression.type=gzip: it sets the level of zstd only; set compression.type=zstd to use it"},
		{name: "level without compression.type", role: Producer, props: []string{"compression.lz4.level", "12"},
			want:     func(s Settings) bool { return s.Compression == "" && s.CompressionLevel == 0 },
			warnWith: "compression.lz4.level has no effect with compression.type unset (none)"},
		{name: "gzip level 0", role: Producer, props: []string{"compression.type", "gzip", "compression.gzip.level", "0"},
			errWith: `key "B.producer.compression.gzip.level" (line 2): compression.gzip.level must be between 1 and 9, or -1 (the default); got 0`},
		{name: "gzip level 10", role: Producer, props: []string{"compression.gzip.level", "10"}, errWith: "compression.gzip.level must be between 1 and 9, or -1 (the default); got 10"},
		{name: "lz4 level 0", role: Producer, props: []string{"compression.lz4.level", "0"}, errWith: "compression.lz4.level must be between 1 and 17 (9 is the default); got 0"},
		{name: "lz4 level 18", role: Producer, props: []string{"compression.type", "lz4", "compression.lz4.level", "18"}, errWith: "compression.lz4.level must be between 1 and 17 (9 is the default); got 18"},
		{name: "zstd level 23", role: Producer, props: []string{"compression.type", "zstd", "compression.zstd.level", "23"}, errWith: "compression.zstd.level must be between -131072 and 22 (3 is the default); got 23"},
		{name: "zstd level too low", role: Producer, props: []string{"compression.zstd.level", "-131073"}, errWith: "compression.zstd.level must be between -131072 and 22 (3 is the default); got -131073"},
		{name: "an inert level is still checked", role: Producer, props: []string{"compression.type", "gzip", "compression.zstd.level", "99"}, errWith: "compression.zstd.level must be between -131072 and 22"},
		{name: "level not a number", role: Producer, props: []string{"compression.zstd.level", "high"}, errWith: `compression.zstd.level must be an integer; got "high"`},
		{name: "bad number names the key and line", role: Producer, props: []string{"linger.ms", "soon"}, errWith: `key "B.producer.linger.ms" (line 1): linger.ms must be a non-negative integer, got "soon"`},
		{name: "consumer settings", role: Consumer,
			props: []string{"auto.offset.reset", "latest", "isolation.level", "read_uncommitted", "fetch.max.bytes", "1048576", "max.partition.fetch.bytes", "65536", "fetch.min.bytes", "1", "fetch.max.wait.ms", "100", "max.poll.records", "2000"},
			opts:  4, warnWith: "copies records of aborted transactions",
			want: func(s Settings) bool {
				return s.AutoOffsetReset == "latest" && !s.ReadCommitted && s.PartitionFetchBytes == 65536 && s.FetchMaxBytes == 1048576
			}},
		{name: "group settings do not apply", role: Consumer, props: []string{"group.id", "g"}, warnWith: "without a consumer group"},
		{name: "auto commit is ignored", role: Consumer, props: []string{"enable.auto.commit", "true"}, warnWith: "only after the target acknowledged"},
		{name: "bad reset", role: Consumer, props: []string{"auto.offset.reset", "smallest"}, errWith: "auto.offset.reset must be earliest, latest or none"},
		{name: "TLS with the system roots", role: Admin, props: []string{"security.protocol", "SSL"}, opts: 1},
		{name: "TLS problems come through", role: Admin, props: []string{"security.protocol", "SSL", "ssl.keystore.password", "x"}, errWith: "ssl.keystore.password"},
		{name: "SASL needs a JAAS config", role: Consumer, props: []string{"security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN"}, errWith: "sasl.jaas.config"},
		{name: "ssl keys without TLS warn", role: Producer, props: []string{"ssl.truststore.location", "/x.jks"}, warnWith: "has no effect with security.protocol=PLAINTEXT"},
		{name: "common keys", role: Admin, props: []string{"request.timeout.ms", "30000", "metadata.max.age.ms", "1000", "client.rack", "r1", "default.api.timeout.ms", "60000"}, opts: 4},
		{name: "java-only common keys warn", role: Admin, props: []string{"interceptor.classes", "x.Y"}, warnWith: "no franz-go equivalent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Map(tt.role, client(tt.props...))
			if tt.errWith != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errWith) {
					t.Fatalf("error %v, want it to contain %q", err, tt.errWith)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != nil && !tt.want(m.Settings) {
				t.Errorf("settings %+v", m.Settings)
			}
			if tt.opts > 0 && len(m.Opts) != tt.opts {
				t.Errorf("%d options, want %d", len(m.Opts), tt.opts)
			}
			if tt.warnWith != "" {
				found := false
				for _, w := range m.Warnings {
					found = found || strings.Contains(w.String(), tt.warnWith)
				}
				if !found {
					t.Errorf("warnings %v lack %q", m.Warnings, tt.warnWith)
				}
			}
		})
	}
}

func TestNewNeedsBootstrap(t *testing.T) {
	_, _, err := New(Admin, config.Client{Cluster: "A"}, Identity{Flow: "A->B", Role: "x"}, nil)
	if err == nil || !strings.Contains(err.Error(), "set A.bootstrap.servers") {
		t.Fatalf("err %v", err)
	}
}

// TestProducerCompressionLevel checks the option the record path's
// producer is built with: the codec at the franz-go level Kafka's level
// maps to (batch.Compression.Kgo), never Kafka's number as it is.
func TestProducerCompressionLevel(t *testing.T) {
	tests := []struct {
		props []string
		want  kgo.CompressionCodec
	}{
		{[]string{"compression.type", "zstd", "compression.zstd.level", "19"}, kgo.ZstdCompression().WithLevel(int(zstd.SpeedBestCompression))},
		{[]string{"compression.type", "zstd", "compression.zstd.level", "1"}, kgo.ZstdCompression().WithLevel(int(zstd.SpeedFastest))},
		{[]string{"compression.type", "zstd"}, kgo.ZstdCompression()},
		{[]string{"compression.type", "gzip", "compression.gzip.level", "1"}, kgo.GzipCompression().WithLevel(1)},
		{[]string{"compression.type", "gzip", "compression.gzip.level", "-1"}, kgo.GzipCompression()},
		{[]string{"compression.type", "lz4", "compression.lz4.level", "17"}, kgo.Lz4Compression().WithLevel(int(lz4.Level8))},
		{[]string{"compression.type", "lz4", "compression.lz4.level", "9"}, kgo.Lz4Compression()},
		{[]string{"compression.type", "lz4", "compression.gzip.level", "9"}, kgo.Lz4Compression()},
		{[]string{"compression.type", "snappy", "compression.zstd.level", "9"}, kgo.SnappyCompression()},
	}
	for _, tt := range tests {
		c := client(append([]string{"bootstrap.servers", "127.0.0.1:1"}, tt.props...)...)
		m, err := Map(Producer, c)
		if err != nil {
			t.Fatalf("%v: %v", tt.props, err)
		}
		cl, err := Build(m, c, Identity{Flow: "A->B", Role: "replication-producer"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := cl.OptValue(kgo.ProducerBatchCompression)
		cl.Close()
		if want := []kgo.CompressionCodec{tt.want}; !reflect.DeepEqual(got, want) {
			t.Errorf("%v: the producer compresses with %+v, want %+v", tt.props, got, want)
		}
	}
}
