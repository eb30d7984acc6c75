package mirror

// Exactly-once mode's ownership and failure edges. Each failed before its
// fix.

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
	"strait/internal/tail"
)

// TestAdoptedWhileAnAttemptStartsReadsFreshProgress: a partition a shared
// mirror comes to own between its attempt's progress read and its first
// topic set starts from what its previous owner committed meanwhile, read
// again; it started from the stale read before the fix (60 of 100 records
// copied twice).
func TestAdoptedWhileAnAttemptStartsReadsFreshProgress(t *testing.T) {
	const group, indexTopic = "strait-A", "strait-index.A.internal"
	a := kafkatest.NewFake(t, kfake.SeedTopics(1, "t"))
	b := kafkatest.NewFake(t, kfake.SeedTopics(1, "A.t", indexTopic))
	src := newClient(t, a)
	produceN(t, src, "t", 100)
	// The previous owner X copied t[0] 0..99 to A.t (plain records, as
	// if committed) and had committed progress 40 so far.
	bcl := newClient(t, b)
	produceN(t, bcl, "A.t", 100)
	badm := kadm.NewClient(bcl)
	commit := func(at int64) {
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: "A.t", Partition: 0, At: at, LeaderEpoch: -1})
		if _, err := badm.CommitOffsets(context.Background(), group, offs); err != nil {
			t.Error(err)
		}
	}
	commit(40)

	var owned, hooked atomic.Bool
	// index.Load lists the index topic's end right after this attempt read
	// progress: X's final commit (progress 100) and the assignment that
	// gives t[0] to this node land meanwhile.
	b.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		b.KeepControl()
		if !hooked.Swap(true) {
			b.SleepControl(func() {
				commit(100)
				owned.Store(true)
			})
		}
		return nil, nil, false
	})

	dst := newClient(t, b, TransactionOpts()...)
	m := New(Config{
		Flow: "A->B", Source: "A", Group: group, FlushInterval: 100 * time.Millisecond,
		AutoOffsetReset: "earliest", ReadCommitted: true, ShutdownTimeout: 5 * time.Second,
		IndexTopic: indexTopic, FastPath: true, Idempotent: true, Acks: -1,
		Transactions: &Transactions{ID: "strait-A-node", Interval: 100 * time.Millisecond, Timeout: 10 * time.Second},
		Share:        Share{Owns: func(string, int32) bool { return owned.Load() }},
	}, Clients{Source: newClient(t, a), Target: dst, Meta: newClient(t, b), IndexReader: newClient(t, b, tail.ClientOpts()...), SyncWriter: newClient(t, b)},
		slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	m.Update([]Topic{{Source: "t", Remote: "A.t", Partitions: 1}}, nil)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		p := m.partition("t", 0)
		if p == nil {
			return fmt.Errorf("t[0] not started")
		}
		if _, _, committed, err := p.snapshot(); err != nil || committed < 100 {
			return fmt.Errorf("t[0] committed %d (%v)", committed, err)
		}
		return nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	recs := kafkatest.ReadAll(t, b.ListenAddrs(), "A.t", kgo.ReadCommitted())
	if n := len(recs[0]); n != 100 {
		t.Fatalf("A.t holds %d records for the 100 of t: %d copied twice", n, n-100)
	}
}

// TestStoppedPartitionWithUnackedBatchesAbortsTheTransaction: a partition
// stopped for a source-side reason (as walkBatches or checkIncarnations
// stop it) while one of its batches has an open fate (its request got no
// answer: the target may have written it inside the transaction) ends the
// attempt. Before the fix the transaction committed: had the batch been
// written, the committed transaction held records its progress did not
// cover, copied again after a restart.
func TestStoppedPartitionWithUnackedBatchesAbortsTheTransaction(t *testing.T) {
	x := newFastFixture(0)
	f := x.f
	f.lanes = newLanes(nil, nil, f.log)
	var commits atomic.Int64
	f.txn = newTxnState(Transactions{ID: "tx", Interval: time.Hour, Timeout: 10 * time.Second}, "idx")
	f.deps.CommitTxn = func(context.Context, producerTxn, bool, bool, int32) (int32, error) {
		commits.Add(1)
		return 0, nil
	}
	f.usePID(7, 0)
	f.txn.added[tp{"A.t", 0}] = true
	f.dstMeta["A.t"] = topicMeta{leaders: []int32{1}}
	x.fetched(t.Context(), fetchResp("t", encodeBatch(0, 3, 0, -1, nil)))
	q := x.fp.queue[0]
	x.fp.takeHead()
	q.seq, q.pid, q.sendID = 0, 7, 1
	x.fp.sent = []*qbatch{q}
	// No answer: the batch may be on the target.
	f.record(sentRef{x.fp, 1}, sendResult{state: sendFailed, err: context.DeadlineExceeded, request: true}, time.Now())
	if f.settled() {
		t.Fatal("settled with a batch of open fate")
	}
	f.fail(x.fp, fmt.Errorf("source-side stop"))
	if f.txn.phase == txnOpen {
		f.txn.to(txnEnding)
		f.txn.ended = time.Now()
	}
	f.dispatch(t.Context(), t.Context())
	for f.running > 0 {
		ev := <-f.events
		f.running--
		f.handle(t.Context(), ev)
	}
	if f.failed == nil {
		t.Fatal("the attempt goes on after the partition stopped with a batch of open fate")
	}
	if commits.Load() > 0 {
		t.Fatalf("the transaction committed while a batch of open fate (source offsets 0..2) was dropped with its stopped partition, progress %d", acked(x.p))
	}
}
