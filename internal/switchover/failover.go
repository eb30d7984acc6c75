// Package switchover moves a flow's consumers between its clusters on the
// day of a disaster: Failover from the source to the target, exactly
// through the offset index, and Failback when the old source returns.
package switchover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/checkpoint"
	"strait/internal/daemon"
	"strait/internal/dr"
	"strait/internal/flowconn"
	"strait/internal/index"
	"strait/internal/offsets"
	"strait/internal/tail"
	"strait/internal/topics"
)

// Refusal is a failover or failback refused before it changed anything:
// wrong use, such as a flow already failed over or a group still active.
type Refusal struct{ error }

func (r Refusal) Unwrap() error { return r.error }

// Options are a failover's settings.
type Options struct {
	// Groups narrows the groups moved to those it matches (nil: every
	// group the flow checkpoints).
	Groups *regexp.Regexp
	// MaxRPO lets the gate pass while what is not copied was written less
	// than this long ago; 0: nothing may be lost.
	MaxRPO time.Duration
	// Fence adds DENY WRITE ACLs on the source topics for the switch.
	Fence bool
	// Execute carries the plan out; without it the plan is only printed.
	Execute bool
	// Report is where the JSON report goes ("": a name with the time).
	Report        string
	GateTimeout   time.Duration
	StopTimeout   time.Duration
	SourceTimeout time.Duration
	// SourceLost fails over as if the source were unreachable, from what
	// the target holds (strait drill's disaster, on a source that is in
	// fact up).
	SourceLost bool
	// Out gets the plan and the tables, Log the progress lines.
	Out, Log io.Writer
}

// Failover fails the flow c over to its target (see strait failover --help).
func Failover(ctx context.Context, c *flowconn.Conn, opts Options) error {
	f := &failover{o: c, opts: opts, out: opts.Out, log: opts.Log}
	return f.run(ctx)
}

// failover carries out one failover.
type failover struct {
	o    *flowconn.Conn
	opts Options
	out  io.Writer
	log  io.Writer

	sourceUp bool
	sourceID string
	targetID string
	partLag  []partitionLag
	moves    []groupMove
}

// partitionLag is how far one source partition is copied.
type partitionLag struct {
	dr.Copied
	SourceEnd int64 `json:"source_end"` // -1: the source is unreachable
	// LastCopied is the timestamp of the last copied record, when known.
	LastCopied *time.Time `json:"last_copied,omitempty"`
}

// groupMove is one group partition's offsets before and after.
type groupMove struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Remote    string `json:"remote"`
	Partition int32  `json:"partition"`
	// Committed is the group's offset on the source (from a checkpoint
	// when the source is unreachable).
	Committed int64 `json:"source_committed"`
	// Before is the group's offset on the target before, -1 for none.
	Before int64 `json:"target_before"`
	// After is the offset committed on the target, -1 when none was.
	After  int64  `json:"target_after"`
	Status string `json:"status"`
}

// failoverReport is the JSON report.
type failoverReport struct {
	Flow       string         `json:"flow"`
	Executed   bool           `json:"executed"`
	At         time.Time      `json:"at"`
	SourceUp   bool           `json:"source_reachable"`
	Fenced     bool           `json:"source_fenced"`
	Partitions []partitionLag `json:"partitions"`
	Groups     []groupMove    `json:"groups"`
}

func (f *failover) say(format string, args ...any) { fmt.Fprintf(f.log, format+"\n", args...) }

