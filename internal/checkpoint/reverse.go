package checkpoint

import (
	"context"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"

	"strait/internal/index"
	"strait/internal/offsets"
	"strait/internal/policy"
)

// Reverse is the reverse flow (target->source) of an active-active pair.
// Where its policy copies a remote topic R back into the source topic T
// (a name-keeping policy), T on the source and R on the target hold both
// clusters' records in different orders, and the flow's own index knows
// only where the source's records landed. A group on T has not read the
// target's records whose copies in T are at or after its offset either,
// and some of them lie before the index's answer on the target: the
// translation is lowered to the first of them (see Flow.Reverse).
type Reverse struct {
	Policy policy.ReplicationPolicy // the reverse flow's
	// Index is the reverse flow's offset index, which lives on this flow's
	// source cluster: offsets of R on the target to offsets of T.
	Index ReverseIndex
	// TargetAdmin lists log starts on this flow's target, where a
	// translation is rounded down to when Index holds nothing for R and
	// the reverse flow's progress is unknown.
	TargetAdmin *kadm.Client
	// SourceAdmin and Group read the reverse flow's committed progress
	// (its progress group, on this flow's source): how far it read R.
	// When it copied nothing of R[p] (every record came from this flow, as
	// in an active-passive pair run both ways), its index holds nothing,
	// and the progress is the first offset of R[p] it could still copy.
	// Nil SourceAdmin: unknown.
	SourceAdmin *kadm.Client
	Group       string
}

// ReverseIndex gives the reverse flow's offset map of a partition of R,
// nil when it holds none. Run follows the index until ctx is done (the
// checkpointer runs it); before Ready, Partition answers nil.
type ReverseIndex interface {
	Partition(topic string, partition int32) *offsets.Partition
	Ready() bool
	Run(ctx context.Context) error
}

// LoadedIndex is a loaded index (index.Load) as a ReverseIndex: complete
// as it is, so ready and with nothing to follow.
type LoadedIndex index.Map

// Partition returns the loaded map of a partition.
func (m LoadedIndex) Partition(topic string, partition int32) *offsets.Partition {
	return m.Parts[index.TP{Topic: topic, Partition: partition}]
}

// Ready is always true.
func (LoadedIndex) Ready() bool { return true }

// Run returns at once.
func (LoadedIndex) Run(context.Context) error { return nil }

// remoteOf returns R, the remote topic of source topic T on the target,
// when there is a reverse flow and it copies R back into T.
func (r *Reverse) remoteOf(f Flow, topic string) (string, bool) {
	if r == nil {
		return "", false
	}
	remote := f.Policy.FormatRemoteTopic(f.Source, topic)
	return remote, r.Policy.FormatRemoteTopic(f.Target, remote) == topic
}

// lower lowers t1, the usable translation of the committed offset u of
// remote[partition]'s source partition, to the first target record the
// group has not read (firstUnread).
func (r *Reverse) lower(ctx context.Context, f Flow, remote string, partition int32, u, t1 int64, res offsets.Result) (int64, offsets.Result, error) {
	var t2 int64
	if p := r.Index.Partition(remote, partition); p != nil && p.Len() > 0 {
		t2 = firstUnread(p.Segments(), p.Covered(), u)
	} else if next, ok, err := r.progress(ctx, f, remote, partition); err != nil {
		return -1, res, err
	} else if ok {
		t2 = next
	} else {
		start, err := r.logStart(ctx, remote, partition)
		if err != nil {
			return -1, res, fmt.Errorf("the reverse flow %s->%s has no offset index for %s[%d] (yet), so a translation is rounded down to its log start on %s, and listing that failed: %w",
				f.Target, f.Source, remote, partition, f.Target, err)
		}
		t2 = start
	}
	down, res := atFirstUnread(t1, res, t2)
	return down, res, nil
}

// progress is the reverse flow's committed progress in R[partition]: the
// next offset of R it copies; false when unknown.
func (r *Reverse) progress(ctx context.Context, f Flow, remote string, partition int32) (int64, bool, error) {
	if r.SourceAdmin == nil {
		return 0, false, nil
	}
	resps, err := r.SourceAdmin.FetchOffsets(ctx, r.Group)
	if err != nil {
		return 0, false, fmt.Errorf("reading the progress of the reverse flow %s->%s (group %s on %s): %w", f.Target, f.Source, r.Group, f.Source, err)
	}
	o, ok := resps.Lookup(r.Policy.FormatRemoteTopic(f.Target, remote), partition)
	if !ok || o.Err != nil || o.At < 0 {
		return 0, false, nil
	}
	return o.At, true, nil
}

func (r *Reverse) logStart(ctx context.Context, topic string, partition int32) (int64, error) {
	starts, err := r.TargetAdmin.ListStartOffsets(ctx, topic)
	if err != nil {
		return -1, err
	}
	o, ok := starts.Lookup(topic, partition)
	if !ok {
		return -1, fmt.Errorf("no log start listed for %s[%d]", topic, partition)
	}
	return o.Offset, o.Err
}

// atFirstUnread combines t1, the flow's translation of a committed offset,
// with t2, the first target record whose copy on the source the group has
// not read: the consumer starts at the lower one. Starting before t1 means
// reading again some records the group had read: Rounded.
func atFirstUnread(t1 int64, res offsets.Result, t2 int64) (int64, offsets.Result) {
	if t1 <= t2 {
		return t1, res
	}
	return t2, offsets.Rounded
}

// firstUnread inverts the reverse flow's map of a partition (segs sorted
// and not empty, source offsets on the target to copies on the source; covered its
// coverage) at u, a group's committed offset on the source: the least
// target offset whose record's copy is at or after u, so the group has not
// read it. Inside a coarse segment it rounds down to the segment's start.
// When every copy is before u, the records from the coverage on are not
// copied yet, so not read either.
func firstUnread(segs []offsets.Segment, covered, u int64) int64 {
	i := sort.Search(len(segs), func(i int) bool { return segs[i].TgtEnd() > u })
	if i == len(segs) {
		return max(covered, segs[len(segs)-1].SrcEnd())
	}
	s := segs[i]
	if s.Coarse() {
		return s.Src
	}
	return s.Src + max(0, u-s.Tgt)
}

// FirstUnread inverts a flow's map of a partition (p, not empty) at a
// target offset t that a group on the target would read next: the source
// offset of the first record whose copy is at or after t, so that a
// consumer moved back to the source reads first what it has not read on
// the target. Inside a coarse segment it rounds down (reads again, never
// skips); past every copy it is the coverage.
func FirstUnread(p *offsets.Partition, t int64) int64 {
	return firstUnread(p.Segments(), p.Covered(), t)
}
