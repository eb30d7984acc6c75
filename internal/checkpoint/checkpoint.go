// Package checkpoint translates the committed offsets of source consumer
// groups exactly (through the flow's offset index) and writes them as MM2
// checkpoint records to `<source>.checkpoints.internal` on the target, so
// RemoteClusterUtils.translateOffsets keeps working; with
// sync.group.offsets.enabled it also commits the translated offsets to the
// target groups that have no active members, never moving one back.
package checkpoint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/policy"
	"strait/internal/tail"
	"strait/internal/window"
	"strait/internal/wire"
)

// Config is one flow's checkpoint settings.
type Config struct {
	Flow
	Groups *policy.Filter
	// Internal reports groups Strait itself uses (its progress groups),
	// which are never checkpointed.
	Internal func(group string) bool
	// Topic is the checkpoints topic on the target.
	Topic                 string
	EmitInterval          time.Duration
	RefreshGroupsInterval time.Duration
	SyncGroupOffsets      bool
	SyncInterval          time.Duration
}

// Clients are the Kafka clients a Checkpointer uses.
type Clients struct {
	SourceAdmin *kadm.Client
	TargetAdmin *kadm.Client
	Producer    *kgo.Client // writes checkpoint records on the target
	Loader      *kgo.Client // reads the checkpoints topic once at start (tail.ClientOpts)
}

// Index is what the checkpointer needs from the offset index follower.
type Index interface {
	Translator
	Ready() bool
}

type key struct {
	group, topic string
	partition    int32
}

// Checkpointer emits checkpoints for one flow.
type Checkpointer struct {
	cfg Config
	cl  Clients
	idx Index
	log *slog.Logger

	store   map[key]wire.Checkpoint // last checkpoint per (group, target topic, partition)
	groups  []string
	refresh schedule // listing the source's groups
	sync    schedule // committing group offsets on the target

	mu      sync.Mutex
	latency window.Window     // checkpoint-latency-ms: a checkpoint's creation to its produce ack (under mu)
	current time.Time         // the last emission that wrote or confirmed every checkpoint (under mu)
	syncs   map[string]string // per group, what the last offset sync did, in words (under mu)
	emitted atomic.Int64
	skipped atomic.Int64 // undecodable records in the checkpoints topic
	synced  atomic.Int64 // group offsets committed on the target
}

// New returns a Checkpointer; it starts nothing.
func New(cfg Config, cl Clients, idx Index, log *slog.Logger) *Checkpointer {
	return &Checkpointer{
		cfg: cfg, cl: cl, idx: idx, log: log.With("component", "checkpoint", "flow", cfg.Source+"->"+cfg.Target), store: map[key]wire.Checkpoint{},
		refresh: schedule{every: cfg.RefreshGroupsInterval, tick: cfg.EmitInterval},
		sync:    schedule{every: cfg.SyncInterval, tick: cfg.EmitInterval},
	}
}

