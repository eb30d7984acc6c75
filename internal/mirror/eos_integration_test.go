//go:build integration

package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/index"
	"strait/internal/kafkatest"
	"strait/internal/mirror"
	"strait/internal/offsets"
	"strait/internal/tail"
	"strait/internal/verify"
)

// checkExactlyOnce compares each partition of a source topic, as a
// read_committed consumer reads it, with its remote topic read the same
// way: every record once, in order, nothing else; and every source offset
// translates through the offset index to its own copy.
func checkExactlyOnce(t *testing.T, topic string) {
	t.Helper()
	a, b := env.Clusters[0], env.Clusters[1]
	idx, err := index.Load(t.Context(), b.Client(t, tail.ClientOpts()...), index.TopicName("A"))
	if err != nil {
		t.Fatal(err)
	}
	src := a.ReadAll(t, topic, kgo.ReadCommitted())
	dst := b.ReadAll(t, "A."+topic, kgo.ReadCommitted())
	for p := range src {
		rep := verify.Compare(int32(p), src[p], dst[p])
		if !rep.OK() || rep.Duplicates != 0 {
			t.Errorf("%s[%d]: %v", topic, p, rep)
		}
		byOffset := map[int64]*kgo.Record{}
		for _, r := range dst[p] {
			byOffset[r.Offset] = r
		}
		for _, r := range src[p] {
			tgt, res := idx.Translate(topic, int32(p), r.Offset)
			if res != offsets.Exact || byOffset[tgt] == nil || !verify.Same(r, byOffset[tgt]) {
				t.Fatalf("%s[%d]: source offset %d translates to %d (%v), which is not its copy", topic, p, r.Offset, tgt, res)
			}
		}
	}
}

// targetBatches counts a remote partition's data batches, those of them
// written inside a transaction, and its transaction markers.
func targetBatches(t *testing.T, topic string, partition int32) (data, transactional, markers int) {
	t.Helper()
	cl := env.Clusters[1].Client(t)
	md, err := kadm.NewClient(cl).ListTopics(t.Context(), topic)
	if err != nil {
		t.Fatal(err)
	}
	for offset := int64(0); ; {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch = -1, 100, 64<<20, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, md[topic].ID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = partition, offset, 64<<20, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := cl.Request(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		got := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
		start := offset
		for rest := got.RecordBatches; len(rest) > 0; {
			h, err := batch.Parse(rest)
			if errors.Is(err, batch.ErrPartial) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			rest = rest[h.Size():]
			offset = h.NextOffset()
			switch {
			case h.Control():
				markers++
			default:
				data++
				if h.Transactional() {
					transactional++
				}
			}
		}
		if offset == start || offset >= got.HighWatermark {
			return data, transactional, markers
		}
	}
}

// TestExactlyOnceWritesInTransactions copies a transactional source (with
// aborted transactions) and a plain one in exactly-once mode: every data
// batch on the target is transactional, markers commit them, a
// read_committed reader finds every committed source record once and in
// order, the offset index translates every source offset to its copy, and
// the progress group holds the source's end.
func TestExactlyOnceWritesInTransactions(t *testing.T) {
	a := env.Clusters[0]
	prefix := kafkatest.Name(t, "eos")
	topics := []string{prefix + "-txn", prefix + "-plain"}
	for i, topic := range topics {
		a.CreateTopic(t, topic, 3, nil)
		produce(t, topic, 3, 6000, kgo.Lz4Compression(), i == 0)
	}
	d := runDaemon(t, "topics = "+prefix+".*\nstrait.exactly.once = true\nB.offset.flush.interval.ms = 200")
	for _, topic := range topics {
		waitProgress(t, topic)
	}
	st := d.Status().Flows[0].Mirror
	if !st.ExactlyOnce || st.Transactions == 0 || st.AbortedTransactions != 0 {
		t.Fatalf("status: exactly_once %v, %d transactions, %d aborted", st.ExactlyOnce, st.Transactions, st.AbortedTransactions)
	}
	for _, topic := range topics {
		checkExactlyOnce(t, topic)
		for p := range int32(3) {
			data, txn, markers := targetBatches(t, "A."+topic, p)
			if data == 0 || txn != data || markers == 0 {
				t.Errorf("A.%s[%d]: %d data batches, %d of them transactional, %d markers", topic, p, data, txn, markers)
			}
		}
	}
}

// TestExactlyOnceFencedNodeAbortsAndResumes runs two nodes on one config in
// exactly-once mode while records keep arriving: they share the
// transactional id, so each InitProducerID fences the other, whose
// transaction aborts and which starts again from the last committed one.
// Once one of them stops, the other copies the rest. A read_committed
// reader then finds every record exactly once and in order: the aborted
// attempts' records are never visible.
func TestExactlyOnceFencedNodeAbortsAndResumes(t *testing.T) {
	a := env.Clusters[0]
	topic := kafkatest.Name(t, "eos-fenced")
	a.CreateTopic(t, topic, 4, nil)
	extra := "topics = " + topic + "\nstrait.exactly.once = true\nB.offset.flush.interval.ms = 200"

	// A producer that keeps writing while the two nodes fence each other.
	ctx, stopProducing := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		cl := a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(2*time.Millisecond))
		for i := 0; ctx.Err() == nil && i < 200_000; i++ {
			r := &kgo.Record{Topic: topic, Partition: int32(i % 4), Value: fmt.Appendf(nil, "record-%d", i)}
			cl.Produce(ctx, r, nil)
			if i%500 == 499 {
				if err := cl.Flush(ctx); err != nil && ctx.Err() == nil {
					t.Errorf("producing: %v", err)
					return
				}
			}
		}
		_ = cl.Flush(context.WithoutCancel(ctx))
	})

	first := runDaemon(t, extra)
	kafkatest.Eventually(t, time.Minute, func() error {
		if n := mirrorStatus(first).Transactions; n < 3 {
			return fmt.Errorf("%d transactions committed by the first node", n)
		}
		return nil
	})
	second, stopSecond := startDaemon(t, extra)
	kafkatest.Eventually(t, time.Minute, func() error {
		f, s := mirrorStatus(first), mirrorStatus(second)
		if f.AbortedTransactions+s.AbortedTransactions < 2 || s.Transactions == 0 {
			return fmt.Errorf("aborted %d and %d, the second node committed %d", f.AbortedTransactions, s.AbortedTransactions, s.Transactions)
		}
		return nil
	})
	if err := stopSecond(); err != nil {
		t.Logf("the second node: %v", err) // fenced while it stopped: its last transaction did not commit
	}
	stopProducing()
	wg.Wait()
	waitProgress(t, topic)
	checkExactlyOnce(t, topic)
}

// mirrorStatus is the status of a daemon's only flow, empty before it runs.
func mirrorStatus(d *daemon.Daemon) mirror.Status {
	if st := d.Status(); len(st.Flows) > 0 {
		return st.Flows[0].Mirror
	}
	return mirror.Status{}
}

// startDaemon runs a daemon like runDaemon, and returns a function that
// stops it and returns what Run returned.
func startDaemon(t *testing.T, extra string) (*daemon.Daemon, func() error) {
	t.Helper()
	props := env.MM2Properties("emit.heartbeats.enabled = false\n" + extra)
	cfg, err := config.Parse("test.properties", []byte(props), config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := daemon.New(cfg, daemon.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return d, stop
}
