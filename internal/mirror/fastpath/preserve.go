package fastpath

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"strait/internal/mirror/flow"
)

// Keeping the source's offsets (strait.offsets.preserve). A broker appends
// at its log end and numbers a batch's records from there, so a batch sent
// while the remote partition ends at the source offset of its first record
// lands at the source's offsets. A partition that keeps offsets therefore
// sends only batches of consecutive source offsets (rebuilt batches are
// split at compaction holes: batch.RebuildRuns; merges stop at a hole),
// each one only when it starts where the previous one ends, and fills
// every source offset that holds nothing to copy (the log start, markers,
// aborted data, holes) with filler no read_committed consumer reads
// (GapFiller, package preserve) before it sends what follows. Nothing else
// changes: progress, the offset index and the syncs record the offsets
// the target acknowledged, which are now the source's.
//
// Every acknowledgement is checked: a batch that landed at another offset
// than its first record's source offset (another writer, or a remote
// partition that was not empty) stops the partition with both offsets,
// and it sends nothing after it. Batches already in flight behind it (at
// most maxPartitionInflight - 1) were sent before the answer came.

// ErrMisaligned marks a GapFiller error that stops the partition: its
// remote partition does not end where the source's offsets say it must.
var ErrMisaligned = errors.New("the remote partition is not aligned with the source")

// ErrCutShort marks a GapFiller error after which the partition may hold
// part of the fill: the next try of the gap is a Retry.
var ErrCutShort = errors.New("a fill was cut short")

// Gap is a range of source offsets of one remote partition that holds
// nothing to copy: the partition ends at From and must end at To before
// the next batch is sent. Retry says an earlier fill of it was cut short:
// the partition may then end anywhere from From to To (what that fill
// wrote is aborted filler once a new producer epoch fences it). MaxBytes
// is the remote topic's max.message.bytes (0 unknown), which bounds a
// filler batch.
type Gap struct {
	Topic     string // remote topic
	Partition int32
	From, To  int64
	Retry     bool
	MaxBytes  int64
}

// GapFiller fills gaps with filler no read_committed consumer reads. Fill
// returns one error per gap, nil where the partition now ends at its To;
// an error wrapping ErrMisaligned stops the partition, any other is tried
// again. The forwarder calls it off its loop, never for a partition whose
// last call has not returned; calls for other partitions may run at once.
type GapFiller interface {
	Fill(ctx context.Context, gaps []Gap) []error
}

// fillDone is the answer to one Fill.
type fillDone struct {
	parts []*Part
	gaps  []Gap
	errs  []error
}

// KeepOffsets makes fp keep the source's offsets on the target, whose
// remote partition ends at fp's next source offset; refuseGaps stops it
// at the first source offset with nothing to copy instead of filling it.
func (fp *Part) KeepOffsets(refuseGaps bool) {
	fp.keep, fp.refuseGaps, fp.written = true, refuseGaps, fp.next
}

// span returns the source offsets of q's records, first to end (the offset
// after the last), and whether they are consecutive.
func (q *qbatch) span() (first, end int64, consecutive bool) {
	if q.runs == nil {
		return q.h.BaseOffset, q.h.BaseOffset + int64(q.h.NumRecords), q.h.Contiguous()
	}
	last := q.runs[len(q.runs)-1]
	return q.runs[0].Offset, last.Offset + last.Count, len(q.runs) == 1
}

// alignedAt reports whether fp, keeping offsets, may send its queued batch
// n now: the one before it (or, for the head, what the target holds) ends
// where it starts. Partitions that do not keep offsets always may.
func (fp *Part) alignedAt(n int) bool {
	if !fp.keep {
		return true
	}
	if fp.filling {
		return false
	}
	first, _, consecutive := fp.queue[n].span()
	if !consecutive {
		return false // never queued so (recode.go); a loud stop is startFills'
	}
	var end int64
	switch {
	case n > 0:
		_, end, _ = fp.queue[n-1].span()
	case len(fp.sent) > 0:
		_, end, _ = fp.sent[len(fp.sent)-1].span()
	default:
		end = fp.written
	}
	return first == end
}