func (f *failover) run(ctx context.Context) error {
	name := f.o.Flow.Name()
	states, _, err := dr.Read(ctx, f.o.TargetReader)
	if err != nil {
		return err
	}
	if st, ok := states[name]; ok && st.Phase == dr.FailedOver {
		return Refusal{fmt.Errorf("the flow %s was already failed over at %s; run strait failback --flow '%s' first", name, st.At.Format(time.RFC3339), name)}
	}
	if f.targetID, err = clusterID(ctx, f.o.TargetAdmin); err != nil {
		return fmt.Errorf("the target %s: %w", f.o.Flow.Target, err)
	}
	f.probeSource(ctx)
	if f.sourceUp {
		if err := f.o.LoadReverse(ctx); err != nil {
			return err
		}
	} else if f.opts.Fence {
		return Refusal{fmt.Errorf("--fence-source: the source %s is unreachable, so it cannot be fenced; fail over without it", f.o.Flow.Source)}
	}
	if err := f.plan(ctx); err != nil {
		return err
	}
	if err := f.refuseActive(ctx); err != nil {
		return err
	}
	f.printPlan()
	if !f.opts.Execute {
		fmt.Fprintln(f.out, "Dry run: nothing changed. Add --execute to carry the plan out.")
		return nil
	}
	if f.opts.Fence {
		if err := f.fenceSource(ctx); err != nil {
			return err
		}
	}
	if f.sourceUp {
		if err := f.gate(ctx); err != nil {
			return errors.Join(err, f.unfence(ctx))
		}
	}
	if err := f.stopFlow(ctx); err != nil {
		return err
	}
	// The flow is stopped: what it copied is final. Translate again.
	if f.o.Index, err = index.Load(ctx, f.o.TargetReader, index.TopicName(f.o.Flow.Source)); err != nil {
		return fmt.Errorf("reading the offset index on %s: %w", f.o.Flow.Target, err)
	}
	if err := f.plan(ctx); err != nil {
		return err
	}
	if err := f.refuseActive(ctx); err != nil {
		return fmt.Errorf("%w (the flow is stopped; run the failover again once the groups are inactive)", err)
	}
	if err := f.commit(ctx); err != nil {
		return err
	}
	st := dr.State{Flow: name, Phase: dr.FailedOver, At: time.Now().UTC(), SourceClusterID: f.sourceID, TargetClusterID: f.targetID}
	if f.opts.Fence {
		st.Fenced = f.fencedTopics()
	}
	for _, p := range f.partLag {
		st.Copied = append(st.Copied, p.Copied)
	}
	for _, m := range f.moves {
		if !slices.Contains(st.Groups, m.Group) {
			st.Groups = append(st.Groups, m.Group)
		}
	}
	if err := f.writeState(ctx, st); err != nil {
		return err
	}
	f.printMoves()
	if err := f.writeReport(); err != nil {
		return err
	}
	if bad := notMoved(f.moves); bad > 0 {
		return fmt.Errorf("%d group partitions were not moved (above): set their offsets on %s by hand", bad, f.o.Flow.Target)
	}
	fmt.Fprintf(f.out, "Failed over %s: consumers can start on %s. The flow copies nothing until strait failback --flow '%s'.\n", name, f.o.Flow.Target, name)
	return nil
}

// probeSource finds out whether the source answers.
func (f *failover) probeSource(ctx context.Context) {
	if f.opts.SourceLost {
		f.say("Taking the source %s for lost: failing over from what the target holds.", f.o.Flow.Source)
		return
	}
	pctx, cancel := context.WithTimeout(ctx, f.opts.SourceTimeout)
	defer cancel()
	id, err := clusterID(pctx, f.o.SourceAdmin)
	if err != nil {
		f.say("The source %s does not answer (%v): failing over from what the target holds.", f.o.Flow.Source, err)
		return
	}
	f.sourceUp, f.sourceID = true, id
}

func clusterID(ctx context.Context, adm *kadm.Client) (string, error) {
	m, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return "", err
	}
	return m.Cluster, nil
}

// plan works out how far each partition is copied and where each group
// lands.
func (f *failover) plan(ctx context.Context) error {
	if err := f.planPartitions(ctx); err != nil {
		return err
	}
	return f.planGroups(ctx)
}

