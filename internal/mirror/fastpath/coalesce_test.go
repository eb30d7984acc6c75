package fastpath

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/batch"
	"strait/internal/offsets"
)

// Queued batches of a few records are merged before they are sent, up to
// mergeMaxBytes, and never across a batch that is skipped (an aborted
// transaction's), one sent before (it goes again as it was), or one too
// large to gain from it. Acknowledged, a merged batch maps every source
// offset to its target offset exactly, and the bytes held stay counted.
func TestCoalesceMergesQueuedBatches(t *testing.T) {
	x := newFastFixture(0)
	x.f.lanes, x.f.pid = &lanes{ordered: true}, 7
	var src []byte
	for off := range int64(6) { // 0..5: one record each
		src = append(src, encodeBatch(off, 1, 0, -1, nil)...)
	}
	src = cat(src,
		encodeBatch(6, 2, attrTxn, 42, nil), // 6..7: aborted, skipped
		abortMarker(8, 42),
		encodeBatch(9, 3, 0, -1, nil), // 9..11
		// 12: a batch compaction removed
		encodeBatch(13, 1, 0, -1, nil),
		encodeBatch(14, 1, 0, -1, make([]byte, mergeMaxBytes)), // too large to merge
		encodeBatch(15, 2, 0, -1, nil),                         // 15..16
	)
	x.fetched(t.Context(), fetchResp("t", src, abortedTxn(42, 6)), 0)
	if len(x.fp.queue) != 12 {
		t.Fatalf("%d batches queued, want 12", len(x.fp.queue))
	}
	// The head was sent once and failed: it must go again as it was.
	x.fp.queue[0].sendID, x.fp.queue[0].seq, x.fp.queue[0].pid = 1, 0, 7

	x.f.coalesce(x.fp, 5)

	type shape struct {
		base    int64
		records int32
	}
	var got []shape
	for _, q := range x.fp.queue {
		got = append(got, shape{q.h.BaseOffset, q.h.NumRecords})
	}
	want := []shape{{0, 1}, {1, 5}, {6, 2}, {8, 1}, {9, 4}, {14, 1}, {15, 2}}
	if !slices.Equal(got, want) {
		t.Fatalf("queue after coalescing (base offset, records): %v, want %v", got, want)
	}
	if x.f.buffered != int64(x.fp.queueBytes) {
		t.Fatalf("buffered %d, queued bytes %d", x.f.buffered, x.fp.queueBytes)
	}

	// Acknowledge everything in order at target offsets from 0.
	tgt := int64(0)
	for len(x.fp.queue) > 0 {
		q := x.fp.takeHead()
		if q.skip {
			x.fp.queue = append([]*qbatch{q}, x.fp.queue...)
			x.f.applySkips(x.fp)
			continue
		}
		q.pid, x.fp.sentOn = x.f.pid, laneKey{broker: 1}
		x.fp.sendIDs++
		q.sendID = x.fp.sendIDs
		x.fp.sent = append(x.fp.sent, q)
		x.f.record(sentRef{x.fp, q.sendID}, sendResult{state: sendAcked, base: tgt}, time.Now())
		tgt += int64(q.h.NumRecords)
	}
	if x.f.buffered != 0 || x.fp.queueBytes != 0 {
		t.Fatalf("after every ack: buffered %d, queued bytes %d", x.f.buffered, x.fp.queueBytes)
	}
	if got := acked(x.p); got != 17 {
		t.Fatalf("acked up to %d, want 17", got)
	}
	// Source offset -> target offset of the record a consumer reads next.
	for src, want := range map[int64]int64{0: 0, 1: 1, 5: 5, 6: 6, 8: 6, 9: 6, 11: 8, 12: 9, 13: 9, 14: 10, 15: 11, 16: 12} {
		if got, res := x.p.idx.Translate(src); got != want || res != offsets.Exact {
			t.Errorf("source offset %d translates to %d (%v), want %d exactly", src, got, res, want)
		}
	}
}

