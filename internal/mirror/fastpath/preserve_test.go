package fastpath

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"strait/internal/offsets"
)

// recordingGaps is a GapFiller that fills every gap it is given, or answers err.
type recordingGaps struct {
	gaps []Gap
	err  error
}

func (r *recordingGaps) Fill(_ context.Context, gaps []Gap) []error {
	r.gaps = append(r.gaps, gaps...)
	errs := make([]error, len(gaps))
	for i := range errs {
		errs[i] = r.err
	}
	return errs
}

// keepingFixture is a fast-path partition that keeps offsets, fed with plain batches
// at 0..4 and 17..19 around a batch compaction left records 10, 11 and 15 of.
func keepingFixture(t *testing.T) (fastFixture, *recordingGaps) {
	t.Helper()
	x := newFastFixture(0)
	x.f.lanes, x.f.pid = &lanes{ordered: true}, 7
	gaps := &recordingGaps{}
	x.f.deps.Gaps = gaps
	x.fp.KeepOffsets(false)
	var src []byte
	src = append(src, encodeBatch(0, 5, 0, -1, nil)...)
	src = append(src, encodeSparse(10, []int32{0, 1, 5}, 6, 0)...) // offsets 10, 11, 15; next 17
	src = append(src, encodeBatch(17, 3, 0, -1, nil)...)
	x.fetched(t.Context(), fetchResp("t", src), 0)
	return x, gaps
}

// fill runs startFills and applies its answer, as the loop does.
func (x fastFixture) fill(t *testing.T) {
	t.Helper()
	x.f.startFills(t.Context(), x.fp.notBefore)
	if !x.fp.filling {
		t.Fatal("no fill started")
	}
	x.f.handle(t.Context(), <-x.f.events)
}

// spans lists the source offsets of the queued batches.
func (x fastFixture) spans() string {
	var out []string
	for _, q := range x.fp.queue {
		if q.skip {
			out = append(out, fmt.Sprintf("skip-to-%d", q.next))
			continue
		}
		first, end, consecutive := q.span()
		out = append(out, fmt.Sprintf("%d-%d%s", first, end, map[bool]string{false: "!"}[consecutive]))
	}
	return strings.Join(out, " ")
}

// TestKeepingPartitionLandsEveryBatchAtItsOffsets: a partition that keeps offsets
// splits a batch with compaction holes into batches of consecutive offsets, sends a batch
// only where the target ends at its first offset, fills each gap before the batch after
// it (one Fill per gap, From at the target's end), and counts the filled offsets into
// progress.
func TestKeepingPartitionLandsEveryBatchAtItsOffsets(t *testing.T) {
	x, gaps := keepingFixture(t)
	if got, want := x.spans(), "0-5 10-12 15-16 skip-to-17 17-20"; got != want {
		t.Fatalf("queued %q, want %q: the holed batch split at its hole, its emptied end a skip", got, want)
	}
	steps := []struct {
		send int   // batches that may go now
		base int64 // where the target acknowledges the first
		fill *Gap  // the gap to fill after it, if any
	}{
		{1, 0, &Gap{Topic: "A.t", From: 5, To: 10}},
		{1, 10, &Gap{Topic: "A.t", From: 12, To: 15}},
		{1, 15, &Gap{Topic: "A.t", From: 16, To: 17}},
		{1, 17, nil},
	}
	for i, s := range steps {
		x.sendAll(t)
		if len(x.fp.sent) != s.send {
			t.Fatalf("step %d: %d batches in flight, want %d (queue %s, written %d)", i, len(x.fp.sent), s.send, x.spans(), x.fp.written)
		}
		x.answer(0, sendResult{state: sendAcked, base: s.base})
		if x.p.acked > x.fp.written {
			t.Fatalf("step %d: progress %d past the target's end %d", i, x.p.acked, x.fp.written)
		}
		if s.fill == nil {
			continue
		}
		x.fill(t)
		if got := gaps.gaps[len(gaps.gaps)-1]; got != *s.fill {
			t.Fatalf("step %d: filled %+v, want %+v", i, got, *s.fill)
		}
	}
	if err := x.p.Failed(); err != nil {
		t.Fatal(err)
	}
	if x.p.acked != 20 || x.p.filled != 5+3+1 || x.fp.written != 20 {
		t.Fatalf("progress %d, filled %d, written %d; want 20, 9, 20", x.p.acked, x.p.filled, x.fp.written)
	}
	// Filled offsets translate to themselves, copied ones to their own.
	for _, off := range []int64{3, 7, 11, 13, 16, 19} {
		if got, res := x.p.idx.Translate(off); got != off || res != offsets.Exact {
			t.Errorf("offset %d translates to %d (result %v), want itself exactly", off, got, res)
		}
	}
}

