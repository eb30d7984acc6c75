//go:build integration

package mirror_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

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
	for _, h := range env.Clusters[1].RawBatches(t, topic, partition) {
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
	return data, transactional, markers
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

// TestExactlyOnceFencedNodeAbortsAndResumes copies in exactly-once mode
// while records keep arriving, and fences the node's transactional producer
// again and again from outside (an InitProducerID with its transactional id,
// as a restarted node with its slot does): each time its transaction
// aborts and it starts again from the last committed one. A second node
// then joins and shares the flow, and stops again. A read_committed reader
// finds every record exactly once and in order: the aborted attempts'
// records are never visible.
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
	id := mirrorStatus(first).TransactionalID
	more := a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceMore := func(n int) {
		var recs []*kgo.Record
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % 4), Value: fmt.Appendf(nil, "more-%d", i)})
		}
		if err := more.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for fenced := int64(1); fenced <= 3; fenced++ {
		// Fence it once its attempt since the last fence has committed:
		// fenced before its own InitProducerID, it would fence us.
		committed := mirrorStatus(first).Transactions
		produceMore(40)
		kafkatest.Eventually(t, time.Minute, func() error {
			if n := mirrorStatus(first).Transactions; n <= committed {
				return fmt.Errorf("no transaction committed since the last fence (%d)", n)
			}
			return nil
		})
		env.Clusters[1].FenceTransactionalID(t, id)
		produceMore(40) // records to write with the fenced producer
		kafkatest.Eventually(t, time.Minute, func() error {
			st := mirrorStatus(first)
			if st.AbortedTransactions < fenced {
				return fmt.Errorf("%d attempts aborted after %d fences of %s", st.AbortedTransactions, fenced, id)
			}
			return nil
		})
	}
	second, stopSecond := startDaemon(t, extra)
	kafkatest.Eventually(t, time.Minute, func() error {
		for _, f := range second.Status().Flows {
			if f.Share != nil && len(f.Share.Units) > 0 {
				return nil
			}
		}
		return fmt.Errorf("the second node owns no partition yet")
	})
	// More records, for both nodes to copy.
	committed := mirrorStatus(first).Transactions
	produceMore(400)
	kafkatest.Eventually(t, time.Minute, func() error {
		if f, s := mirrorStatus(first), mirrorStatus(second); s.Transactions == 0 || f.Transactions <= committed {
			return fmt.Errorf("the nodes committed %d and %d transactions since they share the flow", f.Transactions-committed, s.Transactions)
		}
		return nil
	})
	if err := stopSecond(); err != nil {
		t.Fatalf("the second node: %v", err)
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
