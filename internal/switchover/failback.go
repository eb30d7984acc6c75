package switchover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
	"strait/internal/dr"
	"strait/internal/flowconn"
	"strait/internal/index"
	"strait/internal/offsets"
	"strait/internal/tail"
)

// FailbackOptions are a failback's settings.
type FailbackOptions struct {
	// Groups narrows the groups moved back (nil: every group the flow
	// checkpoints).
	Groups *regexp.Regexp
	// CopyOrphans copies the orphans, the source's records the failover
	// left behind, to a side topic per topic on the source (OrphansTopic).
	CopyOrphans bool
	// MaxRPO lets the gate on the reverse flow pass while what it has not
	// copied was written less than this long ago.
	MaxRPO  time.Duration
	Execute bool
	// Report is where the JSON report goes ("": a name with the time).
	Report        string
	GateTimeout   time.Duration
	SourceTimeout time.Duration
	Out, Log      io.Writer
}

// OrphansTopic is the side topic, on the old primary, that failback
// --copy-orphans copies a topic's orphans to. The ".internal" suffix keeps
// every MM2-style replicator, Strait included, from copying it.
func OrphansTopic(topic string) string { return "strait-orphans." + topic + ".internal" }

// Orphans are a source partition's records written after the last copied
// one: the failover's RPO window, which never reached the target.
type Orphans struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// From and To bound their offsets, [From, To).
	From    int64 `json:"from"`
	To      int64 `json:"to"`
	Records int64 `json:"records"`
	// First and Last are the first and last orphan's timestamps.
	First *time.Time `json:"first,omitempty"`
	Last  *time.Time `json:"last,omitempty"`
}

// failbackReport is the JSON report.
type failbackReport struct {
	Flow    string      `json:"flow"`
	Reverse string      `json:"reverse"`
	At      time.Time   `json:"at"`
	Orphans []Orphans   `json:"orphans"`
	Copied  bool        `json:"orphans_copied"`
	Groups  []groupMove `json:"groups"`
}

// Failback returns the flow fwd (A->B), failed over, to its source A: it
// reports A's orphans exactly, waits until the reverse flow rev (B->A)
// copied what was written on B since the failover, moves the groups back
// to A with exact offsets, lifts the failover's fence and clears the
// failover state, so that fwd copies again.
func Failback(ctx context.Context, fwd, rev *flowconn.Conn, opts FailbackOptions) error {
	b := &failback{fwd: fwd, rev: rev, opts: opts}
	return b.run(ctx)
}

type failback struct {
	fwd, rev *flowconn.Conn
	opts     FailbackOptions
	state    dr.State
	orphans  []Orphans
	moves    []groupMove
}

func (b *failback) say(format string, args ...any) { fmt.Fprintf(b.opts.Log, format+"\n", args...) }