func (f *failover) planPartitions(ctx context.Context) error {
	f.partLag = nil
	// Every replicated partition: those the index knows, and, with the
	// source up, those of its topics that nothing was copied from yet.
	parts := map[index.TP]*offsets.Partition{}
	for tp, p := range f.o.Index.Parts {
		if f.o.Replicates(tp.Topic) {
			parts[tp] = p
		}
	}
	var ends kadm.ListedOffsets
	if f.sourceUp {
		listed, err := f.o.SourceAdmin.ListTopics(ctx)
		if err != nil {
			return fmt.Errorf("listing the topics of %s: %w", f.o.Flow.Source, err)
		}
		var topics []string
		for _, td := range listed.Sorted() {
			if td.IsInternal || !f.o.Replicates(td.Topic) {
				continue
			}
			topics = append(topics, td.Topic)
			for _, pd := range td.Partitions.Sorted() {
				tp := index.TP{Topic: td.Topic, Partition: pd.Partition}
				if parts[tp] == nil {
					parts[tp] = offsets.NewPartition()
				}
			}
		}
		if len(topics) > 0 {
			if ends, err = f.o.SourceAdmin.ListCommittedOffsets(ctx, topics...); err != nil {
				return fmt.Errorf("listing the end offsets of %s: %w", f.o.Flow.Source, err)
			}
		}
	}
	for tp, p := range parts {
		pl := partitionLag{Copied: dr.Copied{Topic: tp.Topic, Remote: f.o.Policy.FormatRemoteTopic(f.o.Flow.Source, tp.Topic), Partition: tp.Partition, SourceOffset: max(p.Covered(), 0)}, SourceEnd: -1}
		if segs := p.Segments(); len(segs) > 0 {
			pl.TargetOffset = segs[len(segs)-1].TgtEnd()
		}
		if o, ok := ends.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil {
			pl.SourceEnd = o.Offset
		}
		f.partLag = append(f.partLag, pl)
	}
	slices.SortFunc(f.partLag, func(a, b partitionLag) int {
		return strings.Compare(fmt.Sprintf("%s\x00%09d", a.Topic, a.Partition), fmt.Sprintf("%s\x00%09d", b.Topic, b.Partition))
	})
	if !f.sourceUp {
		for i := range f.partLag {
			f.partLag[i].LastCopied = lastRecordTime(ctx, f.o.TargetReader, f.partLag[i].Remote, f.partLag[i].Partition, f.partLag[i].TargetOffset)
		}
	}
	return nil
}

// lastRecordTime is the timestamp of the record before offset end of a
// partition, nil when there is none (a marker, or nothing).
func lastRecordTime(ctx context.Context, cl *kgo.Client, topic string, partition int32, end int64) *time.Time {
	if end <= 0 {
		return nil
	}
	return firstRecordTime(ctx, cl, topic, partition, end-1, end)
}

// selected reports whether failover moves group.
func (f *failover) selected(group string) bool { return f.o.SelectedGroup(f.opts.Groups, group) }

func (f *failover) planGroups(ctx context.Context) error {
	var ts map[string][]checkpoint.Translation
	var err error
	if f.sourceUp {
		ts, err = f.sourceGroups(ctx)
	} else {
		ts, err = f.checkpointedGroups(ctx)
	}
	if err != nil {
		return err
	}
	before, err := f.targetOffsets(ctx, slices.Sorted(maps.Keys(ts)))
	if err != nil {
		return err
	}
	f.moves = nil
	for _, g := range slices.Sorted(maps.Keys(ts)) {
		for _, t := range ts[g] {
			m := groupMove{Group: g, Topic: t.Topic, Remote: t.RemoteTopic, Partition: t.Partition, Committed: t.Upstream, Before: -1, After: -1, Status: t.Status}
			if o, ok := before[g].Lookup(t.RemoteTopic, t.Partition); ok {
				m.Before = o.At
			}
			if t.Result.Usable() {
				m.After = t.Downstream
			}
			f.moves = append(f.moves, m)
		}
	}
	return nil
}

// sourceGroups translates the committed offsets of every selected group on
// the source.
func (f *failover) sourceGroups(ctx context.Context) (map[string][]checkpoint.Translation, error) {
	listed, err := f.o.SourceAdmin.ListGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the groups of %s: %w", f.o.Flow.Source, err)
	}
	out := map[string][]checkpoint.Translation{}
	for _, g := range listed.Groups() {
		if !f.selected(g) {
			continue
		}
		ts, err := checkpoint.TranslateGroup(ctx, f.o.SourceAdmin, f.o.Translator(), f.o.Index, g)
		if err != nil {
			return nil, err
		}
		if len(ts) > 0 {
			out[g] = ts
		}
	}
	return out, nil
}

