package mirror

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/mirror/fastpath"
	"strait/internal/policy"
	"strait/internal/preserve"
)

// Preserve keeps the source's offsets on the target (strait.offsets.preserve)
// for the source topics Topics matches: every record lands at its own
// offset, the fast path fills what holds nothing to copy
// (fastpath/preserve.go), and a partition resumes where its remote
// partition ends (alignStarts). Partitions of the topics RefuseGaps
// matches stop at the first gap instead of filling it.
type Preserve struct {
	Topics, RefuseGaps *policy.Pattern
	// Timeout is the filler's transaction.timeout.ms. The filler of a
	// remote partition has one transactional id whichever node fills it
	// (fillerPrefix, preserve.FillerID): a new owner fences the last one at
	// once, so the timeout matters only if no node takes the partition.
	Timeout time.Duration
}

// fillerPrefix is the start of the transactional ids of the flow's
// fillers: the progress group's.
func (m *Mirror) fillerPrefix() string { return m.cfg.Group + "-filler" }

// keepsOffsets reports whether the partitions of source topic keep their
// offsets.
func (m *Mirror) keepsOffsets(source string) bool {
	return m.cfg.Preserve != nil && m.cfg.Preserve.Topics.Matches(source)
}

// newGaps makes the attempt's filler on a client of its own, and returns
// the function that closes it; nil when no topic keeps its offsets.
func (m *Mirror) newGaps() (*preserve.Gaps, func(), error) {
	if m.cfg.Preserve == nil {
		return nil, func() {}, nil
	}
	var cl *kgo.Client
	var err error
	if m.cl.NewTarget != nil {
		cl, err = m.cl.NewTarget(fastpath.TransactionOpts()...)
	} else {
		cl, err = kgo.NewClient(append(m.dst.Opts(), fastpath.TransactionOpts()...)...)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("flow %s: the filler's client: %w", m.cfg.Flow, err)
	}
	return preserve.NewGaps(cl, m.fillerPrefix(), m.cfg.Preserve.Timeout), cl.Close, nil
}

