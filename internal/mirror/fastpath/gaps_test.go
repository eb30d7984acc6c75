package fastpath

import (
	"testing"
	"time"
)

// TestGonePartitionWithOpenBatchesAbortsTheTransaction: in exactly-once
// mode, a partition whose source topic is deleted while it holds batches of
// the open transaction whose fate is open (sent, and put back after a lost
// answer) must end the attempt: those batches may be on the target, and the
// transaction would commit them without the progress and index records
// that cover them. They were dropped without a word (the path 11).
func TestGonePartitionWithOpenBatchesAbortsTheTransaction(t *testing.T) {
	x := newFastFixture(0)
	x.f.lanes, x.f.pid = &lanes{ordered: true}, 7
	x.f.txn = newTxnState(Transactions{ID: "strait-A-0", Interval: time.Minute, Timeout: time.Minute}, "strait-index.A.internal")
	x.f.txn.added[tp{"A.t", 0}] = true
	x.fetched(t.Context(), fetchResp("t", encodeBatch(0, 3, 0, -1, nil)), 0)
	x.sendAll(t)
	x.answer(0, sendResult{state: sendFailed, err: errLeaseLapsed, request: true}) // a lost answer: open fate
	if len(x.fp.queue) != 1 || !x.f.holdsUnacked(x.fp) {
		t.Fatal("setup: the batch is not back in the queue with its fate open")
	}
	x.p.removed.Store(true)
	x.f.dropRemoved()
	if x.f.failed == nil {
		t.Fatal("the attempt goes on after a partition with batches of open fate in the transaction was dropped")
	}
}

// TestReaddedPartitionWaitsForTheOldOnesBatches: a partition added to the
// fast path while an earlier entry of the same source partition (a topic
// deleted and recreated) still has batches in flight replaced that entry:
// its queue's bytes stayed counted forever and, briefly, two entries wrote
// the partition (the path 11). The new entry waits until the old
// one's batches are answered.
func TestReaddedPartitionWaitsForTheOldOnesBatches(t *testing.T) {
	x := newFastFixture(0)
	x.f.lanes, x.f.pid = &lanes{ordered: true}, 7
	x.fetched(t.Context(), fetchResp("t", cat(encodeBatch(0, 3, 0, -1, nil), encodeBatch(3, 2, 0, -1, nil))), 0)
	x.sendAll(t)
	old := x.fp
	again := NewPart(testPartition(), 0)
	x.f.install([]*Part{again})
	if got := x.f.parts[tp{"t", 0}]; got != old {
		t.Fatal("the new entry replaced one with batches in flight")
	}
	x.f.finishLeaving()
	if got := x.f.parts[tp{"t", 0}]; got != old {
		t.Fatal("the new entry replaced one with batches in flight")
	}
	x.answer(0, sendResult{state: sendAcked, base: 0})
	x.f.finishLeaving()
	if got := x.f.parts[tp{"t", 0}]; got != again {
		t.Fatal("the new entry is not in place once the old one's batches were answered")
	}
	if x.f.buffered != 0 {
		t.Fatalf("%d bytes still counted after the old entry left", x.f.buffered)
	}
}
