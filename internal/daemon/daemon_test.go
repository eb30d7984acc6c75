package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/config"
	"strait/internal/index"
	"strait/internal/kafkatest"
	"strait/internal/verify"
)

func fakeConfig(t *testing.T, a, b *kfake.Cluster, extra string) *config.Config {
	t.Helper()
	props := fmt.Sprintf(`clusters = A, B
A.bootstrap.servers = %s
B.bootstrap.servers = %s
A->B.enabled = true
replication.factor = 1
offset-syncs.topic.replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
refresh.topics.interval.seconds = 1
%s`, a.ListenAddrs()[0], b.ListenAddrs()[0], extra)
	cfg, err := config.Parse("test.properties", []byte(props), config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runDaemon runs a daemon until the returned stop function is called.
func runDaemon(t *testing.T, cfg *config.Config) (*Daemon, func() error) {
	t.Helper()
	return runDaemonWith(t, cfg, Options{})
}

// nodeLogs returns a logger at info level whose lines the test logs if it
// fails, and the buffer that holds them.
func nodeLogs(t *testing.T) (*slog.Logger, *kafkatest.SyncBuffer) {
	t.Helper()
	logs := &kafkatest.SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs)
		}
	})
	return slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})), logs
}

// runDaemonWith is runDaemon with opts (a discarding logger and a 10 s
// shutdown timeout unless they are set).
func runDaemonWith(t *testing.T, cfg *config.Config, opts Options) (*Daemon, func() error) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = 10 * time.Second
	}
	d := New(cfg, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return d, stop
}

