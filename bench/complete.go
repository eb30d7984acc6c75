package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// When is a copy complete? When a reader of B sees every record of the backlog.
//
// A replicator that writes without transactions puts one record at each offset, so B's
// high watermark per partition is its record count: the copy is complete once every
// partition's high watermark reaches the source partition's record count.
//
// A replicator in exactly-once mode writes in transactions. Its records are visible
// to read_committed readers only once their transaction commits, and every transaction
// leaves a marker that takes an offset of its own in each partition it wrote (an aborted
// one leaves its records too, invisible). Neither end offset is then a record count:
// the high watermark runs ahead of what a reader sees, and the last stable offset (LSO,
// where a read_committed reader stops) counts markers. So the watch polls the LSO; the
// LSO reaching the record count in every partition is necessary (records plus markers
// at least the records) but not sufficient: a few records of the last transaction may
// still be missing, their offsets taken by the earlier markers. At that candidate moment
// the harness reads B read_committed up to the LSOs it polled, counting records and
// passing over markers (it keeps them: KeepControlRecords), and the copy was complete at
// that moment exactly when every partition holds its records below its LSO. If not, the
// watch goes on, and the next candidate's count reads on from where the last one
// stopped. The CPU figures are read at the candidate moment, before the count.
// The count reads the whole remote topic once, after the copy in the usual case (the
// first candidate is the last transaction's commit): it costs the broker and the harness
// some CPU after completion, not during the measured copy.

// committedTally counts, per partition, the records a read_committed reader sees below a
// limit that grows: the LSOs of successive candidates. Records read past the current
// limit (a later transaction committed while the reader ran) wait in above until the
// next limit, which is at least as high: it is polled after they were read.
type committedTally struct {
	limit []int64 // count records below these offsets
	below []int64 // records counted below limit
	above []int64 // records read at or past limit
	next  []int64 // one past the highest offset read, records and markers alike
}

func newCommittedTally(n int) *committedTally {
	return &committedTally{limit: make([]int64, n), below: make([]int64, n), above: make([]int64, n), next: make([]int64, n)}
}

// raise sets new limits (LSOs polled after every read so far); records read past the old
// limits are now below.
func (t *committedTally) raise(limits []int64) {
	for p, l := range limits {
		if p < len(t.limit) && l > t.limit[p] {
			t.limit[p] = l
			t.below[p] += t.above[p]
			t.above[p] = 0
		}
	}
}

// add takes one record the reader fetched; control records are transaction markers.
func (t *committedTally) add(p int, offset int64, control bool) {
	if p < 0 || p >= len(t.next) {
		return
	}
	t.next[p] = max(t.next[p], offset+1)
	if control {
		return
	}
	if offset < t.limit[p] {
		t.below[p]++
	} else {
		t.above[p]++
	}
}

// reached reports whether the reader has read every offset below the limits. The last
// offset below an LSO is a marker or a committed record, both of which the reader sees
// (records of an aborted transaction are followed by its marker).
func (t *committedTally) reached() bool {
	for p, l := range t.limit {
		if t.next[p] < l {
			return false
		}
	}
	return true
}

// counts returns the records below the limits, per partition.
func (t *committedTally) counts() []int64 { return append([]int64(nil), t.below...) }

// committedCounter reads remote topics of B read_committed from the start, feeding a
// committedTally. It keeps its position between counts.
type committedCounter struct {
	cl         *kgo.Client
	topics     map[string]int // topic -> index in the flattened partition list
	partitions int
	tally      *committedTally
}

func newCommittedCounter(bootstrap string, topics []string, partitions int) (*committedCounter, error) {
	offsets := map[string]map[int32]kgo.Offset{}
	index := map[string]int{}
	for i, t := range topics {
		index[t] = i
		offsets[t] = map[int32]kgo.Offset{}
		for p := range int32(partitions) {
			offsets[t][p] = kgo.NewOffset().AtStart()
		}
	}
	cl, err := newClient(bootstrap, kgo.ConsumePartitions(offsets), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(), kgo.FetchMaxPartitionBytes(4<<20), kgo.ClientID("strait-bench-counter"))
	if err != nil {
		return nil, err
	}
	return &committedCounter{cl: cl, topics: index, partitions: partitions, tally: newCommittedTally(len(topics) * partitions)}, nil
}

