package kafkaclient

import (
	"strings"
	"testing"

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
