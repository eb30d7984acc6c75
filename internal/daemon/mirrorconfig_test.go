package daemon

import (
	"testing"
	"time"

	"strait/internal/config"
	"strait/internal/kafkaclient"
	"strait/internal/mirror"
)

// TestMirrorConfig: mirrorConfig turns a flow and its resolved client
// settings into a mirror.Config that Validates, with each default coming
// from its one home (kafkaclient's settings, the config, daemon.Options).
func TestMirrorConfig(t *testing.T) {
	const base = "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\n"
	names := mirrorTopicNames{Group: "strait-A", Index: "strait-index.A.internal", Sync: "mm2-offset-syncs.B.internal"}
	for _, tt := range []struct {
		name  string
		props string
		opts  Options
		check func(t *testing.T, c mirror.Config)
	}{
		{"defaults", "", Options{ShutdownTimeout: 30 * time.Second}, func(t *testing.T, c mirror.Config) {
			if c.MaxBuffered != kafkaclient.DefaultBufferMemory || c.LinkBuffer != mirror.LongLinkBuffer {
				t.Errorf("buffer %d + link %d, want buffer.memory's default and the long-link budget", c.MaxBuffered, c.LinkBuffer)
			}
			if c.FetchMaxBytes != kafkaclient.DefaultFetchMaxBytes || c.PartitionFetchSize != 0 {
				t.Errorf("fetch.max.bytes %d, max.partition.fetch.bytes %d (0: unset, asks grow)", c.FetchMaxBytes, c.PartitionFetchSize)
			}
			if c.FlushInterval != time.Second || c.AutoOffsetReset != "earliest" || !c.ReadCommitted || !c.FastPath {
				t.Errorf("flush %s, reset %q, read_committed %v, fast path %v", c.FlushInterval, c.AutoOffsetReset, c.ReadCommitted, c.FastPath)
			}
			if c.TakeoverTopic != "mm2-offsets.A.internal" || c.Transactions != nil || c.ShutdownTimeout != 30*time.Second {
				t.Errorf("takeover %q, transactions %v, shutdown %s", c.TakeoverTopic, c.Transactions, c.ShutdownTimeout)
			}
			if c.Flow != "A->B" || c.Group != names.Group || c.IndexTopic != names.Index || c.SyncTopic != names.Sync || !c.Idempotent || c.Acks != -1 {
				t.Errorf("names and producer: %+v", c)
			}
		}},
		{"buffer.memory set: no long-link budget", "B.producer.buffer.memory = 8388608\n", Options{ShutdownTimeout: time.Second}, func(t *testing.T, c mirror.Config) {
			if c.MaxBuffered != 8<<20 || c.LinkBuffer != 0 {
				t.Errorf("buffer %d + link %d, want 8 MiB + 0", c.MaxBuffered, c.LinkBuffer)
			}
		}},
		{"fetch sizes set", "A.consumer.fetch.max.bytes = 1048576\nA.consumer.max.partition.fetch.bytes = 65536\n", Options{ShutdownTimeout: time.Second}, func(t *testing.T, c mirror.Config) {
			if c.FetchMaxBytes != 1<<20 || c.PartitionFetchSize != 64<<10 {
				t.Errorf("fetch.max.bytes %d, max.partition.fetch.bytes %d", c.FetchMaxBytes, c.PartitionFetchSize)
			}
		}},
		{"exactly-once, no takeover, gzip", "strait.exactly.once = true\nB.producer.compression.type = gzip\n", Options{ShutdownTimeout: time.Second, NoMM2Takeover: true}, func(t *testing.T, c mirror.Config) {
			if c.Transactions == nil || c.Transactions.Interval <= 0 || c.Transactions.Timeout <= 0 || c.TakeoverTopic != "" || c.Compression != "gzip" {
				t.Errorf("transactions %+v, takeover %q, compression %q", c.Transactions, c.TakeoverTopic, c.Compression)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse("test.properties", []byte(base+tt.props), config.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := kafkaclient.NewPlan(cfg)
			if err != nil {
				t.Fatal(err)
			}
			fp := plan.Flow("A", "B")
			c := mirrorConfig(fp.Flow, fp.SourceConsumer.Mapped.Settings, fp.TargetProducer.Mapped.Settings, tt.opts, names)
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}