func (c *committedCounter) close() { c.cl.Close() }

// countTo reads until every offset below limits (LSOs, flattened) has been read, and
// returns the records below them per partition.
func (c *committedCounter) countTo(ctx context.Context, limits []int64) ([]int64, error) {
	c.tally.raise(limits)
	for !c.tally.reached() {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := c.cl.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				ferr = fmt.Errorf("reading %q partition %d read_committed: %w", t, p, err)
			}
		})
		if ferr != nil {
			return nil, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			if i, ok := c.topics[r.Topic]; ok {
				c.tally.add(i*c.partitions+int(r.Partition), r.Offset, r.Attrs.IsControl())
			}
		})
	}
	return c.tally.counts(), nil
}

// copyWatch is one copy the harness follows on B until it is complete.
type copyWatch struct {
	tool       string
	remotes    []string
	partitions int     // per remote topic
	want       []int64 // records per partition, flattened as endOffsetsAll
	procs      []*proc // the replicator's processes (several in the nodes mode)
	deadline   time.Time
	// committed: the tool writes in transactions; complete is judged by what a
	// read_committed reader sees (see the top of this file).
	committed bool
}

// copySeen is what the watch saw: when the first record showed on B and when the copy
// was complete, with every process's and broker's CPU at both moments.
type copySeen struct {
	first, done           time.Time
	atFirst, atDone       []procStats // per process, as copyWatch.procs
	brokerFirst, brokerAt map[string]float64
	// records are the records on B per partition at completion (end offsets, or the
	// records counted read_committed); ends are the high watermarks then.
	records, ends []int64
	// started is when startFractions of the partitions whose source holds records had
	// shown a record on B (startedPartitions), the last when every one had; zero until
	// then.
	started [len(startFractions)]time.Time
}

// startFractions are the shares of the partitions whose start the watch times: half, 90 %
// and all of them, to tell a slow start of every partition from a few that trail.
var startFractions = [...]float64{0.5, 0.9, 1}

// allStarted is when every partition had started (zero if never).
func (s copySeen) allStarted() time.Time { return s.started[len(s.started)-1] }

// markStarted records now for every start fraction that n started partitions of of
// reach for the first time; it reports whether every partition has started by now.
func (s *copySeen) markStarted(n, of int, now time.Time) bool {
	for i, f := range startFractions {
		if s.started[i].IsZero() && of > 0 && float64(n) >= f*float64(of) {
			s.started[i] = now
		}
	}
	return !s.allStarted().IsZero()
}