// Run loads the stored checkpoints, waits for the index, then emits every
// EmitInterval (and syncs group offsets every SyncInterval) until ctx is done.
// It follows the reverse flow's index meanwhile, when there is one.
func (c *Checkpointer) Run(ctx context.Context) error {
	defer c.followReverse(ctx)()
	for {
		err := c.load(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		c.log.Warn("loading stored checkpoints failed; retrying", "topic", c.cfg.Topic, "err", err)
		if !sleep(ctx, 2*time.Second) {
			return nil
		}
	}
	for !c.indexesReady() {
		if !sleep(ctx, 100*time.Millisecond) {
			return nil
		}
	}
	t := time.NewTicker(c.cfg.EmitInterval)
	defer t.Stop()
	for {
		if err := c.Tick(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("checkpointing failed; will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// followReverse follows the reverse flow's index, when there is one,
// until the returned stop is called; stop waits until it returned.
func (c *Checkpointer) followReverse(ctx context.Context) (stop func()) {
	if c.cfg.Reverse == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.cfg.Reverse.Index.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// indexesReady reports whether the flow's index, and the reverse flow's
// when there is one, were read: checkpoints are exact from the start.
func (c *Checkpointer) indexesReady() bool {
	return c.idx.Ready() && (c.cfg.Reverse == nil || c.cfg.Reverse.Index.Ready())
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// load reads the checkpoints topic (latest record per key), skipping
// records that are not checkpoints with a warning.
func (c *Checkpointer) load(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	store := map[key]wire.Checkpoint{}
	_, err := tail.ReadToEnd(ctx, c.cl.Loader, c.cfg.Topic, func(r *kgo.Record) {
		cp, err := wire.DecodeCheckpoint(r.Key, r.Value)
		if err != nil {
			c.skipped.Add(1)
			c.log.Warn("skipped a record that is not a checkpoint", "topic", c.cfg.Topic, "offset", r.Offset, "err", err, "skipped_total", c.skipped.Load())
			return
		}
		store[key{cp.Group, cp.Topic, cp.Partition}] = cp
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.store = store // Status reads it under mu; the emitting goroutine alone writes it
	c.mu.Unlock()
	return nil
}

// Tick runs one emission cycle (refreshing the group list and syncing
// group offsets when their intervals passed).
func (c *Checkpointer) Tick(ctx context.Context) error { return c.tick(ctx, time.Now()) }

func (c *Checkpointer) tick(ctx context.Context, now time.Time) error {
	if c.groups == nil || c.refresh.due(now) {
		groups, err := c.listGroups(ctx)
		if err != nil {
			return err
		}
		c.refresh.ran(now)
		c.mu.Lock()
		c.groups = groups
		c.mu.Unlock()
	}
	err := c.emit(ctx, now)
	if c.cfg.SyncGroupOffsets && c.sync.due(now) {
		c.sync.ran(now)
		err = errors.Join(err, c.syncGroups(ctx))
	}
	return err
}

func (c *Checkpointer) listGroups(ctx context.Context) ([]string, error) {
	listed, err := c.cl.SourceAdmin.ListGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing groups on %s: %w", c.cfg.Source, err)
	}
	groups := []string{}
	for _, g := range listed.Groups() {
		if c.cfg.Groups.Accepts(g) && (c.cfg.Internal == nil || !c.cfg.Internal(g)) {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	return groups, nil
}

// emit translates every group and writes the checkpoints that are newer
// than the stored ones (MM2's rule: a new group, an upstream rewind, or a
// downstream advance), so checkpoints never move back. Exact and rounded
// translations are written (see offsets.Rounded), no others.
func (c *Checkpointer) emit(ctx context.Context, now time.Time) error {
	var (
		recs []*kgo.Record
		cps  []wire.Checkpoint
		errs []error
	)
	ids := newTopicIDs(c.cl.SourceAdmin)
	for _, g := range c.groups {
		ts, err := translateGroup(ctx, c.cl.SourceAdmin, c.cfg.Flow, c.idx, g, ids)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, t := range ts {
			// A rounded-down offset is checkpointed too: it makes a
			// consumer read some records again and never skips one.
			if !t.Result.Usable() {
				continue
			}
			cp := wire.Checkpoint{Group: g, Topic: t.RemoteTopic, Partition: t.Partition, UpstreamOffset: t.Upstream, DownstreamOffset: t.Downstream, Metadata: t.Metadata}
			if prev, ok := c.store[key{g, cp.Topic, cp.Partition}]; ok && cp.UpstreamOffset >= prev.UpstreamOffset && cp.DownstreamOffset <= prev.DownstreamOffset {
				continue
			}
			k, err := cp.AppendKey(nil)
			if err != nil {
				errs = append(errs, fmt.Errorf("group %q: %w", g, err))
				continue
			}
			v, err := cp.AppendValue(nil)
			if err != nil {
				errs = append(errs, fmt.Errorf("group %q: %w", g, err))
				continue
			}
			recs = append(recs, &kgo.Record{Topic: c.cfg.Topic, Partition: 0, Key: k, Value: v, Timestamp: now})
			cps = append(cps, cp)
		}
	}
	if len(recs) > 0 {
		if err := c.cl.Producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return errors.Join(append(errs, fmt.Errorf("writing %d checkpoints to %s: %w", len(recs), c.cfg.Topic, err))...)
		}
		acked := time.Now()
		c.mu.Lock()
		c.latency.Add(float64(acked.Sub(now).Milliseconds()), int64(len(recs)), acked)
		for _, cp := range cps {
			c.store[key{cp.Group, cp.Topic, cp.Partition}] = cp
		}
		c.mu.Unlock()
		c.emitted.Add(int64(len(recs)))
	}
	if len(errs) == 0 {
		c.mu.Lock()
		c.current = now
		c.mu.Unlock()
	}
	return errors.Join(errs...)
}

// syncGroups commits the latest checkpoints to target groups that have no
// active members: all of them to a group that does not exist, and to an
// empty group only partitions it has no offset for or a lower one.
func (c *Checkpointer) syncGroups(ctx context.Context) error {
	byGroup := map[string]kadm.Offsets{}
	for k, cp := range c.store {
		if !slices.Contains(c.groups, k.group) {
			continue
		}
		offs := byGroup[k.group]
		if offs == nil {
			offs = kadm.Offsets{}
			byGroup[k.group] = offs
		}
		offs.Add(kadm.Offset{Topic: cp.Topic, Partition: cp.Partition, At: cp.DownstreamOffset, LeaderEpoch: -1, Metadata: cp.Metadata})
	}
	if len(byGroup) == 0 {
		return nil
	}
	names := make([]string, 0, len(byGroup))
	for g := range byGroup {
		names = append(names, g)
	}
	described, err := c.cl.TargetAdmin.DescribeGroups(ctx, names...)
	if err != nil {
		return fmt.Errorf("describing groups on %s: %w", c.cfg.Target, err)
	}
	var errs []error
	for _, g := range names {
		want := byGroup[g]
		d, ok := described[g]
		state := "Dead"
		if ok && d.Err == nil {
			state = d.State
		} else if ok && d.Err != nil && !errors.Is(d.Err, kerr.GroupIDNotFound) {
			errs = append(errs, fmt.Errorf("describing group %q on %s: %w", g, c.cfg.Target, d.Err))
			continue
		}
		switch state {
		case "Dead", "":
		case "Empty":
			current, err := c.cl.TargetAdmin.FetchOffsets(ctx, g)
			if err != nil {
				errs = append(errs, fmt.Errorf("reading offsets of group %q on %s: %w", g, c.cfg.Target, err))
				c.noteSync(g, "not synced: "+err.Error())
				continue
			}
			want.KeepFunc(func(o kadm.Offset) bool {
				have, ok := current.Lookup(o.Topic, o.Partition)
				return !ok || have.Err != nil || have.At < 0 || have.At < o.At
			})
		default:
			c.noteSync(g, fmt.Sprintf("not synced: the group is active on %s (state %s); offsets are written only to a group with no members", c.cfg.Target, state))
			continue // active members: never written
		}
		if len(want) == 0 {
			c.noteSync(g, "in sync: the target group's offsets are at or past every checkpoint")
			continue
		}
		resp, err := c.cl.TargetAdmin.CommitOffsets(ctx, g, want)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("committing translated offsets of group %q on %s: %w", g, c.cfg.Target, err))
			c.noteSync(g, "not synced: "+err.Error())
			continue
		}
		n := 0
		want.Each(func(kadm.Offset) { n++ })
		c.synced.Add(int64(n))
		c.noteSync(g, fmt.Sprintf("synced %d partition offsets", n))
	}
	return errors.Join(errs...)
}

// Translate translates a group's committed source offsets now.
func (c *Checkpointer) Translate(ctx context.Context, group string) ([]Translation, error) {
	return TranslateGroup(ctx, c.cl.SourceAdmin, c.cfg.Flow, c.idx, group)
}

// TranslateOffset translates one source offset through the flow's index.
func (c *Checkpointer) TranslateOffset(ctx context.Context, topic string, partition int32, offset int64) (Translation, error) {
	return TranslateOffset(ctx, c.cl.SourceAdmin, c.cfg.Flow, c.idx, topic, partition, offset)
}

// noteSync records what the last offset sync did for group.
func (c *Checkpointer) noteSync(group, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.syncs == nil {
		c.syncs = map[string]string{}
	}
	c.syncs[group] = what
}

// GroupState is what the checkpointer knows of one consumer group: the
// translation of each committed offset (and why one did not translate),
// whether a checkpoint exists for it, and what the last offset sync did.
type GroupState struct {
	Group string `json:"group"`
	// Reason says why the flow does not checkpoint the group, when it
	// does not: filtered out, Strait's own, or not listed yet.
	Reason string `json:"reason,omitempty"`
	// Sync is what the last offset sync did, in words; empty before one
	// (or without sync.group.offsets.enabled).
	Sync       string                `json:"sync,omitempty"`
	Partitions []GroupPartitionState `json:"partitions"`
	Error      string                `json:"error,omitempty"`
}

// GroupPartitionState is one committed partition of a group.
type GroupPartitionState struct {
	Translation
	Checkpointed bool `json:"checkpointed"` // a checkpoint for it is on the target
}

// Groups returns the state of every group the flow checkpoints, with a
// fresh translation of each (one offset fetch per group on the source);
// with only set, of that group alone, and why it is not checkpointed when
// it is not.
func (c *Checkpointer) Groups(ctx context.Context, only string) []GroupState {
	c.mu.Lock()
	groups := slices.Clone(c.groups)
	stored := map[key]bool{}
	for k := range c.store {
		stored[k] = true
	}
	syncs := maps.Clone(c.syncs)
	c.mu.Unlock()
	if only != "" {
		if reason := c.notCheckpointed(only, groups); reason != "" {
			return []GroupState{{Group: only, Reason: reason}}
		}
		groups = []string{only}
	}
	out := make([]GroupState, 0, len(groups))
	for _, g := range groups {
		gs := GroupState{Group: g, Sync: syncs[g]}
		ts, err := TranslateGroup(ctx, c.cl.SourceAdmin, c.cfg.Flow, c.idx, g)
		if err != nil {
			gs.Error = err.Error()
		}
		for _, t := range ts {
			gs.Partitions = append(gs.Partitions, GroupPartitionState{Translation: t, Checkpointed: stored[key{g, t.RemoteTopic, t.Partition}]})
		}
		out = append(out, gs)
	}
	return out
}

// notCheckpointed says why the flow does not checkpoint group, or "" when
// it does (listed is the groups of the last listing).
func (c *Checkpointer) notCheckpointed(group string, listed []string) string {
	switch {
	case c.cfg.Internal != nil && c.cfg.Internal(group):
		return "not checkpointed: it is Strait's own progress group"
	case !c.cfg.Groups.Accepts(group):
		return "not checkpointed: filtered out by groups and groups.exclude"
	case !slices.Contains(listed, group):
		return fmt.Sprintf("not checkpointed yet: the source had no such group at the last listing (groups are listed every %s)", c.cfg.RefreshGroupsInterval)
	}
	return ""
}

// Status is a snapshot of the checkpointer.
type Status struct {
	Groups  int   `json:"groups"`
	Emitted int64 `json:"checkpoints_emitted"`
	Synced  int64 `json:"group_offsets_synced"`
	Skipped int64 `json:"bad_records_skipped"`
	// Current is when an emission last wrote or confirmed every group's
	// checkpoints (zero before the first): the checkpoints' freshness.
	Current time.Time `json:"current_at"`
	// Latency is MM2's checkpoint-latency-ms: a checkpoint's creation to
	// its produce ack, over the last minute.
	Latency window.Stats `json:"checkpoint_latency"`
	// Checkpointed lists every (group, remote topic, partition) with a
	// checkpoint, sorted.
	Checkpointed []GroupPartition `json:"-"`
}

// GroupPartition is a consumer group's partition of a remote topic.
type GroupPartition struct {
	Group     string
	Topic     string
	Partition int32
}

// Status returns a snapshot.
func (c *Checkpointer) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{Groups: len(c.groups), Emitted: c.emitted.Load(), Synced: c.synced.Load(), Skipped: c.skipped.Load(),
		Current: c.current, Latency: c.latency.Stats(time.Now())}
	for k := range c.store {
		st.Checkpointed = append(st.Checkpointed, GroupPartition{k.group, k.topic, k.partition})
	}
	slices.SortFunc(st.Checkpointed, func(a, b GroupPartition) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return st
}