// checkpointedGroups takes each selected group's offsets from its latest
// checkpoints on the target, translated again through the index (the
// source, and so the groups' own commits, are gone).
func (f *failover) checkpointedGroups(ctx context.Context) (map[string][]checkpoint.Translation, error) {
	out := map[string][]checkpoint.Translation{}
	topic := f.o.Policy.CheckpointsTopic(f.o.Flow.Source)
	latest, err := checkpoint.ReadLatest(ctx, f.o.TargetReader, topic)
	if err != nil {
		return nil, fmt.Errorf("reading the checkpoints in %s on %s: %w", topic, f.o.Flow.Target, err)
	}
	for _, cp := range latest {
		if !f.selected(cp.Group) {
			continue
		}
		up, ok := f.o.Policy.UpstreamTopic(cp.Topic)
		if !ok {
			up = cp.Topic
		}
		down, res := f.o.Index.Translate(up, cp.Partition, cp.UpstreamOffset)
		out[cp.Group] = append(out[cp.Group], checkpoint.Translation{Topic: up, Partition: cp.Partition, Upstream: cp.UpstreamOffset, RemoteTopic: cp.Topic, Downstream: down, Result: res, Status: res.String() + " (from the last checkpoint)", Metadata: cp.Metadata})
	}
	for g := range out {
		slices.SortFunc(out[g], func(a, b checkpoint.Translation) int {
			if a.Topic != b.Topic {
				return strings.Compare(a.Topic, b.Topic)
			}
			return int(a.Partition - b.Partition)
		})
	}
	return out, nil
}

func (f *failover) targetOffsets(ctx context.Context, groups []string) (map[string]kadm.OffsetResponses, error) {
	out := map[string]kadm.OffsetResponses{}
	for _, g := range groups {
		resps, err := f.o.TargetAdmin.FetchOffsets(ctx, g)
		if errors.Is(err, kerr.GroupIDNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the offsets of group %q on %s: %w", g, f.o.Flow.Target, err)
		}
		out[g] = resps
	}
	return out, nil
}

// refuseActive fails, naming them, when a group to move has members on
// the target: committing under a running consumer would be overwritten by
// it, or move it under its feet.
func (f *failover) refuseActive(ctx context.Context) error {
	return refuseActive(ctx, f.o.TargetAdmin, f.o.Flow.Target, f.moves)
}

// refuseActive fails when a group of moves has members on cluster.
func refuseActive(ctx context.Context, adm *kadm.Client, cluster string, moves []groupMove) error {
	var groups []string
	for _, m := range moves {
		if !slices.Contains(groups, m.Group) {
			groups = append(groups, m.Group)
		}
	}
	if len(groups) == 0 {
		return nil
	}
	described, err := adm.DescribeGroups(ctx, groups...)
	if err != nil {
		return fmt.Errorf("describing the groups on %s: %w", cluster, err)
	}
	var active []string
	for _, g := range described.Sorted() {
		if len(g.Members) == 0 {
			continue
		}
		var who []string
		for _, m := range g.Members {
			who = append(who, m.ClientID+"@"+strings.TrimPrefix(m.ClientHost, "/"))
		}
		active = append(active, fmt.Sprintf("%s (%d members: %s)", g.Group, len(g.Members), strings.Join(who, ", ")))
	}
	if len(active) > 0 {
		return Refusal{fmt.Errorf("groups active on %s: %s; stop their consumers on %s first, or leave the groups out with --groups; nothing changed", cluster, strings.Join(active, "; "), cluster)}
	}
	return nil
}

// gate waits until the copy is complete, or what is missing is younger
// than --max-rpo.
func (f *failover) gate(ctx context.Context) error {
	if err := gate(ctx, f.o, f.opts.MaxRPO, f.opts.GateTimeout, "the failback's orphans", f.say); err != nil {
		return err
	}
	return f.planPartitions(ctx)
}