// TestKeepingPartitionStopsWhereABatchLandsElsewhere: an acknowledgement at another
// offset than the batch's first source offset stops the partition, naming both, and
// nothing more is sent.
func TestKeepingPartitionStopsWhereABatchLandsElsewhere(t *testing.T) {
	x, _ := keepingFixture(t)
	x.sendAll(t)
	x.answer(0, sendResult{state: sendAcked, base: 1})
	err := x.p.Failed()
	if !errors.Is(err, ErrMisaligned) || !strings.Contains(err.Error(), "source offset 0 landed at offset 1") {
		t.Fatalf("partition error %v, want the misalignment at 0 and 1", err)
	}
	x.sendAll(t)
	if len(x.fp.sent) != 0 {
		t.Fatalf("%d batches sent after the misalignment", len(x.fp.sent))
	}
}

// TestKeepingPartitionRefusesGapsWhenAsked: with refuseGaps the first gap stops the
// partition instead of being filled; a failed fill is tried again as a retry.
func TestKeepingPartitionRefusesGapsWhenAsked(t *testing.T) {
	x, gaps := keepingFixture(t)
	x.fp.refuseGaps = true
	x.sendAll(t)
	x.answer(0, sendResult{state: sendAcked, base: 0})
	x.f.startFills(t.Context(), x.fp.notBefore)
	if err := x.p.Failed(); err == nil || !strings.Contains(err.Error(), "source offsets 5 to 9") || len(gaps.gaps) != 0 {
		t.Fatalf("partition error %v after %d fills, want the gap 5..9 refused", err, len(gaps.gaps))
	}

	y, ygaps := keepingFixture(t)
	y.sendAll(t)
	y.answer(0, sendResult{state: sendAcked, base: 0})
	ygaps.err = fmt.Errorf("%w: coordinator not available", ErrCutShort)
	y.fill(t)
	ygaps.err = nil
	y.fill(t)
	if first, again := ygaps.gaps[0], ygaps.gaps[1]; first.Retry || !again.Retry || again.From != 5 || again.To != 10 {
		t.Fatalf("fills %+v and %+v: want the same gap, the second a retry", first, again)
	}
	if y.p.Failed() != nil || y.fp.written != 10 {
		t.Fatalf("after the retry: error %v, written %d; want 10", y.p.Failed(), y.fp.written)
	}
}

// TestKeepingPartitionResyncsBeforeANewProducerID: a batch whose answer was lost goes
// again under a new producer id only after the remote partition's end is read: landed
// (the end is after it), it is acknowledged at its offsets and not sent again; not
// landed, it is sent; an end inside it stops the partition.
func TestKeepingPartitionResyncsBeforeANewProducerID(t *testing.T) {
	for _, c := range []struct {
		end      int64
		sent     int   // batches sent after the resync
		written  int64 // where the partition then ends, as the forwarder knows
		misalign bool
	}{{end: 5, sent: 0, written: 5}, {end: 0, sent: 1, written: 0}, {end: 3, misalign: true}} {
		t.Run(fmt.Sprint("end ", c.end), func(t *testing.T) {
			x, _ := keepingFixture(t)
			x.sendAll(t)
			x.answer(0, sendResult{state: sendFailed, err: errors.New("i/o timeout"), request: true})
			x.f.UsePID(8, 0) // the producer id renewed, as pidDone does
			x.fp.seq = 0
			for _, q := range x.fp.queue {
				q.seq = -1
			}
			x.fp.notBefore = time.Time{}
			x.sendAll(t)
			if len(x.fp.sent) != 0 || !x.fp.resync {
				t.Fatalf("%d batches sent under the new producer id before the resync (resync %v)", len(x.fp.sent), x.fp.resync)
			}
			x.f.handleResync(resyncDone{fp: x.fp, end: c.end})
			if c.misalign {
				if err := x.p.Failed(); !errors.Is(err, ErrMisaligned) {
					t.Fatalf("partition error %v, want a misalignment", err)
				}
				return
			}
			x.sendAll(t)
			if len(x.fp.sent) != c.sent || x.fp.written != c.written || x.p.Failed() != nil {
				t.Fatalf("%d sent, written %d, error %v; want %d sent, written %d", len(x.fp.sent), x.fp.written, x.p.Failed(), c.sent, c.written)
			}
			if c.sent == 1 && x.fp.sent[0].pid != 8 {
				t.Fatalf("sent under producer id %d, want 8", x.fp.sent[0].pid)
			}
		})
	}
}

// TestFillRefusedForGoodStopsThePartition: a fill the target refuses for good (the
// filler's transactional id not authorized) stops the partition with the fix named; a
// passing error does not.
func TestFillRefusedForGoodStopsThePartition(t *testing.T) {
	x, gaps := keepingFixture(t)
	x.sendAll(t)
	x.answer(0, sendResult{state: sendAcked, base: 0})
	gaps.err = errors.New("i/o timeout")
	x.fill(t)
	if err := x.p.Failed(); err != nil {
		t.Fatalf("a passing error stopped the partition: %v", err)
	}
	gaps.err = fmt.Errorf("the filler of A.t[0]: %w", kerr.TransactionalIDAuthorizationFailed)
	x.fill(t)
	if err := x.p.Failed(); !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) || !strings.Contains(err.Error(), "WRITE and DESCRIBE") {
		t.Fatalf("partition error %v, want the authorization failure and its fix", err)
	}
}