// alignStarts moves the start of each partition of starts that keeps its
// offsets to where its remote partition ends: everything below that end
// is on the target at its own offset, which makes progress the target's
// log end, whatever was committed. It first fences the partition's filler
// (a fill left open by the last owner ends now, not inside this copy). An
// empty remote partition below the partition's start position is filled up
// to it and its log start moved there (Filler.StartAt, alignedStart). It
// returns the partitions that start later (a listing or the fence failed,
// or a transaction still holds the partition); those it cannot start are
// stopped.
func (m *Mirror) alignStarts(ctx context.Context, starts map[*partition]startPos, stored map[string]map[int32]storedOffset) []*partition {
	var keep []*partition
	var remotes, sources []string
	for p := range starts {
		if p.keepsOffsets {
			keep = append(keep, p)
			remotes = append(remotes, p.topic.Remote)
			sources = append(sources, p.topic.Source)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	later := func(err error) []*partition {
		for _, p := range keep {
			delete(starts, p)
		}
		if ctx.Err() == nil {
			m.log.Warn("partitions that keep their offsets start later", "partitions", len(keep), "retry_in", startRetryPause, "err", err)
		}
		return keep
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	keys := make([]fastpath.Gap, len(keep))
	for i, p := range keep {
		keys[i] = fastpath.Gap{Topic: p.topic.Remote, Partition: p.num}
	}
	if err := errors.Join(m.gaps.Fence(lctx, keys)...); err != nil {
		return later(err)
	}
	var begins, ends, stable, srcEnds kadm.ListedOffsets
	var err error
	for _, l := range []struct {
		out  *kadm.ListedOffsets
		list func(context.Context, ...string) (kadm.ListedOffsets, error)
		of   []string
	}{
		{&begins, m.dstAdm.ListStartOffsets, remotes},
		{&ends, m.dstAdm.ListEndOffsets, remotes},
		{&stable, m.dstAdm.ListCommittedOffsets, remotes},
		{&srcEnds, m.srcAdm.ListCommittedOffsets, sources},
	} {
		if *l.out, err = l.list(lctx, l.of...); err == nil {
			err = l.out.Error()
		}
		if err != nil {
			return later(fmt.Errorf("listing offsets to align the partitions that keep their offsets: %w", err))
		}
	}
	var fill []preserve.Start
	var filling []*partition
	var wait []*partition
	for _, p := range keep {
		tStart, _ := begins.Lookup(p.topic.Remote, p.num)
		tEnd, _ := ends.Lookup(p.topic.Remote, p.num)
		lso, _ := stable.Lookup(p.topic.Remote, p.num)
		srcEnd, _ := srcEnds.Lookup(p.topic.Source, p.num)
		at, begin, err := alignedStart(p, starts[p].at, stored, tStart.Offset, tEnd.Offset, lso.Offset, srcEnd.Offset)
		switch {
		case errors.Is(err, errOpenFill):
			delete(starts, p)
			wait = append(wait, p)
			m.log.Warn("a partition that keeps its offsets starts later: a transaction holds its remote partition", "topic", p.topic.Source, "partition", p.num, "err", err)
		case err != nil:
			delete(starts, p)
			if p.Stop(err) {
				m.log.Error("partition not started", "topic", p.topic.Source, "partition", p.num, "err", err)
			}
		case begin:
			fill = append(fill, preserve.Start{Topic: p.topic.Remote, Partition: p.num, At: at, MaxBytes: p.topic.maxMessageBytes.Load()})
			filling = append(filling, p)
		default:
			p.startAt(at, false)
			starts[p] = startPos{at: at}
		}
	}
	// Not bounded by lctx: a start at a large offset fills a million offsets per round.
	for i, err := range m.gaps.StartAt(ctx, fill) {
		p := filling[i]
		switch {
		case err == nil:
			m.log.Info("remote partition starts at the source's offset", "topic", p.topic.Remote, "partition", p.num, "offset", fill[i].At)
		case errors.Is(err, fastpath.ErrMisaligned):
			delete(starts, p)
			if p.Stop(err) {
				m.log.Error("partition not started", "topic", p.topic.Source, "partition", p.num, "err", err)
			}
		default:
			delete(starts, p)
			wait = append(wait, p)
			m.log.Warn("a partition that keeps its offsets starts later: filling its remote partition up to the source's start failed", "topic", p.topic.Source, "partition", p.num, "err", err)
		}
	}
	return wait
}

// errOpenFill says a remote partition holds a transaction still open.
var errOpenFill = errors.New("the remote partition holds a transaction still open")

// alignedStart is where p, which keeps its offsets, starts, and whether its remote
// partition must first be made to begin there (Filler.StartAt). A remote partition
// that is empty (tStart == tEnd) below at, the start position, begins there, unless
// records of it were copied before (the offset index knows some: the remote topic was
// emptied or recreated since); an empty one is also what a start cut short leaves. So
// does one that ends at or below at with the last filler batch not yet deleted, when
// nothing was copied (neither the index nor the stored progress knows the partition),
// which StartAt then checks holds nothing consumers read. Any other resumes where it ends, which must not be past the source's end (srcEnd, its
// last stable offset) nor before the stored progress. A transaction open on it (tLSO
// below tEnd) is errOpenFill.
func alignedStart(p *partition, at int64, stored map[string]map[int32]storedOffset, tStart, tEnd, tLSO, srcEnd int64) (int64, bool, error) {
	name := fmt.Sprintf("%s[%d]", p.topic.Remote, p.num)
	lost := func(copied int64) error {
		return fmt.Errorf("%s ends at offset %d, but source offsets up to %d were copied there: the remote topic lost records (deleted and created again, or truncated); delete it and reset the progress group to copy it again", name, tEnd, copied)
	}
	copied := p.idx.Len() > 0
	s, hasStored := stored[p.topic.Remote][p.num]
	switch {
	case tLSO < tEnd:
		return 0, false, fmt.Errorf("%s: %w at offsets %d to %d", name, errOpenFill, tLSO, tEnd-1)
	case tStart == tEnd && tEnd < at && copied:
		return 0, false, lost(at - 1)
	case tStart == tEnd && tEnd < at:
		return at, true, nil
	case tStart < tEnd && tEnd <= at && !copied && !hasStored:
		// Nothing was copied here: what lies below at is a start cut short
		// before it moved the log start (StartAt checks no consumer reads it).
		return at, true, nil
	case tEnd > srcEnd:
		return 0, false, fmt.Errorf("%s ends at offset %d, past the end of source %s[%d] (%d): the remote topic holds records the source does not (another writer, or the source topic was recreated), so the source's offsets cannot be kept there; delete the remote topic and copy it again", name, tEnd, p.topic.Source, p.num, srcEnd)
	}
	if hasStored && s.next > tEnd {
		return 0, false, lost(s.next - 1)
	}
	return tEnd, false, nil
}