// gate waits until o copied every record of its source, or until those
// not copied were written less than maxRPO ago (then they become what
// lost names), reading o's index again each second, for at most timeout.
func gate(ctx context.Context, o *flowconn.Conn, maxRPO, timeout time.Duration, lost string, say func(string, ...any)) error {
	deadline := time.Now().Add(timeout)
	for {
		lag, oldest, err := lagOf(ctx, o)
		if err != nil {
			return err
		}
		age := time.Duration(0)
		if !oldest.IsZero() {
			age = time.Since(oldest)
		}
		switch {
		case lag == 0:
			say("Gate: every record on %s is copied to %s.", o.Flow.Source, o.Flow.Target)
			return nil
		case maxRPO > 0 && !oldest.IsZero() && age <= maxRPO:
			say("Gate: %d records on %s not copied, the oldest written %s ago, within --max-rpo %s: they will be %s.", lag, o.Flow.Source, age.Round(time.Millisecond), maxRPO, lost)
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("gate: %d records on %s are still not copied to %s after %s (the oldest written %s ago); is strait run copying the flow %s? Raise --gate-timeout, or accept the loss with --max-rpo; nothing changed", lag, o.Flow.Source, o.Flow.Target, timeout, age.Round(time.Second), o.Flow.Name())
		}
		say("Gate: waiting for %d records on %s not copied yet (the oldest written %s ago)", lag, o.Flow.Source, age.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		if o.Index, err = index.Load(ctx, o.TargetReader, index.TopicName(o.Flow.Source)); err != nil {
			return fmt.Errorf("reading the offset index on %s: %w", o.Flow.Target, err)
		}
	}
}

// lagOf sums the records on o's source that o has not copied (counting
// offsets), and finds when the oldest of them was written.
func lagOf(ctx context.Context, o *flowconn.Conn) (records int64, oldest time.Time, err error) {
	topics, err := o.SourceAdmin.ListTopics(ctx)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("listing the topics of %s: %w", o.Flow.Source, err)
	}
	var names []string
	for _, t := range topics.Sorted() {
		// Heartbeats are Strait's own, written every second: never caught.
		if !t.IsInternal && o.Replicates(t.Topic) && !o.Policy.IsHeartbeatsTopic(t.Topic) {
			names = append(names, t.Topic)
		}
	}
	if len(names) == 0 {
		return 0, time.Time{}, nil
	}
	ends, err := o.SourceAdmin.ListCommittedOffsets(ctx, names...)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("listing the end offsets of %s: %w", o.Flow.Source, err)
	}
	starts, err := o.SourceAdmin.ListStartOffsets(ctx, names...)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("listing the start offsets of %s: %w", o.Flow.Source, err)
	}
	// The flow's committed progress: how far it read each partition, also
	// where it copied nothing (active-active: every record came from the
	// reverse flow), which its index cannot say.
	progress, err := o.TargetAdmin.FetchOffsets(ctx, daemon.ProgressGroup(o.Flow.Source))
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return 0, time.Time{}, fmt.Errorf("reading the progress of %s on %s: %w", o.Flow.Name(), o.Flow.Target, err)
	}
	var listed []kadm.ListedOffset
	ends.Each(func(o kadm.ListedOffset) { listed = append(listed, o) })
	for _, e := range listed {
		if e.Err != nil {
			return 0, time.Time{}, fmt.Errorf("listing the end of %s[%d] on %s: %w", e.Topic, e.Partition, o.Flow.Source, e.Err)
		}
		from := int64(0)
		if s, ok := starts.Lookup(e.Topic, e.Partition); ok {
			from = s.Offset
		}
		if p := o.Index.Parts[index.TP{Topic: e.Topic, Partition: e.Partition}]; p != nil {
			from = max(from, p.Covered())
		}
		if c, ok := progress.Lookup(o.Policy.FormatRemoteTopic(o.Flow.Source, e.Topic), e.Partition); ok && c.Err == nil {
			from = max(from, c.At)
		}
		if e.Offset <= from {
			continue
		}
		records += e.Offset - from
		if t := firstRecordTime(ctx, o.SourceReader, e.Topic, e.Partition, from, e.Offset); t != nil && (oldest.IsZero() || t.Before(oldest)) {
			oldest = *t
		}
	}
	return records, oldest, nil
}

// firstRecordTime is the timestamp of the first record in [from, end) of
// a partition, nil when there is none.
func firstRecordTime(ctx context.Context, cl *kgo.Client, topic string, partition int32, from, end int64) *time.Time {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var ts *time.Time
	_ = tail.ReadRange(rctx, cl, topic, partition, from, end, func(r *kgo.Record) {
		if ts == nil {
			t := r.Timestamp.UTC()
			ts = &t
			cancel()
		}
	})
	return ts
}

// fenceACLs are the DENY WRITE bindings fencing the source topics.
func (f *failover) fenceACLs() *kadm.ACLBuilder { return fenceACLs(f.fencedTopics()) }

// fencedTopics are the replicated topics but heartbeats, which Strait
// itself writes.
func (f *failover) fencedTopics() []string {
	var topics []string
	for _, p := range f.partLag {
		if !slices.Contains(topics, p.Topic) && !f.o.Policy.IsHeartbeatsTopic(p.Topic) {
			topics = append(topics, p.Topic)
		}
	}
	return topics
}

