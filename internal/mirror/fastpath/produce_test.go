package fastpath

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// sendAll starts produce requests for what x's partition may send now, as
// dispatch does, without a network: the batches move to sent, and their
// results are given with answer.
func (x fastFixture) sendAll(t *testing.T) {
	t.Helper()
	x.f.dstMeta["A.t"] = topicMeta{leaders: []int32{1}}
	now := time.Now()
	for n := 0; n < len(x.fp.queue) && x.f.canSendNth(x.fp, 1, now, n); {
		q := x.fp.takeHead()
		if q.seq < 0 || q.pid != x.f.pid {
			q.seq, q.pid = x.fp.seq, x.f.pid
			x.fp.seq = NextSeq(x.fp.seq, q.h.NumRecords)
		}
		x.fp.sendIDs++
		q.sendID, q.result = x.fp.sendIDs, sendResult{}
		x.fp.sent, x.fp.sentOn = append(x.fp.sent, q), laneKey{broker: 1}
	}
}

// answer gives the result of the sent batch at index i of sent.
func (x fastFixture) answer(i int, res sendResult) {
	x.f.record(sentRef{x.fp, x.fp.sent[i].sendID}, res, time.Now())
}

// TestPipelineGateLapsesWhenIdle: a partition's leader acknowledged a batch
// long ago, and the broker may have dropped the producer's state since (an
// idle partition past producer.id.expiration.ms, retention, a recreated
// remote topic): it then accepts any sequence. Five batches in flight at
// once, a retriable failure of the first and an acknowledgement of the
// second, and the target holds them out of order (the path 7). The
// gate lapses when no batch was acknowledged lately: one batch in flight
// until an acknowledgement again.
func TestPipelineGateLapsesWhenIdle(t *testing.T) {
	x := newFastFixture(0)
	x.f.lanes, x.f.pid = &lanes{ordered: true}, 7
	var src []byte
	for off := range int64(5) {
		src = append(src, encodeBatch(off, 1, 0, -1, make([]byte, mergeMaxBytes))...) // too large to merge
	}
	x.fetched(t.Context(), fetchResp("t", src), 0)
	// Confirmed by broker 1 under producer 7, long ago.
	x.fp.confirmed, x.fp.confirmedBy, x.fp.confirmedPid = true, 1, 7
	x.sendAll(t)
	if n := len(x.fp.sent); n != 1 {
		x.answer(0, sendResult{state: sendFailed, err: kerr.NotLeaderForPartition})
		x.answer(1, sendResult{state: sendAcked, base: 0})
		t.Fatalf("%d batches in flight after the partition was idle (partition error: %v), want 1", n, x.p.Failed())
	}
	x.answer(0, sendResult{state: sendAcked, base: 0})
	x.sendAll(t)
	if n := len(x.fp.sent); n != 4 {
		t.Fatalf("%d batches in flight right after an acknowledgement, want the other 4", n)
	}
}

// TestUnwrittenHeadWithAWrittenSuccessorStops: a request that was never
// written (its lane dropped it when the node's lease lapsed) is not of open
// fate: if the batch behind it was acknowledged, the target holds that one
// without the one before it, and the partition must stop and say so. Taken
// for a lost answer, the head was sent again, refused out of sequence,
// and the producer id renewed: records reordered and written twice.
func TestUnwrittenHeadWithAWrittenSuccessorStops(t *testing.T) {
	x := twoBatchesInFlight(t)
	x.answer(0, sendResult{state: sendFailed, err: errLeaseLapsed, request: true, unwritten: true})
	x.answer(1, sendResult{state: sendAcked, base: 0})
	if err := x.p.Failed(); err == nil || !strings.Contains(err.Error(), "out of source order") {
		t.Fatalf("partition error %v, want the target out of source order", err)
	}
}