// gapAhead returns, for a partition keeping offsets with nothing in
// flight, where the target must end before its queue can go on: the first
// batch to send, or the end of the skips at the head when only skips are
// queued. It reports false when nothing needs filling, and an error when
// the queue overlaps what the target holds.
func (fp *Part) gapAhead() (int64, bool, error) {
	i := 0
	for i < len(fp.queue) && fp.queue[i].skip {
		i++
	}
	var to int64
	switch {
	case i < len(fp.queue):
		first, _, consecutive := fp.queue[i].span()
		if !consecutive {
			return 0, false, fmt.Errorf("%s[%d]: the batch at source offsets %d.. has holes and was not split: it cannot land at its source offsets", fp.p.Source(), fp.p.Partition(), first)
		}
		to = first
	case i > 0:
		if to = fp.queue[i-1].next; to <= fp.written {
			return 0, false, nil // filled already: applySkips takes them
		}
	default:
		return 0, false, nil
	}
	if to < fp.written {
		return 0, false, fmt.Errorf("%s[%d]: the next record to copy is at source offset %d, but %s[%d] already ends at %d: %w", fp.p.Source(), fp.p.Partition(), to, fp.p.Remote(), fp.p.Partition(), fp.written, ErrMisaligned)
	}
	return to, to > fp.written, nil
}

// startFills fills, in one call, the gaps of every partition that keeps
// offsets and has one ahead with nothing in flight.
func (f *Forwarder) startFills(ctx context.Context, now time.Time) {
	if f.deps.Gaps == nil {
		return
	}
	var parts []*Part
	var gaps []Gap
	for _, fp := range f.parts {
		if !fp.keep || fp.filling || fp.resync || fp.state != flowing || len(fp.sent) > 0 || now.Before(fp.notBefore) || fp.p.Failed() != nil {
			continue
		}
		to, ok, err := fp.gapAhead()
		if err != nil {
			f.fail(fp, err)
			continue
		}
		if !ok {
			continue
		}
		if fp.refuseGaps {
			f.fail(fp, fmt.Errorf("%s[%d]: source offsets %d to %d hold nothing to copy (transaction markers, aborted records or compaction holes), and strait.offsets.preserve.refuse.gaps names the topic: the partition is stopped rather than fill them; remove the topic from that list to fill gaps with filler that read_committed consumers never read",
				fp.p.Source(), fp.p.Partition(), fp.written, to-1))
			continue
		}
		parts = append(parts, fp)
		gaps = append(gaps, Gap{Topic: fp.p.Remote(), Partition: fp.p.Partition(), From: fp.written, To: to, Retry: fp.fillCutShort, MaxBytes: fp.p.MaxMessageBytes()})
	}
	if len(gaps) == 0 {
		return
	}
	for _, fp := range parts {
		fp.filling = true
	}
	fctx, cancel := f.requestContext(ctx)
	f.spawn(func() any {
		defer cancel()
		return fillDone{parts: parts, gaps: gaps, errs: f.deps.Gaps.Fill(fctx, gaps)}
	})
}

// handleFill applies the answer to a Fill: filled partitions send on;
// misaligned ones stop, and so do those the target refuses for good (an
// authorization it lacks, a batch it rejects); the others try again after
// a backoff that doubles up to fillBackoffMax.
func (f *Forwarder) handleFill(ev fillDone) {
	now := time.Now()
	for i, fp := range ev.parts {
		fp.filling = false
		g, err := ev.gaps[i], ev.errs[i]
		switch {
		case err == nil:
			fp.written, fp.fillCutShort, fp.fillBackoff = g.To, false, 0
			fp.p.Filled(g.From, g.To)
			f.applySkips(fp)
		case errors.Is(err, ErrMisaligned):
			f.fail(fp, err)
		case refusedForGood(err):
			f.fail(fp, fmt.Errorf("%s[%d]: filling source offsets %d to %d of %s[%d], which hold nothing to copy: %w (the filler's transactional id is %s: the target principal needs WRITE and DESCRIBE on it)",
				fp.p.Source(), fp.p.Partition(), g.From, g.To-1, g.Topic, g.Partition, err, "its progress group's with -filler-<topic>-<partition>"))
		default:
			f.deps.Errors.Count(flow.SideProduce, err)
			fp.fillBackoff = min(max(2*fp.fillBackoff, RetryBackoff), fillBackoffMax)
			f.log.Warn("fast path: filling a gap failed; retrying", "topic", g.Topic, "partition", g.Partition, "from", g.From, "to", g.To, "retry_in", fp.fillBackoff, "err", err)
			fp.notBefore = now.Add(fp.fillBackoff)
			fp.fillCutShort = fp.fillCutShort || errors.Is(err, ErrCutShort)
		}
	}
}