// fenceACLs are DENY WRITE bindings for every principal on topics.
func fenceACLs(topics []string) *kadm.ACLBuilder {
	return kadm.NewACLs().Topics(topics...).ResourcePatternType(kadm.ACLPatternLiteral).Deny("User:*").DenyHosts("*").Operations(kadm.OpWrite)
}

// fenceSource adds the DENY WRITE bindings on the source.
func (f *failover) fenceSource(ctx context.Context) error {
	if len(f.partLag) == 0 {
		return nil
	}
	res, err := f.o.SourceAdmin.CreateACLs(ctx, f.fenceACLs())
	if err == nil {
		for _, r := range res {
			if r.Err != nil {
				err = r.Err
				break
			}
		}
	}
	switch {
	case errors.Is(err, kerr.SecurityDisabled):
		return fmt.Errorf("--fence-source: %s has no authorizer (authorizer.class.name is not set), so ACLs cannot stop its producers; stop them yourself and fail over without --fence-source; nothing changed", f.o.Flow.Source)
	case err != nil:
		return fmt.Errorf("--fence-source: adding DENY WRITE ACLs on %s: %w; nothing changed", f.o.Flow.Source, err)
	}
	f.say("Fenced %s: DENY WRITE for User:* on the %d replicated topics (strait failback removes it).", f.o.Flow.Source, len(res))
	return nil
}

// unfence removes the fence after a failed gate, as A stays the primary.
func (f *failover) unfence(ctx context.Context) error {
	if !f.opts.Fence {
		return nil
	}
	if _, err := f.o.SourceAdmin.DeleteACLs(ctx, f.fenceACLs()); err != nil {
		return fmt.Errorf("removing the fence on %s: %w; remove the DENY WRITE ACLs for User:* by hand", f.o.Flow.Source, err)
	}
	f.say("Removed the fence on %s: the failover did not happen.", f.o.Flow.Source)
	return nil
}