// A batch that cannot be merged (its records do not decode) is left as
// fetched, for the target to judge, and the batches around it still go.
func TestCoalesceLeavesUndecodableBatches(t *testing.T) {
	x := newFastFixture(0)
	x.f.lanes, x.f.pid = &lanes{ordered: true}, 7
	x.fetched(t.Context(), fetchResp("t", cat(encodeBatch(0, 1, 0, -1, nil), encodeBatch(1, 2, 0, -1, nil))), 0)
	bad := x.fp.queue[1]
	bad.h.NumRecords = 3 // the header says more records than the batch holds
	x.f.coalesce(x.fp, 5)
	if len(x.fp.queue) != 2 || x.fp.queue[1] != bad {
		t.Fatalf("queue of %d batches after coalescing an undecodable run, want both as fetched", len(x.fp.queue))
	}
	if !batch.Mergeable(x.fp.queue[0].h) {
		t.Fatal("the first batch should still be mergeable")
	}
}

// A partition with little queued sends on its broker's first connection,
// shared with the others; one with a backlog on a connection of its own.
// It moves only once nothing it sent is in flight; a backlog waits for
// that to move to its own connection.
func TestLaneFollowsTheBacklog(t *testing.T) {
	x := newFastFixture(0)
	x.f.lanes = &lanes{clients: make([]*kgo.Client, 4), ordered: true}
	x.fp.conn = 6 // connection 2 of 4 when it has a backlog
	lane := func() (int, bool) {
		l, ok := x.f.laneOf(x.fp, 1)
		if l.broker != 1 {
			t.Fatalf("lane to broker %d, want 1", l.broker)
		}
		return l.conn, ok
	}
	if conn, ok := lane(); conn != 0 || !ok {
		t.Fatalf("idle partition: connection %d (may send %v), want 0", conn, ok)
	}
	send := func(conn int) { x.fp.sent, x.fp.sentOn = []*qbatch{{}}, laneKey{1, conn} }
	send(0)
	x.fp.queueBytes = spreadBytes
	if conn, ok := lane(); conn != 0 || ok {
		t.Fatalf("backlog with a batch in flight on connection 0: connection %d, may send %v; want to wait on 0", conn, ok)
	}
	x.fp.sent = nil
	if conn, ok := lane(); conn != 2 || !ok {
		t.Fatalf("backlog, nothing in flight: connection %d (may send %v), want 2", conn, ok)
	}
	send(2)
	x.fp.queueBytes = 100
	if conn, ok := lane(); conn != 2 || !ok {
		t.Fatalf("drained with a batch in flight on connection 2: connection %d (may send %v), want 2", conn, ok)
	}
	x.fp.sent = nil
	if conn, ok := lane(); conn != 0 || !ok {
		t.Fatalf("drained, nothing in flight: connection %d (may send %v), want 0", conn, ok)
	}
}

// TestCoalesceKeepsUnderTheTopicLimit: merging never builds a batch larger
// than the remote topic's max.message.bytes, known since the partition
// started: on a topic limited below 16 KiB the target refused the merged
// batches, and the partition left the fast path for good (at least once)
// or every transaction aborted (exactly once; the path 5).
func TestCoalesceKeepsUnderTheTopicLimit(t *testing.T) {
	x := newFastFixture(0)
	x.f.lanes, x.f.pid = &lanes{ordered: true}, 7
	const limit = 4096
	x.p.topic.maxMessageBytes.Store(limit)
	var src []byte
	for off := range int64(20) {
		src = append(src, encodeBatch(off, 1, 0, -1, make([]byte, 900))...)
	}
	x.fetched(t.Context(), fetchResp("t", src), 0)
	x.f.coalesce(x.fp, 5)
	merged := false
	for _, q := range x.fp.queue {
		if len(q.data) > limit {
			t.Fatalf("a queued batch of %d bytes, over max.message.bytes=%d", len(q.data), limit)
		}
		merged = merged || q.h.NumRecords > 1
	}
	if !merged {
		t.Fatal("nothing merged below the limit")
	}
}