func (b *failback) run(ctx context.Context) error {
	name, src := b.fwd.Flow.Name(), b.fwd.Flow.Source
	states, _, err := dr.Read(ctx, b.fwd.TargetReader)
	if err != nil {
		return err
	}
	st, ok := states[name]
	switch {
	case !ok:
		return Refusal{fmt.Errorf("failback before failover: %s holds no failover of %s; nothing changed", b.fwd.Flow.Target, name)}
	case st.Phase != dr.FailedOver:
		return Refusal{fmt.Errorf("the failover of %s did not finish (%s since %s): run strait failover --flow '%s' --execute again first; nothing changed", name, st.Phase, st.At.Format(time.RFC3339), name)}
	}
	b.state = st
	pctx, cancel := context.WithTimeout(ctx, b.opts.SourceTimeout)
	id, err := clusterID(pctx, b.fwd.SourceAdmin)
	cancel()
	if err != nil {
		return Refusal{fmt.Errorf("%s is unreachable (%v): a failback needs it back; nothing changed", src, err)}
	}
	if st.SourceClusterID != "" && id != st.SourceClusterID {
		return Refusal{fmt.Errorf("%s came back with cluster id %s, but %s was failed over from cluster id %s: this is not the cluster the data came from; nothing changed", src, id, name, st.SourceClusterID)}
	}
	if b.rev == nil {
		return Refusal{fmt.Errorf("the reverse flow %s->%s is not enabled: set %s->%s.enabled = true and run strait run with it, so that what was written on %s since the failover is copied back (IdentityReplicationPolicy keeps the topic names, so clients switch back unchanged); nothing changed",
			b.fwd.Flow.Target, src, b.fwd.Flow.Target, src, b.fwd.Flow.Target)}
	}
	if err := b.findOrphans(ctx); err != nil {
		return err
	}
	if err := b.planGroups(ctx); err != nil {
		return err
	}
	if err := refuseActive(ctx, b.fwd.SourceAdmin, src, b.moves); err != nil {
		return err
	}
	lag, oldest, err := lagOf(ctx, b.rev)
	if err != nil {
		return err
	}
	b.printPlan(lag, oldest)
	if !b.opts.Execute {
		fmt.Fprintln(b.opts.Out, "Dry run: nothing changed. Add --execute to carry the plan out.")
		return nil
	}
	if b.opts.CopyOrphans {
		if err := b.copyOrphans(ctx); err != nil {
			return err
		}
	}
	if err := gate(ctx, b.rev, b.opts.MaxRPO, b.opts.GateTimeout, "left on "+b.fwd.Flow.Target, b.say); err != nil {
		return err
	}
	if err := b.planGroups(ctx); err != nil { // with the final index
		return err
	}
	if err := refuseActive(ctx, b.fwd.SourceAdmin, src, b.moves); err != nil {
		return err
	}
	if err := commitMoves(ctx, b.fwd.SourceAdmin, src, b.moves); err != nil {
		return err
	}
	if len(st.Fenced) > 0 {
		if _, err := b.fwd.SourceAdmin.DeleteACLs(ctx, fenceACLs(st.Fenced)); err != nil {
			return fmt.Errorf("removing the failover's fence on %s: %w; remove the DENY WRITE ACLs for User:* on %s by hand, then run the failback again", src, err, strings.Join(st.Fenced, ", "))
		}
		b.say("Removed the failover's fence on %s.", src)
	}
	cl, err := b.fwd.Plan.TargetProducer.New(b.fwd.ID, slog.New(slog.DiscardHandler), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := dr.Clear(ctx, cl, name); err != nil {
		return err
	}
	printMoves(b.opts.Out, b.moves, b.fwd.Flow.Target, src)
	if err := b.writeReport(); err != nil {
		return err
	}
	if bad := notMoved(b.moves); bad > 0 {
		return fmt.Errorf("%d group partitions were not moved back (above): set their offsets on %s by hand", bad, src)
	}
	fmt.Fprintf(b.opts.Out, "Failed back %s: consumers can start on %s. Restart strait run so that %s copies again.\n", name, src, name)
	return nil
}

// findOrphans reads, for each partition the failover recorded, the
// source's records from the last copied offset to the source's end.
func (b *failback) findOrphans(ctx context.Context) error {
	b.orphans = nil
	byTopic := map[string][]dr.Copied{}
	for _, c := range b.state.Copied {
		if b.fwd.Policy.IsHeartbeatsTopic(c.Topic) {
			continue // written by Strait itself
		}
		byTopic[c.Topic] = append(byTopic[c.Topic], c)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for t := range byTopic {
			if !yield(t) {
				return
			}
		}
	})
	if len(names) == 0 {
		return nil
	}
	ends, err := b.fwd.SourceAdmin.ListCommittedOffsets(ctx, names...)
	if err != nil {
		return fmt.Errorf("listing the end offsets of %s: %w", b.fwd.Flow.Source, err)
	}
	for _, t := range names {
		for _, c := range byTopic[t] {
			end, ok := ends.Lookup(t, c.Partition)
			if !ok || end.Err != nil || end.Offset <= c.SourceOffset {
				continue
			}
			o := Orphans{Topic: t, Partition: c.Partition, From: -1}
			copied := b.reverseCopies(t, c.Partition)
			err := tail.ReadRange(ctx, b.fwd.SourceReader, t, c.Partition, c.SourceOffset, end.Offset, func(r *kgo.Record) {
				if copied(r.Offset) {
					return
				}
				if o.From < 0 {
					o.From = r.Offset
				}
				o.To = r.Offset + 1
				ts := r.Timestamp.UTC()
				if o.First == nil {
					o.First = &ts
				}
				o.Last = &ts
				o.Records++
			})
			if err != nil {
				return fmt.Errorf("reading the orphans of %s[%d] on %s: %w", t, c.Partition, b.fwd.Flow.Source, err)
			}
			if o.Records > 0 {
				b.orphans = append(b.orphans, o)
			}
		}
	}
	return nil
}