// stopFlow marks the flow failing over on the target and waits until no
// node runs it: every node follows the state and stops the flow.
func (f *failover) stopFlow(ctx context.Context) error {
	name := f.o.Flow.Name()
	if err := f.writeState(ctx, dr.State{Flow: name, Phase: dr.FailingOver, At: time.Now().UTC(), SourceClusterID: f.sourceID, TargetClusterID: f.targetID}); err != nil {
		return err
	}
	group := daemon.ProgressGroup(f.o.Flow.Source)
	deadline := time.Now().Add(f.opts.StopTimeout)
	for {
		described, err := f.o.TargetAdmin.DescribeGroups(ctx, group)
		if err != nil {
			return fmt.Errorf("describing the flow's group %s on %s: %w", group, f.o.Flow.Target, err)
		}
		g := described[group]
		if len(g.Members) == 0 {
			f.say("The flow is stopped: no node runs it.")
			return nil
		}
		if time.Now().After(deadline) {
			var who []string
			for _, m := range g.Members {
				who = append(who, m.ClientHost)
			}
			return fmt.Errorf("%d nodes still run the flow after %s (%s): are they older than this failover? Stop them and run the failover again", len(g.Members), f.opts.StopTimeout, strings.Join(who, ", "))
		}
		f.say("Waiting for %d nodes to stop the flow", len(g.Members))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (f *failover) writeState(ctx context.Context, st dr.State) error {
	if err := ensureStateTopic(ctx, f.o); err != nil {
		return err
	}
	cl, err := f.o.Plan.TargetProducer.New(f.o.ID, slog.New(slog.DiscardHandler), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	return dr.Write(ctx, cl, st)
}

// ensureStateTopic creates the state topic on the target if it is missing.
func ensureStateTopic(ctx context.Context, o *flowconn.Conn) error {
	err := topics.EnsureCompacted(ctx, o.TargetAdmin, dr.Topic, o.Flow.CheckpointsTopicReplicationFactor)
	if err != nil {
		return fmt.Errorf("creating %s on %s: %w", dr.Topic, o.Flow.Target, err)
	}
	return nil
}

// commit commits each group's translated offsets on the target.
func (f *failover) commit(ctx context.Context) error {
	return commitMoves(ctx, f.o.TargetAdmin, f.o.Flow.Target, f.moves)
}

// notMoved counts the moves without an offset to commit.
func notMoved(moves []groupMove) int {
	n := 0
	for _, m := range moves {
		if m.After < 0 {
			n++
		}
	}
	return n
}

// commitMoves commits each move's After offset on cluster.
func commitMoves(ctx context.Context, adm *kadm.Client, cluster string, moves []groupMove) error {
	byGroup := map[string]kadm.Offsets{}
	for _, m := range moves {
		if m.After < 0 {
			continue
		}
		if byGroup[m.Group] == nil {
			byGroup[m.Group] = kadm.Offsets{}
		}
		offs := byGroup[m.Group]
		offs.Add(kadm.Offset{Topic: m.Remote, Partition: m.Partition, At: m.After, LeaderEpoch: -1})
	}
	for _, g := range slices.Sorted(maps.Keys(byGroup)) {
		resps, err := adm.CommitOffsets(ctx, g, byGroup[g])
		if err == nil {
			err = resps.Error()
		}
		if err != nil {
			return fmt.Errorf("committing the offsets of group %q on %s: %w", g, cluster, err)
		}
	}
	return nil
}

func (f *failover) printPlan() {
	w := f.out
	mode := "the source is reachable"
	if !f.sourceUp {
		mode = "the source is UNREACHABLE: groups come from their last checkpoints"
	}
	fmt.Fprintf(w, "Failover of %s (%s)\n", f.o.Flow.Name(), mode)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCOPIED UP TO (SOURCE)\tSOURCE END\tNOT COPIED\tTARGET END\tLAST COPIED RECORD")
	for _, p := range f.partLag {
		end, lag := "unknown", "unknown"
		if p.SourceEnd >= 0 {
			end, lag = fmt.Sprint(p.SourceEnd), fmt.Sprint(max(p.SourceEnd-p.SourceOffset, 0))
		}
		last := "-"
		if p.LastCopied != nil {
			last = p.LastCopied.Format(time.RFC3339Nano)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\t%s\n", p.Topic, p.Partition, p.SourceOffset, end, lag, p.TargetOffset, last)
	}
	tw.Flush()
	fmt.Fprintln(w, "Steps:")
	step := 1
	if f.opts.Fence {
		fmt.Fprintf(w, "  %d. fence %s: DENY WRITE for User:* on its replicated topics\n", step, f.o.Flow.Source)
		step++
	}
	if f.sourceUp {
		gate := "until every record is copied"
		if f.opts.MaxRPO > 0 {
			gate = fmt.Sprintf("until every record is copied, or those not copied were written less than %s ago", f.opts.MaxRPO)
		}
		fmt.Fprintf(w, "  %d. wait %s (at most %s)\n", step, gate, f.opts.GateTimeout)
		step++
	}
	fmt.Fprintf(w, "  %d. stop the flow on every node (it copies nothing until strait failback)\n", step)
	fmt.Fprintf(w, "  %d. commit the groups' translated offsets on %s:\n", step+1, f.o.Flow.Target)
	f.printMoves()
}

func (f *failover) printMoves() { printMoves(f.out, f.moves, f.o.Flow.Source, f.o.Flow.Target) }

// printMoves prints the before/after table of moves from cluster from to
// cluster to.
func printMoves(w io.Writer, moves []groupMove, from, to string) {
	if len(moves) == 0 {
		fmt.Fprintln(w, "     (no group to move)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "GROUP\tTOPIC\tPARTITION\t%s COMMITTED\t%s BEFORE\t%s AFTER\tSTATUS\n", from, to, to)
	for _, m := range moves {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", m.Group, m.Remote, m.Partition, m.Committed, offsetOrDash(m.Before), offsetOrDash(m.After), m.Status)
	}
	tw.Flush()
}

func offsetOrDash(o int64) string {
	if o < 0 {
		return "-"
	}
	return fmt.Sprint(o)
}

func (f *failover) writeReport() error {
	path := f.opts.Report
	now := time.Now().UTC()
	if path == "" {
		path = fmt.Sprintf("strait-failover-%s-%s-%s.json", f.o.Flow.Source, f.o.Flow.Target, now.Format("20060102T150405Z"))
	}
	doc := failoverReport{Flow: f.o.Flow.Name(), Executed: true, At: now, SourceUp: f.sourceUp, Fenced: f.opts.Fence, Partitions: f.partLag, Groups: f.moves}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	fmt.Fprintf(f.out, "Report: %s\n", path)
	return nil
}
