package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/checkpoint"
	"strait/internal/index"
	"strait/internal/offsets"
	"strait/internal/tail"
	"strait/internal/wire"
)

// Flow is what checking one flow's copy needs: its clusters' clients, its
// loaded offset index and its rules.
type Flow struct {
	Name             string // "A->B"
	Source, Target   string
	SourceAdmin      *kadm.Client
	TargetAdmin      *kadm.Client
	SourceReader     *kgo.Client // made with tail.ClientOpts, used by nothing else
	TargetReader     *kgo.Client // made with tail.ClientOpts, used by nothing else
	Index            index.Map
	Translate        checkpoint.Flow // the flow's policy and topic filter, for groups
	Topics           func(topic string) bool
	Groups           func(group string) bool // nil: no group is checked
	CheckpointsTopic string
	// CheckpointsEvery is how often the flow writes checkpoints; 0 when it
	// writes none (emit.checkpoints.enabled = false).
	CheckpointsEvery time.Duration
	// ActiveActive: the reverse flow runs, so source records it wrote are
	// left out on purpose.
	ActiveActive bool
	Since        time.Time // zero: from each partition's log start
	// Progress, if not nil, is called with records read so far and the
	// records to read in all (an estimate that grows as targets are sized).
	Progress func(done, total int64)
}

// FlowReport is the outcome of Check.
type FlowReport struct {
	Flow   string        `json:"flow"`
	Topics []TopicReport `json:"topics"`
	Groups []GroupReport `json:"groups"`
}

// TopicReport is one replicated topic.
type TopicReport struct {
	Topic      string            `json:"topic"`
	Remote     string            `json:"remote"`
	Partitions []PartitionReport `json:"partitions"`
	// Problem is why the topic could not be checked, if it could not.
	Problem string `json:"problem,omitempty"`
}

// GroupReport is one consumer group's checkpoints.
type GroupReport struct {
	Group      string            `json:"group"`
	Partitions []GroupCheckpoint `json:"partitions"`
}

// Checkpoint states.
const (
	CheckpointExact   = "exact"   // the checkpoint is the index's translation of the group's committed offset
	CheckpointBehind  = "behind"  // exact for an earlier commit of the group; the next emission writes the new one
	CheckpointWrong   = "wrong"   // its downstream offset is not the index's translation of its upstream one
	CheckpointMissing = "missing" // the offset translates, and no checkpoint holds it
	CheckpointNone    = "none"    // the offset has no translation yet (Why says why), so no checkpoint is due
)

// GroupCheckpoint is one partition of a group: its committed offset on the
// source, where it lands on the target, and the checkpoint that says so.
type GroupCheckpoint struct {
	Topic      string `json:"topic"`
	Remote     string `json:"remote"`
	Partition  int32  `json:"partition"`
	Committed  int64  `json:"committed"`  // on the source
	Translated int64  `json:"translated"` // on the target, from the index; -1 if none
	// Upstream and Downstream are the checkpoint's offsets, -1 without one.
	Upstream   int64  `json:"checkpoint_upstream"`
	Downstream int64  `json:"checkpoint_downstream"`
	State      string `json:"state"`
	Why        string `json:"why,omitempty"`
}

// Fault reports whether the checkpoint state is wrong or missing.
func (g GroupCheckpoint) Fault() bool {
	return g.State == CheckpointWrong || g.State == CheckpointMissing
}

// OK reports whether the copy of every topic and the checkpoint of every
// group are complete and exact up to the points reported.
func (r FlowReport) OK() bool {
	for _, t := range r.Topics {
		if t.Problem != "" {
			return false
		}
		for _, p := range t.Partitions {
			if !p.OK() {
				return false
			}
		}
	}
	for _, g := range r.Groups {
		for _, p := range g.Partitions {
			if p.Fault() {
				return false
			}
		}
	}
	return true
}