// reverseCopies reports whether an offset of topic[partition] on the
// source holds a record the reverse flow copied there (from its index):
// what was written on the target since the failover, not an orphan.
func (b *failback) reverseCopies(topic string, partition int32) func(int64) bool {
	var segs []offsets.Segment
	for tp, p := range b.rev.Index.Parts {
		if tp.Partition == partition && b.rev.Policy.FormatRemoteTopic(b.rev.Flow.Source, tp.Topic) == topic {
			segs = append(segs, p.Segments()...)
		}
	}
	return func(o int64) bool {
		for _, s := range segs {
			if o >= s.Tgt && o < s.TgtEnd() {
				return true
			}
		}
		return false
	}
}

// copyOrphans copies every orphan to its side topic on the source, in
// the same partition, with key, value, headers and timestamp.
func (b *failback) copyOrphans(ctx context.Context) error {
	if len(b.orphans) == 0 {
		return nil
	}
	// The admin client's settings: a producer for the source exists only
	// when offset syncs live there.
	cl, err := b.fwd.Plan.SourceAdmin.New(b.fwd.ID, slog.New(slog.DiscardHandler), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	parts := map[string]int32{}
	for _, o := range b.orphans {
		parts[o.Topic] = max(parts[o.Topic], o.Partition+1)
	}
	for t, n := range parts {
		if err := createTopic(ctx, b.fwd.SourceAdmin, OrphansTopic(t), n); err != nil {
			return fmt.Errorf("creating %s on %s: %w", OrphansTopic(t), b.fwd.Flow.Source, err)
		}
	}
	for _, o := range b.orphans {
		var recs []*kgo.Record
		copied := b.reverseCopies(o.Topic, o.Partition)
		err := tail.ReadRange(ctx, b.fwd.SourceReader, o.Topic, o.Partition, o.From, o.To, func(r *kgo.Record) {
			if copied(r.Offset) {
				return
			}
			recs = append(recs, &kgo.Record{Topic: OrphansTopic(o.Topic), Partition: o.Partition, Key: r.Key, Value: r.Value, Headers: r.Headers, Timestamp: r.Timestamp})
		})
		if err == nil {
			err = cl.ProduceSync(ctx, recs...).FirstErr()
		}
		if err != nil {
			return fmt.Errorf("copying the orphans of %s[%d] to %s: %w", o.Topic, o.Partition, OrphansTopic(o.Topic), err)
		}
	}
	b.say("Copied the orphans to %s on %s.", strings.Join(sortedOrphanTopics(parts), ", "), b.fwd.Flow.Source)
	return nil
}

func sortedOrphanTopics(parts map[string]int32) []string {
	var out []string
	for t := range parts {
		out = append(out, OrphansTopic(t))
	}
	slices.Sort(out)
	return out
}

// createTopic creates topic with n partitions, or finds it there.
func createTopic(ctx context.Context, adm *kadm.Client, topic string, n int32) error {
	resp, err := adm.CreateTopic(ctx, n, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if errors.Is(err, kerr.TopicAlreadyExists) {
		return nil
	}
	return err
}

// planGroups translates each group's committed offsets on the failover's
// target back to the source: through the reverse flow's index for what
// it copied, and otherwise, for a remote topic of the flow (the copies
// consumers read on the target), through the flow's own index inverted.
func (b *failback) planGroups(ctx context.Context) error {
	tgt, src := b.rev.SourceAdmin, b.fwd.SourceAdmin
	listed, err := tgt.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("listing the groups of %s: %w", b.rev.Flow.Source, err)
	}
	if b.rev.Index, err = index.Load(ctx, b.rev.TargetReader, index.TopicName(b.rev.Flow.Source)); err != nil {
		return fmt.Errorf("reading the offset index of %s on %s: %w", b.rev.Flow.Name(), b.rev.Flow.Target, err)
	}
	var groups []string
	for _, g := range listed.Groups() {
		if b.fwd.SelectedGroup(b.opts.Groups, g) {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	b.moves = nil
	for _, g := range groups {
		ts, err := checkpoint.TranslateGroup(ctx, tgt, b.rev.Translator(), b.rev.Index, g)
		if err != nil {
			return err
		}
		before, err := src.FetchOffsets(ctx, g)
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return fmt.Errorf("reading the offsets of group %q on %s: %w", g, b.fwd.Flow.Source, err)
		}
		for _, t := range ts {
			m := groupMove{Group: g, Topic: t.Topic, Remote: t.RemoteTopic, Partition: t.Partition, Committed: t.Upstream, Before: -1, After: -1, Status: t.Status}
			if up, s, ok := b.inverse(t.Topic, t.Partition, t.Upstream); ok {
				m.Remote, m.After, m.Status = up, s, "exact (inside what the flow copied, inverted)"
			} else if t.Result.Usable() {
				m.After = t.Downstream
			}
			if o, ok := before.Lookup(m.Remote, m.Partition); ok {
				m.Before = o.At
			}
			b.moves = append(b.moves, m)
		}
	}
	return nil
}

// inverse maps offset t of a topic on the failover's target back to the
// source when t lies inside what the flow copied there (the group had not
// read all of the copies): the source offset of the first copy it has not
// read, in the copied topic. Past the copies, the group reads what was
// written on the target since the failover, which the reverse flow's own
// index translates (not lowered through the flow's index as in
// active-active checkpoints: the flow is stopped, so the records after its
// coverage on the source are the reverse flow's copies and the orphans,
// none of which the group read on the target).
func (b *failback) inverse(remote string, partition int32, t int64) (string, int64, bool) {
	for tp, p := range b.fwd.Index.Parts {
		if tp.Partition != partition || p.Len() == 0 || b.fwd.Policy.FormatRemoteTopic(b.fwd.Flow.Source, tp.Topic) != remote {
			continue
		}
		segs := p.Segments()
		if t >= segs[len(segs)-1].TgtEnd() {
			if res := b.rev.Index.Parts[index.TP{Topic: remote, Partition: partition}]; res != nil && res.Len() > 0 {
				return "", -1, false // the reverse flow's index knows
			}
		}
		return tp.Topic, checkpoint.FirstUnread(p, t), true
	}
	return "", -1, false
}

func (b *failback) printPlan(lag int64, oldest time.Time) {
	w := b.opts.Out
	src, tgt := b.fwd.Flow.Source, b.fwd.Flow.Target
	fmt.Fprintf(w, "Failback of %s (failed over at %s)\n", b.fwd.Flow.Name(), b.state.At.Format(time.RFC3339))
	if len(b.orphans) == 0 {
		fmt.Fprintf(w, "Orphans: none; every record on %s reached %s before the failover.\n", src, tgt)
	} else {
		fmt.Fprintf(w, "Orphans: records on %s written after the last one copied to %s; they never reached %s and stay on %s (never deleted):\n", src, tgt, tgt, src)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOPIC\tPARTITION\tOFFSETS\tRECORDS\tFIRST WRITTEN\tLAST WRITTEN")
		for _, o := range b.orphans {
			fmt.Fprintf(tw, "%s\t%d\t[%d, %d)\t%d\t%s\t%s\n", o.Topic, o.Partition, o.From, o.To, o.Records, timeText(o.First), timeText(o.Last))
		}
		tw.Flush()
	}
	if lag == 0 {
		fmt.Fprintf(w, "Reverse flow %s: every record written on %s is copied to %s.\n", b.rev.Flow.Name(), tgt, src)
	} else {
		fmt.Fprintf(w, "Reverse flow %s: %d records on %s not copied to %s yet (the oldest written %s); the gate waits for them.\n", b.rev.Flow.Name(), lag, tgt, src, oldest.UTC().Format(time.RFC3339Nano))
	}
	fmt.Fprintln(w, "Steps:")
	step := 1
	if b.opts.CopyOrphans && len(b.orphans) > 0 {
		fmt.Fprintf(w, "  %d. copy the orphans to side topics on %s (%s)\n", step, src, OrphansTopic("TOPIC"))
		step++
	}
	fmt.Fprintf(w, "  %d. wait until %s copied what was written on %s (at most %s); stop the producers on %s first\n", step, b.rev.Flow.Name(), tgt, b.opts.GateTimeout, tgt)
	fmt.Fprintf(w, "  %d. commit the groups' translated offsets on %s:\n", step+1, src)
	printMoves(w, b.moves, tgt, src)
	if len(b.state.Fenced) > 0 {
		fmt.Fprintf(w, "  %d. remove the failover's fence on %s\n", step+2, src)
	}
	fmt.Fprintf(w, "  then clear the failover of %s, so that it copies again\n", b.fwd.Flow.Name())
}

func timeText(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339Nano)
}

func (b *failback) writeReport() error {
	now := time.Now().UTC()
	path := b.opts.Report
	if path == "" {
		path = fmt.Sprintf("strait-failback-%s-%s-%s.json", b.fwd.Flow.Source, b.fwd.Flow.Target, now.Format("20060102T150405Z"))
	}
	doc := failbackReport{Flow: b.fwd.Flow.Name(), Reverse: b.rev.Flow.Name(), At: now, Orphans: b.orphans, Copied: b.opts.CopyOrphans, Groups: b.moves}
	if doc.Orphans == nil {
		doc.Orphans = []Orphans{}
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	fmt.Fprintf(b.opts.Out, "Report: %s\n", path)
	return nil
}