// twoBatchesInFlight is a pipelined partition (ordered lanes, a confirmed
// producer id) with its head, a full merged batch, and one successor sent.
func twoBatchesInFlight(t *testing.T) fastFixture {
	t.Helper()
	x := newFastFixture(0)
	x.f.lanes, x.f.pid = &lanes{ordered: true}, 7
	x.fetched(t.Context(), fetchResp("t", cat(encodeBatch(0, 3, 0, -1, make([]byte, mergeMaxBytes)), encodeBatch(3, 2, 0, -1, nil))), 0)
	x.fp.confirmed, x.fp.confirmedBy, x.fp.confirmedPid, x.fp.confirmedAt = true, 1, 7, time.Now()
	x.sendAll(t)
	if len(x.fp.sent) != 2 {
		t.Fatalf("%d batches in flight, want 2", len(x.fp.sent))
	}
	return x
}

// TestOutOfSequenceAfterAWrittenSuccessorStops: a head of open fate (no
// answer) whose successor was acknowledged is sent again; if the target
// answers it out of sequence, the head was never written and the target
// accepted the successor without it (it had lost the producer's state):
// the partition stops and says so, rather than renew the producer id and
// write everything again behind the successor.
func TestOutOfSequenceAfterAWrittenSuccessorStops(t *testing.T) {
	x := twoBatchesInFlight(t)
	x.answer(0, sendResult{state: sendFailed, err: kerr.RequestTimedOut})
	x.answer(1, sendResult{state: sendAcked, base: 0})
	if err := x.p.Failed(); err != nil {
		t.Fatalf("a timed-out head stopped the partition: %v", err)
	}
	x.fp.notBefore = time.Time{}
	x.sendAll(t)
	if len(x.fp.sent) != 1 || x.fp.sent[0].h.BaseOffset != 0 {
		t.Fatalf("the head is not sent again alone: %d in flight", len(x.fp.sent))
	}
	x.answer(0, sendResult{state: sendFailed, err: kerr.OutOfOrderSequenceNumber})
	if err := x.p.Failed(); err == nil || !strings.Contains(err.Error(), "out of source order") {
		t.Fatalf("partition error %v, want the target out of source order (producer renewal wanted: %v)", err, x.f.pidWanted)
	}
}

// TestSkippedBatchesCountAgainstTheBuffer: batches that hold nothing to
// copy (aborted transactions, markers, the reverse flow's batches) wait in
// the queue behind a head that is not acknowledged yet, like data. They
// counted 0 bytes, so while the head was blocked (or with no lease or
// producer id) fetching went on and the queue grew without bound (the
// issue's path 8). They now count the bytes fetched for them, and release
// them when progress moves over them.
func TestSkippedBatchesCountAgainstTheBuffer(t *testing.T) {
	x := newFastFixture(0)
	x.f.lanes, x.f.pid = &lanes{ordered: true}, 7
	x.f.cfg.PartitionFetchSize = 64 << 10
	x.fetched(t.Context(), fetchResp("t", encodeBatch(0, 1, 0, -1, nil)), 0)
	x.sendAll(t) // the head, never answered
	var aborted []byte
	next := int64(1)
	for range 100 {
		aborted = append(aborted, encodeBatch(next, 10, attrTxn, 42, make([]byte, 100))...)
		next += 10
	}
	x.fetched(t.Context(), fetchResp("t", aborted, abortedTxn(42, 1)), 1)
	if len(x.fp.queue) != 100 {
		t.Fatalf("%d batches queued, want the 100 aborted ones as skips", len(x.fp.queue))
	}
	if x.fp.queueBytes < len(aborted) || x.f.buffered != int64(x.fp.queueBytes) {
		t.Fatalf("queued bytes %d (buffered %d) after %d bytes of aborted batches were fetched", x.fp.queueBytes, x.f.buffered, len(aborted))
	}
	if room := x.f.fetchRoom(x.fp, time.Now()); room != 0 {
		t.Fatalf("the partition may still fetch %d bytes with %d queued", room, x.fp.queueBytes)
	}
	x.answer(0, sendResult{state: sendAcked, base: 0})
	if x.fp.queueBytes != 0 || x.f.buffered != 0 || len(x.fp.queue) != 0 {
		t.Fatalf("after the head's acknowledgement: %d queued, %d bytes, %d buffered; want none", len(x.fp.queue), x.fp.queueBytes, x.f.buffered)
	}
	if acked(x.p) != next {
		t.Fatalf("progress %d, want %d past the skipped batches", acked(x.p), next)
	}
}