// watchCopy polls B until the copy is complete, a process exits, the copy stalls or the
// deadline passes. End offsets are polled every 10 ms until the first record (in a
// transaction or not: that is when the tool began writing), then every 50 ms (longer
// above 2,000 partitions, see pollIntervals); in committed mode the LSOs after that.
func (r *runner) watchCopy(ctx context.Context, w copyWatch) (copySeen, error) {
	var (
		seen      copySeen
		grew      time.Time // the last poll that found more than the one before
		lastTotal int64
		counter   *committedCounter
		records   int64 = sum(w.want)
	)
	defer func() {
		if counter != nil {
			counter.close()
		}
	}()
	stats := func() ([]procStats, error) {
		out := make([]procStats, len(w.procs))
		for i, p := range w.procs {
			st, err := toolStats(p)
			if err != nil {
				return nil, err
			}
			out[i] = st
		}
		return out, nil
	}
	pollBefore, pollAfter := pollIntervals(len(w.want))
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return seen, ctx.Err()
		case <-timer.C:
		}
		var (
			offs []int64
			err  error
		)
		if w.committed && !seen.first.IsZero() {
			offs, err = r.dstOffs.stableOffsetsAll(ctx, w.remotes, w.partitions)
		} else {
			offs, err = r.dstOffs.endOffsetsAll(ctx, w.remotes, w.partitions)
		}
		now := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				return seen, ctx.Err()
			}
			r.log.Debug("listing end offsets failed; retrying", "topic", w.remotes[0], "err", err)
		}
		all, total := covered(offs, w.want)
		if total > 0 && seen.first.IsZero() {
			seen.first, seen.brokerFirst = now, r.brokerCPU()
			if seen.atFirst, err = stats(); err != nil {
				return seen, err
			}
			r.log.Info("first record on the target", "tool", w.tool, "seconds", now.Sub(w.procs[0].started).Seconds())
			if w.committed {
				all = false // that was the high watermark; completion is judged on the LSOs
			}
		}
		if seen.allStarted().IsZero() {
			// The same poll answers when the partitions started: no request of its own.
			n, of := startedPartitions(offs, w.want)
			if seen.markStarted(n, of, now) {
				r.log.Info("every partition has a record on the target", "tool", w.tool, "partitions", of, "seconds", now.Sub(w.procs[0].started).Seconds())
			}
		}
		if all {
			atDone, err := stats()
			if err != nil {
				return seen, err
			}
			brokers := r.brokerCPU()
			if !w.committed {
				seen.done, seen.atDone, seen.brokerAt, seen.records, seen.ends = now, atDone, brokers, offs, offs
				return seen, nil
			}
			if counter == nil {
				if counter, err = newCommittedCounter(r.tb.b.bootstrap, w.remotes, w.partitions); err != nil {
					return seen, err
				}
			}
			cctx, cancel := context.WithDeadline(ctx, w.deadline)
			counts, err := counter.countTo(cctx, offs)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return seen, ctx.Err()
				}
				return seen, w.procs[0].failure("counting the records on %q read_committed: %v", w.remotes[0], err)
			}
			if ok, n := covered(counts, w.want); ok {
				seen.done, seen.atDone, seen.brokerAt, seen.records = now, atDone, brokers, counts
				if seen.ends, err = r.dstOffs.endOffsetsAll(ctx, w.remotes, w.partitions); err != nil {
					return seen, err
				}
				r.log.Info("copy complete for read_committed readers", "tool", w.tool, "records", n, "offsets", sum(seen.ends), "count_s", time.Since(now).Seconds())
				return seen, nil
			}
			r.log.Info("last stable offsets passed the record counts before every record was committed; watching on", "tool", w.tool, "records", sum(counts), "want", records)
		}
		if total > lastTotal {
			grew, lastTotal = now, total
		}
		for _, p := range w.procs {
			if exited, how := p.exited(); exited {
				return seen, p.failure("exited before the copy was complete (%v); %d of %d records on %q", how, total, records, w.remotes[0])
			}
		}
		if !seen.first.IsZero() && now.Sub(grew) > copyStall {
			return seen, w.procs[0].failure("copy stalled: no new record on the target for %s, %d of %d records on %q", copyStall, total, records, w.remotes[0])
		}
		if now.After(w.deadline) {
			return seen, w.procs[0].failure("copy incomplete after -copy-timeout %s: %d of %d records on %q", r.p.CopyTimeout.Duration, total, records, w.remotes[0])
		}
		if seen.first.IsZero() {
			timer.Reset(pollBefore)
		} else {
			timer.Reset(pollAfter)
		}
	}
}

// startedPartitions counts the partitions that hold at least one record on B (got, end
// offsets or LSOs flattened as endOffsetsAll) among the of partitions whose source holds
// records (want): a source partition without records can never start. got shorter than
// want (a failed poll) counts only what it holds.
func startedPartitions(got, want []int64) (n, of int) {
	for i, wn := range want {
		if wn <= 0 {
			continue
		}
		of++
		if i < len(got) && got[i] > 0 {
			n++
		}
	}
	return n, of
}

// checkTransactional fails an exactly-once run whose remote topics hold no transaction
// markers: ends (high watermarks) at least one above the records in every partition
// that has records, or the tool did not write in transactions.
func checkTransactional(log *slog.Logger, tool string, records, ends []int64) error {
	plain := 0
	for p, n := range records {
		if n > 0 && p < len(ends) && ends[p] <= n {
			plain++
		}
	}
	if plain > 0 {
		return fmt.Errorf("%s: %d partitions on B hold no transaction marker (high watermark = records): the tool did not write in transactions", tool, plain)
	}
	log.Debug("transaction markers on the target", "tool", tool, "offsets", sum(ends), "records", sum(records))
	return nil
}