// Check compares every partition of every topic the flow replicates with
// its copy, through the index, and every group's checkpoints with the
// index's translation of its committed offsets.
func Check(ctx context.Context, f Flow) (FlowReport, error) {
	rep := FlowReport{Flow: f.Name}
	parts, err := f.plan(ctx)
	if err != nil {
		return rep, err
	}
	var total, done int64
	for _, p := range parts {
		total += 2 * (p.end - p.from)
	}
	progress := func(n int64) {
		done += n
		if f.Progress != nil {
			f.Progress(done, max(total, done))
		}
	}
	progress(0)
	byTopic := map[string]int{}
	for _, p := range parts {
		i, ok := byTopic[p.topic]
		if !ok {
			i = len(rep.Topics)
			byTopic[p.topic] = i
			rep.Topics = append(rep.Topics, TopicReport{Topic: p.topic, Remote: p.remote, Problem: p.problem})
		}
		if p.problem != "" {
			continue
		}
		pr, err := f.partition(ctx, p, progress)
		if err != nil {
			return rep, err
		}
		rep.Topics[i].Partitions = append(rep.Topics[i].Partitions, pr)
	}
	if f.Groups != nil {
		if rep.Groups, err = f.groups(ctx); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// part is one source partition to check.
type part struct {
	topic, remote string
	partition     int32
	from, end     int64 // source offsets to read
	id            [16]byte
	problem       string
}

// plan lists the source partitions to check and their offsets: from the log
// start (or the first offset at Since) to the end as the check starts.
func (f Flow) plan(ctx context.Context) ([]part, error) {
	topics, err := f.SourceAdmin.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the topics of %s: %w", f.Source, err)
	}
	var names []string
	for _, t := range topics.Sorted() {
		if !t.IsInternal && f.Topics(t.Topic) {
			names = append(names, t.Topic)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	starts, err := f.SourceAdmin.ListStartOffsets(ctx, names...)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing the start offsets of %s: %w", f.Source, err)
	}
	ends, err := f.SourceAdmin.ListCommittedOffsets(ctx, names...) // the last stable offsets
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing the end offsets of %s: %w", f.Source, err)
	}
	var since kadm.ListedOffsets
	if !f.Since.IsZero() {
		if since, err = f.SourceAdmin.ListOffsetsAfterMilli(ctx, f.Since.UnixMilli(), names...); err == nil {
			err = since.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("listing the offsets of %s at %s: %w", f.Source, f.Since.Format(time.RFC3339), err)
		}
	}
	var out []part
	for _, name := range names {
		td := topics[name]
		remote := f.Translate.Policy.FormatRemoteTopic(f.Source, name)
		for _, pd := range td.Partitions.Sorted() {
			p := part{topic: name, remote: remote, partition: pd.Partition, id: td.ID}
			s, _ := starts.Lookup(name, pd.Partition)
			e, _ := ends.Lookup(name, pd.Partition)
			p.from, p.end = s.Offset, e.Offset
			if o, ok := since.Lookup(name, pd.Partition); ok && o.Offset > p.from {
				p.from = min(o.Offset, p.end)
			}
			if ids, ok := f.Index.IDs[index.TP{Topic: name, Partition: pd.Partition}]; ok && ids != td.ID {
				p.problem = "the offset index holds another incarnation of this topic (it was deleted and created again since it was copied)"
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// partition checks one partition.
func (f Flow) partition(ctx context.Context, p part, progress func(int64)) (PartitionReport, error) {
	ip := f.Index.Parts[index.TP{Topic: p.topic, Partition: p.partition}]
	if ip == nil {
		ip = offsets.NewPartition() // nothing copied: every record is lag
	}
	e := NewExact(p.partition, ip.Segments(), ip.Covered(), p.from, f.ActiveActive)
	var n int64
	err := tail.ReadRange(ctx, f.SourceReader, p.topic, p.partition, p.from, p.end, func(r *kgo.Record) {
		e.Source(r)
		n++
		if n%1024 == 0 {
			progress(1024)
		}
	})
	if err != nil {
		return PartitionReport{}, fmt.Errorf("reading %s on %s: %w", p.topic, f.Source, err)
	}
	progress(p.end - p.from - (n - n%1024)) // offsets without a record count as read
	lo, hi := e.TargetRange()
	if hi > lo {
		tend, err := f.targetEnd(ctx, p.remote, p.partition)
		if err != nil {
			return PartitionReport{}, err
		}
		n = 0
		err = tail.ReadRange(ctx, f.TargetReader, p.remote, p.partition, lo, min(hi, tend), func(r *kgo.Record) {
			e.Target(r)
			n++
			if n%1024 == 0 {
				progress(1024)
			}
		})
		if err != nil {
			return PartitionReport{}, fmt.Errorf("reading %s on %s: %w", p.remote, f.Target, err)
		}
	}
	progress(p.end - p.from - (n - n%1024))
	return e.Report(), nil
}

// targetEnd is the last stable offset of a target partition.
func (f Flow) targetEnd(ctx context.Context, topic string, partition int32) (int64, error) {
	ends, err := f.TargetAdmin.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("listing the end offsets of %s on %s: %w", topic, f.Target, err)
	}
	o, _ := ends.Lookup(topic, partition)
	return o.Offset, nil
}

// groups checks the checkpoint of every group the flow checkpoints.
func (f Flow) groups(ctx context.Context) ([]GroupReport, error) {
	listed, err := f.SourceAdmin.ListGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the groups of %s: %w", f.Source, err)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for _, g := range listed.Groups() {
			if f.Groups(g) && !yield(g) {
				return
			}
		}
	})
	if len(names) == 0 {
		return nil, nil
	}
	stored := map[checkpoint.Key]wire.Checkpoint{}
	if f.CheckpointsEvery > 0 {
		if stored, err = checkpoint.ReadLatest(ctx, f.TargetReader, f.CheckpointsTopic); err != nil {
			return nil, fmt.Errorf("reading the checkpoints in %s on %s: %w", f.CheckpointsTopic, f.Target, err)
		}
	}
	var out []GroupReport
	for _, g := range names {
		ts, err := checkpoint.TranslateGroup(ctx, f.SourceAdmin, f.Translate, f.Index, g)
		if err != nil {
			return nil, err
		}
		gr := GroupReport{Group: g}
		for _, t := range ts {
			if !f.Topics(t.Topic) {
				continue
			}
			gc := GroupCheckpoint{Topic: t.Topic, Remote: t.RemoteTopic, Partition: t.Partition, Committed: t.Upstream, Translated: t.Downstream, Upstream: -1, Downstream: -1}
			cp, ok := stored[checkpoint.Key{Group: g, Topic: t.RemoteTopic, Partition: t.Partition}]
			if ok {
				gc.Upstream, gc.Downstream = cp.UpstreamOffset, cp.DownstreamOffset
			}
			f.judge(&gc, t, ok)
			gr.Partitions = append(gr.Partitions, gc)
		}
		out = append(out, gr)
	}
	return out, nil
}

// judge sets a group partition's checkpoint state.
func (f Flow) judge(gc *GroupCheckpoint, t checkpoint.Translation, stored bool) {
	switch {
	case !t.Result.Usable() && !stored:
		gc.State, gc.Why = CheckpointNone, "the committed offset has no translation: "+t.Status
	case !stored && f.CheckpointsEvery == 0:
		gc.State, gc.Why = CheckpointMissing, "the flow writes no checkpoints (emit.checkpoints.enabled = false)"
	case !stored:
		gc.State, gc.Why = CheckpointMissing, fmt.Sprintf("no checkpoint in %s on %s; the flow writes them every %s, so a commit newer than that may not have one yet", f.CheckpointsTopic, f.Target, f.CheckpointsEvery)
	case gc.Upstream == t.Upstream && t.Result.Usable() && gc.Downstream == t.Downstream:
		gc.State = CheckpointExact
	case gc.Upstream == t.Upstream:
		gc.State, gc.Why = CheckpointWrong, fmt.Sprintf("the checkpoint says %d, the offset index %d (%s)", gc.Downstream, t.Downstream, t.Status)
	default:
		// A checkpoint of an earlier (or rewound) commit: is it exact for
		// the offset it names? Active-active lowering is not redone here.
		want, res := f.Index.Translate(t.Topic, t.Partition, gc.Upstream)
		switch {
		case f.Translate.Reverse != nil || (res.Usable() && want == gc.Downstream):
			gc.State, gc.Why = CheckpointBehind, fmt.Sprintf("the checkpoint is for source offset %d; the group committed %d since", gc.Upstream, t.Upstream)
		default:
			gc.State, gc.Why = CheckpointWrong, fmt.Sprintf("the checkpoint maps source offset %d to %d, the offset index to %d (%s)", gc.Upstream, gc.Downstream, want, res)
		}
	}
}