func produce(t *testing.T, cl *kgo.Client, topic string, partitions int32, from, n int) {
	t.Helper()
	var recs []*kgo.Record
	for i := from; i < from+n; i++ {
		recs = append(recs, &kgo.Record{
			Topic:     topic,
			Partition: int32(i) % partitions,
			Key:       []byte("k" + strconv.Itoa(i%50)),
			Value:     []byte("v" + strconv.Itoa(i)),
			Headers:   []kgo.RecordHeader{{Key: "i", Value: []byte(strconv.Itoa(i))}},
			Timestamp: time.UnixMilli(int64(1_000_000 + i)),
		})
	}
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func TestReplicatesAndResumes(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(4, "orders"))
	src := client(t, a, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(t, src, "orders", 4, 0, 2000)

	cfg := fakeConfig(t, a, b, "")
	d, stop := runDaemon(t, cfg)
	waitRecords(t, b, "A.orders", 2000)
	st := d.Status()
	if len(st.Flows) != 1 {
		t.Fatalf("status %+v", st)
	}
	var copied int64
	heartbeats := false
	for _, p := range st.Flows[0].Mirror.Partitions {
		switch p.Topic {
		case "orders":
			copied += p.Records
			if p.Path != "fast" {
				t.Errorf("orders[%d] is on the %s path", p.Partition, p.Path)
			}
		case "heartbeats": // written into A by the heartbeat-only pair B->A
			heartbeats = true
		}
	}
	if copied != 2000 || !heartbeats {
		t.Fatalf("copied %d records, heartbeats replicated %v: %+v", copied, heartbeats, st)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// A restart resumes from the stored progress: no duplicates.
	produce(t, src, "orders", 4, 2000, 1000)
	_, stop = runDaemon(t, cfg)
	waitRecords(t, b, "A.orders", 3000)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	srcRecs := kafkatest.ReadAll(t, a.ListenAddrs(), "orders", kgo.ReadCommitted())
	dstRecs := kafkatest.ReadAll(t, b.ListenAddrs(), "A.orders", kgo.ReadCommitted())
	for p := range srcRecs {
		rep := verify.Compare(int32(p), srcRecs[p], dstRecs[p])
		if !rep.OK() || rep.Duplicates != 0 {
			t.Errorf("%v", rep)
		}
	}

	// The offset index translates every source offset exactly.
	idxClient := client(t, b)
	m, err := index.Load(t.Context(), idxClient, index.TopicName("A"))
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 4; p++ {
		part := m.Parts[index.TP{Topic: "orders", Partition: p}]
		if part == nil {
			t.Fatalf("no index for partition %d", p)
		}
		for u := int64(0); u < 750; u += 50 {
			if got, _ := part.Translate(u); got != u {
				t.Errorf("partition %d: Translate(%d) = %d", p, u, got)
			}
		}
	}
}

func waitRecords(t *testing.T, c *kfake.Cluster, topic string, want int64) {
	t.Helper()
	adm := kadm.NewClient(client(t, c))
	kafkatest.Eventually(t, 30*time.Second, func() error {
		ends, err := adm.ListEndOffsets(t.Context(), topic)
		if err != nil {
			return err
		}
		var n int64
		ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
		if n < want {
			return fmt.Errorf("%s has %d of %d records", topic, n, want)
		}
		return nil
	})
}

// client is kafkatest.FakeClient.
func client(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	return kafkatest.FakeClient(t, c, opts...)
}

// TestThrottledFlowDoesNotStallAnother runs two flows between two clusters,
// one throttled far below its backlog: the other one copies its whole
// backlog while the throttled one has moved only what its limit allows.
func TestThrottledFlowDoesNotStallAnother(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(2, "slow", "fast"))
	// Put each topic's backlog on its own side: "slow" on A, "fast" on B.
	payload := make([]byte, 10_000)
	for _, side := range []struct {
		c     *kfake.Cluster
		topic string
	}{{a, "slow"}, {b, "fast"}} {
		cl := client(t, side.c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		var recs []*kgo.Record
		for i := 0; i < 200; i++ { // 2 MB
			recs = append(recs, &kgo.Record{Topic: side.topic, Partition: int32(i % 2), Value: payload})
		}
		if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fakeConfig(t, a, b, "B->A.enabled = true\nA->B.topics = slow\nB->A.topics = fast\nA->B.strait.throttle.bytes.per.second = 100000\nemit.heartbeats.enabled = false")
	d, stop := runDaemon(t, cfg)
	waitRecords(t, a, "B.fast", 200)
	var slow int64
	for _, f := range d.Status().Flows {
		if f.Name == "A->B" {
			slow = f.Mirror.Bytes
		}
	}
	// The throttled flow can have moved its burst plus 100 kB per second
	// since it started; the other flow finished 2 MB in that time.
	if slow >= 2_000_000 {
		t.Fatalf("the throttled flow copied %d bytes, all of its backlog", slow)
	}
	t.Logf("the unthrottled flow copied 2 MB while the throttled one copied %d bytes", slow)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestHeartbeatsReplication: the pair B->A writes heartbeats into A, and
// A->B replicates them as A.heartbeats even though `topics` does not
// name them, unless heartbeats.replication.enabled=false (KIP-1089: then
// heartbeats follow the topic filter like any topic).
func TestHeartbeatsReplication(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		t.Run(fmt.Sprint(enabled), func(t *testing.T) {
			a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(1, "orders"))
			client(t, a).ProduceSync(t.Context(), &kgo.Record{Topic: "orders", Value: []byte("x")})
			d, stop := runDaemon(t, fakeConfig(t, a, b, fmt.Sprintf("topics = orders\nheartbeats.replication.enabled = %v", enabled)))
			waitRecords(t, b, "A.orders", 1)
			waitRecords(t, a, "heartbeats", 2) // B->A has emitted
			waitRecords(t, b, "heartbeats", 2) // A->B has emitted
			replicated := false
			kafkatest.Eventually(t, 10*time.Second, func() error {
				for _, p := range d.Status().Flows[0].Mirror.Partitions {
					replicated = replicated || p.Topic == "heartbeats" && p.Records > 0
				}
				if enabled && !replicated {
					return fmt.Errorf("heartbeats not replicated yet")
				}
				return nil
			})
			if replicated != enabled {
				t.Fatalf("heartbeats replicated = %v with heartbeats.replication.enabled = %v", replicated, enabled)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestHeartbeatsIntoClusterWithoutBootstrap: a cluster that no enabled flow
// uses may lack bootstrap.servers (check warns that heartbeats into it
// cannot be emitted); run skips those heartbeats and replicates the rest, as
// check says, instead of failing.
func TestHeartbeatsIntoClusterWithoutBootstrap(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(1, "orders"))
	client(t, a).ProduceSync(t.Context(), &kgo.Record{Topic: "orders", Value: []byte("x")})
	props := fmt.Sprintf(`clusters = A, B, C
A.bootstrap.servers = %s
B.bootstrap.servers = %s
A->B.enabled = true
topics = orders
replication.factor = 1
offset-syncs.topic.replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
`, a.ListenAddrs()[0], b.ListenAddrs()[0])
	cfg, err := config.Parse("test.properties", []byte(props), config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, stop := runDaemon(t, cfg)
	waitRecords(t, b, "A.orders", 1)
	waitRecords(t, b, "heartbeats", 1) // A->B and C->B still emit into B
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
