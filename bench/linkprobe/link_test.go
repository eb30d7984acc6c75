//go:build linkprobe

// Package linkprobe is a quick probe of Strait's fast path across a long
// link, for tuning it: two Kafka clusters, the source behind kafkatest's
// toxiproxy with a latency toxic, one backlog per run copied by Strait in
// this process, steady MB/s printed per run, configurations alternating.
// The bench's -matrix distance is the comparison with MM2; this probe
// starts in seconds and varies Strait's settings alone:
//
//	go test -tags linkprobe -count=1 -v -timeout 30m ./bench/linkprobe \
//	  -args -rtt 150ms -records 800000 -runs 3 -limit \
//	  -variant '' -variant 'A.consumer.max.partition.fetch.bytes = 4194304'
//
// A variant is properties added to the file; "|" separates lines.
package linkprobe

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/kafkatest"
)

type variants []string

func (v *variants) String() string     { return strings.Join(*v, "; ") }
func (v *variants) Set(s string) error { *v = append(*v, s); return nil }

var (
	env        *kafkatest.Env
	rtt        = flag.Duration("rtt", 150*time.Millisecond, "round trip between Strait and the source")
	capKiB     = flag.Int64("cap-kib", 0, "bandwidth cap per connection from the source, KiB/s (0: none)")
	partitions = flag.Int("partitions", 8, "partitions of the backlog")
	records    = flag.Int("records", 800000, "records of the backlog, per run")
	size       = flag.Int("record-size", 1024, "bytes per record")
	runs       = flag.Int("runs", 3, "runs per variant, alternating")
	series     = flag.Bool("series", false, "log the records on B every 250 ms of each copy")
	limit      = flag.Bool("limit", false, "before each run, time one franz-go consumer (4 MiB per partition) across the link")
	variantsF  variants
)

func init() {
	flag.Var(&variantsF, "variant", "properties added for one configuration (repeatable; '|' separates lines)")
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(kafkatest.RunWith(m, kafkatest.Options{Clusters: 2, Proxies: true, Heap: "1g"}, &env))
}

func TestLongLink(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	for _, p := range a.Proxies() {
		p.Latency(t, kafkatest.Both, *rtt/2, 0)
		if *capKiB > 0 {
			p.Bandwidth(t, kafkatest.Downstream, *capKiB)
		}
	}
	vs := variantsF
	if len(vs) == 0 {
		vs = variants{""}
	}
	total := int64(*records)
	mb := float64(total*int64(*size)) / 1e6
	for i := range *runs * len(vs) {
		variant := vs[i%len(vs)]
		topic := fmt.Sprintf("link-%d", i)
		preload(t, topic)
		if *limit {
			t.Logf("LIMIT franz-go alone: %.1f MB/s", mb/consumeAll(t, a.ProxyBootstrap(), topic, total).Seconds())
		}
		syscall.Sync() // as the bench: the preload's writeback would throttle the copy
		steady, middle, first := copyOnce(t, topic, total, strings.ReplaceAll(variant, "|", "\n"))
		t.Logf("RESULT variant=%q rtt=%v partitions=%d: steady %.1f MB/s, middle 80%% %.1f MB/s, first record after %v", variant, *rtt, *partitions, mb/steady.Seconds(), 0.8*mb/middle.Seconds(), first.Round(time.Millisecond))
		_, _ = kadm.NewClient(b.Client(t)).DeleteTopic(t.Context(), "A."+topic)
		_, _ = kadm.NewClient(a.Client(t)).DeleteTopic(t.Context(), topic)
	}
}

// preload writes the backlog straight to A (not across the link),
// uncompressed, round robin over the partitions.
func preload(t *testing.T, topic string) {
	a := env.Clusters[0]
	a.CreateTopic(t, topic, int32(*partitions), nil)
	cl := a.Client(t, kgo.ProducerLinger(5*time.Millisecond), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MaxBufferedRecords(100000), kgo.ProducerBatchCompression(kgo.NoCompression()))
	val := make([]byte, *size)
	for i := range val {
		val[i] = byte('a' + rand.IntN(26))
	}
	for i := range *records {
		cl.Produce(t.Context(), &kgo.Record{Topic: topic, Partition: int32(i % *partitions), Value: val}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Error(err)
			}
		})
	}
	if err := cl.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// consumeAll reads total records of topic from the start and returns the
// time from the first record to the last.
func consumeAll(t *testing.T, bootstrap, topic string, total int64) time.Duration {
	c, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.FetchMaxPartitionBytes(4<<20),
		kgo.FetchMaxBytes(64<<20), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int64
	var first time.Time
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	for n < total && ctx.Err() == nil {
		c.PollFetches(ctx).EachRecord(func(*kgo.Record) {
			if first.IsZero() {
				first = time.Now()
			}
			n++
		})
	}
	return time.Since(first)
}

// copyOnce runs Strait on topic until B holds every record, and returns
// the time from the first record on B to the last, the time B took from
// 10 % to 90 % of the records (the rate once the asks have grown, before
// the last partitions trail), and the time from start to the first record.
func copyOnce(t *testing.T, topic string, total int64, extra string) (steady, middle, first time.Duration) {
	a, b := env.Clusters[0], env.Clusters[1]
	props := fmt.Sprintf(`clusters = A, B
A.bootstrap.servers = %s
B.bootstrap.servers = %s
A->B.enabled = true
A->B.topics = %s
A->B.groups =
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
emit.heartbeats.enabled = false
%s
`, a.ProxyBootstrap(), b.Bootstrap, topic, extra)
	cfg, err := config.Parse("linkprobe.properties", []byte(props), config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := daemon.New(cfg, daemon.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("strait: %v", err)
		}
	}()
	adm := kadm.NewClient(b.Client(t))
	var firstAt, tenth, ninetieth, lastSample time.Time
	var lastSum int64
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		ends, err := adm.ListEndOffsets(t.Context(), "A."+topic)
		var sum int64
		if err == nil {
			ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
		}
		if *series && time.Since(lastSample) >= 250*time.Millisecond && sum > 0 {
			t.Logf("SERIES %6.2fs %9d records (+%.1f MB/s)", time.Since(start).Seconds(), sum, float64((sum-lastSum)*int64(*size))/1e6/time.Since(lastSample).Seconds())
			lastSample, lastSum = time.Now(), sum
		}
		if sum > 0 && firstAt.IsZero() {
			firstAt = time.Now()
		}
		if sum >= total/10 && tenth.IsZero() {
			tenth = time.Now()
		}
		if sum >= total*9/10 && ninetieth.IsZero() {
			ninetieth = time.Now()
		}
		if sum >= total {
			return time.Since(firstAt), ninetieth.Sub(tenth), firstAt.Sub(start)
		}
	}
	t.Fatalf("%s: not copied within 10 minutes", topic)
	return 0, 0, 0
}
