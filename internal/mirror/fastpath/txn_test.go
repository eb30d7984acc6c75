package fastpath

// Exactly-once mode's ownership and failure edges. Each failed before its
// fix.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

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
	f.deps.CommitTxn = func(context.Context, Producer, bool, bool, int32) (int32, error) {
		commits.Add(1)
		return 0, nil
	}
	f.UsePID(7, 0)
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