// refusedForGood reports whether err is the target's answer that trying again cannot
// change: a Kafka error that is not retriable (an authorization the principal lacks, a
// transaction timeout over the broker's maximum) or a batch it rejects. Anything else
// (a connection, a timeout, a coordinator moving) is tried again.
func refusedForGood(err error) bool {
	var ke *kerr.Error
	if !errors.As(err, &ke) || ke.Retriable {
		return false
	}
	class := flow.Classify(err)
	return class == flow.Stop || class == flow.Rejected
}

// fillBackoffMax caps the wait before a failed fill is tried again.
const fillBackoffMax = 5 * time.Second

// checkLanded stops fp, which keeps offsets, when the target acknowledged
// q at another offset than its first record's source offset, and reports
// whether it did.
func (f *Forwarder) checkLanded(fp *Part, q *qbatch, tgtBase int64) bool {
	first, end, _ := q.span()
	if tgtBase == first {
		fp.written = end
		return false
	}
	f.fail(fp, fmt.Errorf("%s[%d]: the record at source offset %d landed at offset %d of %s[%d]: %w (another producer writes it, or it was not empty when copying began); nothing more is written to it: find the writer, then delete the remote topic and copy it again",
		fp.p.Source(), fp.p.Partition(), first, tgtBase, fp.p.Remote(), fp.p.Partition(), ErrMisaligned))
	return true
}

// reownedHead reports whether fp's head batch was sent before under another producer
// id than the one it would go under now: its answer was lost, so it may be on the
// target, and sent again it would land after its own copy. The partition then resyncs.
func (f *Forwarder) reownedHead(fp *Part) bool {
	if fp.resync {
		return true
	}
	q := fp.queue[0]
	if q.sendID != 0 && q.pid >= 0 && q.pid != f.pid {
		fp.resync = true
	}
	return fp.resync
}

type resyncDone struct {
	fp  *Part
	end int64
	err error
}

// startResyncs lists where the remote partition of each partition that resyncs ends,
// once nothing of it is in flight.
func (f *Forwarder) startResyncs(ctx context.Context, now time.Time) {
	for _, fp := range f.parts {
		if !fp.resync || fp.resyncing || len(fp.sent) > 0 || fp.state != flowing || now.Before(fp.notBefore) {
			continue
		}
		fp.resyncing = true
		remote, partition := fp.p.Remote(), fp.p.Partition()
		f.spawn(func() any {
			ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			ends, err := kadm.NewClient(f.dst).ListEndOffsets(ctx, remote)
			rd := resyncDone{fp: fp, err: err}
			if err == nil {
				if o, ok := ends.Lookup(remote, partition); !ok {
					rd.err = fmt.Errorf("no end listed for %s[%d]", remote, partition)
				} else {
					rd.end, rd.err = o.Offset, o.Err
				}
			}
			return rd
		})
	}
}

// handleResync acknowledges the queued batches the remote partition holds (they landed
// at their source offsets before their answers were lost), and stops the partition if
// it ends anywhere but after one of them.
func (f *Forwarder) handleResync(ev resyncDone) {
	fp := ev.fp
	fp.resyncing = false
	if ev.err != nil {
		f.log.Warn("fast path: listing where a remote partition ends failed; retrying", "topic", fp.p.Remote(), "partition", fp.p.Partition(), "err", ev.err)
		fp.notBefore = time.Now().Add(RetryBackoff)
		return
	}
	if fp.state != flowing || len(fp.sent) > 0 {
		return
	}
	for len(fp.queue) > 0 && !fp.queue[0].skip && fp.written < ev.end {
		q := fp.queue[0]
		first, end, _ := q.span()
		if first != fp.written || end > ev.end {
			break
		}
		fp.takeHead()
		f.ack(fp, q, first)
	}
	if fp.written != ev.end {
		f.fail(fp, fmt.Errorf("%s[%d] ends at offset %d, not after a batch Strait sent (it holds source offsets up to %d): %w (another producer writes it); nothing more is written to it",
			fp.p.Remote(), fp.p.Partition(), ev.end, fp.written-1, ErrMisaligned))
		return
	}
	// What is still queued is not on the target: new batches to the broker, under any
	// producer id.
	for _, q := range fp.queue {
		q.sendID = 0
	}
	fp.resync = false
}
