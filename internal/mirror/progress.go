package mirror

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/index"
	"strait/internal/offsets"
	"strait/internal/tail"
	"strait/internal/wire"
)

// Progress is stored as consumer-group offsets of Config.Group on the
// target, keyed by the remote topic-partition, so that standard tools show
// replication lag. The commit metadata records the source topic ID, so a
// source topic that was deleted and recreated is detected instead of being
// resumed at an offset that belongs to its previous incarnation.
const metaPrefix = "strait/1 source-topic-id="

func progressMetadata(id [16]byte) string {
	if id == ([16]byte{}) {
		return ""
	}
	return metaPrefix + hex.EncodeToString(id[:])
}

// storedTopicID returns the source topic ID recorded with stored progress.
func storedTopicID(meta string) ([16]byte, bool) {
	var id [16]byte
	s, ok := strings.CutPrefix(meta, metaPrefix)
	if !ok {
		return id, false
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, false
	}
	copy(id[:], b)
	return id, true
}

type storedOffset struct {
	next  int64
	id    [16]byte
	hasID bool
}

// loadProgress reads the progress group's committed offsets on the target,
// retrying retriable errors (a new cluster's group coordinator needs a few
// seconds to come up) for up to a minute.
func (m *Mirror) loadProgress(ctx context.Context) (map[string]map[int32]storedOffset, error) {
	deadline := time.Now().Add(time.Minute)
	backoff := 100 * time.Millisecond
	for {
		lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		resps, err := m.dstAdm.FetchOffsets(lctx, m.cfg.Group)
		cancel()
		if err == nil {
			err = resps.Error()
		}
		if errors.Is(err, kerr.GroupIDNotFound) {
			return map[string]map[int32]storedOffset{}, nil // nothing stored yet
		}
		if err == nil {
			out := make(map[string]map[int32]storedOffset)
			resps.Each(func(o kadm.OffsetResponse) {
				if o.At < 0 {
					return
				}
				if out[o.Topic] == nil {
					out[o.Topic] = make(map[int32]storedOffset)
				}
				id, ok := storedTopicID(o.Metadata)
				out[o.Topic][o.Partition] = storedOffset{next: o.At, id: id, hasID: ok}
			})
			return out, nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) || !kerr.IsRetriable(err) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("flow %s: reading stored progress (group %q) on the target: %w", m.cfg.Flow, m.cfg.Group, err)
		}
		m.log.Debug("reading stored progress; retrying", "group", m.cfg.Group, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// loadTakeover reads a Java MM2's replication progress from its Connect
// offsets topic on the target (spec mm2-compat.md §2.6), so partitions
// Strait has no progress for resume where MM2 stopped. Records that are not
// MirrorSourceConnector offsets of this flow's source are ignored; garbage
// is skipped with a warning.
func (m *Mirror) loadTakeover(ctx context.Context) (map[string]map[int32]int64, error) {
	out := map[string]map[int32]int64{}
	if m.cfg.TakeoverTopic == "" {
		return out, nil
	}
	skipped := 0
	_, err := tail.ReadToEnd(ctx, m.cl.IndexReader, m.cfg.TakeoverTopic, func(r *kgo.Record) {
		k, err := wire.DecodeSourceOffsetKey(r.Key)
		if err != nil {
			if _, _, jerr := wire.DecodeConnectOffsetKey(r.Key); jerr != nil {
				skipped++ // not even a Connect key
			}
			return // another connector's offsets
		}
		if k.Cluster != m.cfg.Source {
			return
		}
		off, ok, err := wire.DecodeConnectOffsetValue(r.Value)
		switch {
		case err != nil:
			skipped++
		case !ok || off < 0:
			delete(out[k.Topic], k.Partition)
		default:
			if out[k.Topic] == nil {
				out[k.Topic] = map[int32]int64{}
			}
			out[k.Topic][k.Partition] = off
		}
	})
	m.badRecords.Add(int64(skipped))
	if skipped > 0 {
		m.log.Warn("skipped undecodable records in MirrorMaker 2's offsets topic", "topic", m.cfg.TakeoverTopic, "count", skipped)
	}
	if err != nil {
		return nil, fmt.Errorf("reading MirrorMaker 2's progress from %s: %w", m.cfg.TakeoverTopic, err)
	}
	if len(out) > 0 {
		m.log.Info("found MirrorMaker 2's stored progress; partitions without Strait progress resume from it", "topic", m.cfg.TakeoverTopic, "topics", len(out))
	}
	return out, nil
}

// commitLoop commits progress every FlushInterval until ctx is done.
func (m *Mirror) commitLoop(ctx context.Context) {
	t := time.NewTicker(m.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.prune(ctx)
			if err := m.commit(ctx); err != nil && ctx.Err() == nil {
				m.log.Warn("committing progress failed; will retry", "group", m.cfg.Group, "err", err)
			}
		}
	}
}

// commit makes acknowledged progress durable, in an order that keeps every
// stored fact true: first the offset index segments that cover it, then MM2
// offset syncs (best effort, as in MM2), then the progress itself.
func (m *Mirror) commit(ctx context.Context) error {
	type moved struct {
		p    *partition
		next int64
	}
	var (
		todo    []moved
		updates = m.unsent
		syncs   []*kgo.Record
	)
	offs := make(kadm.Offsets)
	m.mu.RLock()
	for _, t := range m.topics {
		meta := progressMetadata(t.ID)
		for _, p := range t.parts {
			p.mu.Lock()
			next, committed := p.acked, p.committed
			for _, c := range p.idx.Drain() {
				updates = append(updates, index.Update{TP: index.TP{Topic: t.Source, Partition: p.num}, TopicID: t.ID, Change: c})
			}
			for _, s := range p.syncs.Flush() {
				if m.cfg.SyncTopic != "" {
					syncs = append(syncs, m.syncRecord(t.Source, p.num, s))
				}
			}
			p.mu.Unlock()
			if next < 0 || next == committed {
				continue
			}
			todo = append(todo, moved{p, next})
			offs.Add(kadm.Offset{Topic: t.Remote, Partition: p.num, At: next, LeaderEpoch: -1, Metadata: meta})
		}
	}
	m.mu.RUnlock()

	if err := index.Write(ctx, m.cl.Meta, m.cfg.IndexTopic, updates); err != nil {
		m.unsent = updates
		return err
	}
	m.unsent = nil
	if len(syncs) > 0 {
		if err := m.cl.SyncWriter.ProduceSync(ctx, syncs...).FirstErr(); err != nil {
			m.log.Warn("writing MM2 offset syncs failed; Strait's own index is unaffected", "topic", m.cfg.SyncTopic, "err", err)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	resps, err := m.dstAdm.CommitOffsets(ctx, m.cfg.Group, offs)
	if err != nil {
		return err
	}
	var errs []error
	for _, mv := range todo {
		r, ok := resps.Lookup(mv.p.topic.Remote, mv.p.num)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s[%d]: no commit response", mv.p.topic.Remote, mv.p.num))
		case r.Err != nil:
			errs = append(errs, fmt.Errorf("%s[%d]: %w", mv.p.topic.Remote, mv.p.num, r.Err))
		default:
			mv.p.mu.Lock()
			mv.p.committed = mv.next
			mv.p.mu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// syncRecord encodes an MM2 offset sync for the source partition.
func (m *Mirror) syncRecord(topic string, partition int32, s offsets.Sync) *kgo.Record {
	os := wire.OffsetSync{Topic: topic, Partition: partition, UpstreamOffset: s.Up, DownstreamOffset: s.Down}
	key, _ := os.AppendKey(nil) // topic names are far below the STRING limit
	return &kgo.Record{Topic: m.cfg.SyncTopic, Partition: 0, Key: key, Value: os.AppendValue(nil)}
}

// prune drops index segments below the source log start, at most every
// few minutes.
func (m *Mirror) prune(ctx context.Context) {
	if time.Since(m.lastPrune) < 5*time.Minute {
		return
	}
	m.lastPrune = time.Now()
	m.mu.RLock()
	var names []string
	for name := range m.topics {
		names = append(names, name)
	}
	m.mu.RUnlock()
	if len(names) == 0 {
		return
	}
	starts, err := m.srcAdm.ListStartOffsets(ctx, names...)
	if err != nil {
		return
	}
	starts.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			return
		}
		if p := m.partition(o.Topic, o.Partition); p != nil {
			p.mu.Lock()
			p.idx.Prune(o.Offset)
			p.mu.Unlock()
		}
	})
}

// applyUpdates starts consuming the partitions of new topics.
func (m *Mirror) applyUpdates(ctx, produceCtx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
		}
		m.pendingMu.Lock()
		add, gone := m.pendingAdd, m.pendingGone
		m.pendingAdd, m.pendingGone = nil, nil
		m.pendingMu.Unlock()
		m.apply(ctx, produceCtx, add, gone)
	}
}

func (m *Mirror) apply(ctx, produceCtx context.Context, add map[string]Topic, gone map[string]bool) {
	m.mu.Lock()
	initial := !m.started
	m.started = true
	var added []*partition
	for _, t := range add {
		ts := m.topics[t.Source]
		if ts == nil {
			ts = &topicState{Topic: t}
			m.topics[t.Source] = ts
		}
		for n := int32(len(ts.parts)); n < t.Partitions; n++ {
			p := &partition{topic: ts, num: n, initial: initial, acked: -1, committed: -1, syncs: offsets.NewSyncEmitter(m.cfg.OffsetLagMax)}
			tp := index.TP{Topic: t.Source, Partition: n}
			if prev := m.index.Parts[tp]; prev != nil && m.index.IDs[tp] == t.ID {
				p.idx = prev
			} else {
				p.idx = offsets.NewPartition()
			}
			p.ctx = context.WithValue(produceCtx, partKey{}, p)
			ts.parts = append(ts.parts, p)
			added = append(added, p)
		}
	}
	removed := make(map[string][]int32)
	for name := range gone {
		if ts := m.topics[name]; ts != nil {
			for _, p := range ts.parts {
				p.removed.Store(true)
				removed[name] = append(removed[name], p.num)
			}
			delete(m.topics, name)
		}
	}
	stored := m.stored
	m.mu.Unlock()

	if len(removed) > 0 {
		m.src.RemoveConsumePartitions(removed)
		m.log.Info("stopped replicating topics deleted on the source", "topics", len(removed))
	}
	if len(added) == 0 {
		return
	}
	m.awaitProducerMetadata(ctx, added)
	starts := m.startOffsets(ctx, added, stored)
	fastTopics := m.fastTopics(ctx, added)
	record := make(map[string]map[int32]kgo.Offset)
	var fast []*fastPart
	for _, p := range added {
		pos, ok := starts[p]
		if !ok {
			continue // failed to start; the error is in its status
		}
		if fastTopics[p.topic.Source] && pos.at >= 0 {
			p.fast.Store(true)
			fast = append(fast, &fastPart{p: p, next: pos.at, fromEarliest: pos.earliest, seq: 0})
			continue
		}
		if record[p.topic.Source] == nil {
			record[p.topic.Source] = make(map[int32]kgo.Offset)
		}
		record[p.topic.Source][p.num] = pos.kgo()
	}
	if len(record) > 0 {
		m.src.AddConsumePartitions(record)
	}
	if len(fast) > 0 {
		m.fwd.add(ctx, fast)
	}
}

// fastTopics decides which topics of new partitions take the fast path:
// the fast path must be on, the target producer must keep the source's
// compression (no compression.type set), and the source topic must neither
// be compacted (compaction leaves offset holes inside batches, which
// brokers reject) nor stamp LogAppendTime (a forwarded batch would carry the
// producer's timestamps instead of the broker's).
func (m *Mirror) fastTopics(ctx context.Context, parts []*partition) map[string]bool {
	out := map[string]bool{}
	if m.fwd == nil {
		return out
	}
	var names []string
	for _, p := range parts {
		if _, ok := out[p.topic.Source]; !ok {
			out[p.topic.Source] = false
			names = append(names, p.topic.Source)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cfgs, err := m.srcAdm.DescribeTopicConfigs(lctx, names...)
	if err != nil {
		m.log.Warn("describing source topics failed; their partitions take the record path", "err", err)
		return out
	}
	for _, rc := range cfgs {
		if rc.Err != nil {
			continue
		}
		fast := true
		for _, c := range rc.Configs {
			v := c.MaybeValue()
			switch c.Key {
			case "cleanup.policy":
				fast = fast && !strings.Contains(v, "compact")
			case "message.timestamp.type":
				fast = fast && v != "LogAppendTime"
			}
		}
		out[rc.Name] = fast
	}
	return out
}

// toRecordPath moves a partition from the fast path to the record path at
// a source offset: everything before it is acknowledged.
func (m *Mirror) toRecordPath(p *partition, offset int64, reason string) {
	p.fast.Store(false)
	m.log.Info("partition continues on the record path", "topic", p.topic.Source, "partition", p.num, "offset", offset, "reason", reason)
	m.src.AddConsumePartitions(map[string]map[int32]kgo.Offset{p.topic.Source: {p.num: kgo.NewOffset().At(offset)}})
}

// awaitProducerMetadata waits until the producer knows the remote
// partitions of grown topics: franz-go fails a record for a partition its
// metadata does not have yet instead of waiting for it.
func (m *Mirror) awaitProducerMetadata(ctx context.Context, parts []*partition) {
	unknown := func() []*partition {
		var out []*partition
		for _, p := range parts {
			if topicKnown, _, _ := m.dst.PartitionLeader(p.topic.Remote, 0); topicKnown < 0 {
				continue // a new topic: the producer waits for its metadata itself
			}
			if leader, _, _ := m.dst.PartitionLeader(p.topic.Remote, p.num); leader < 0 {
				out = append(out, p)
			}
		}
		return out
	}
	deadline := time.Now().Add(30 * time.Second)
	for missing := unknown(); len(missing) > 0; missing = unknown() {
		if time.Now().After(deadline) {
			m.log.Warn("the producer does not see new partitions of the target yet; they may fail and stop", "partitions", len(missing))
			return
		}
		m.dst.ForceMetadataRefresh()
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// startOffsets decides where each new partition starts: at its stored
// progress (checked against the source log), else by auto.offset.reset for
// partitions present at start, else at the log start.
// startPos is where a partition starts: an exact offset, or the log start
// (earliest) with the start offset as listed when known (-1 otherwise).
type startPos struct {
	at       int64
	earliest bool
}

// kgo converts a start position for the record path's consumer.
func (s startPos) kgo() kgo.Offset {
	if s.earliest {
		return kgo.NewOffset().AtStart()
	}
	return kgo.NewOffset().At(s.at)
}

func (m *Mirror) startOffsets(ctx context.Context, parts []*partition, stored map[string]map[int32]storedOffset) map[*partition]startPos {
	var names []string
	seen := map[string]bool{}
	for _, p := range parts {
		if !seen[p.topic.Source] {
			seen[p.topic.Source] = true
			names = append(names, p.topic.Source)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	starts, serr := m.srcAdm.ListStartOffsets(lctx, names...)
	list := m.srcAdm.ListEndOffsets
	if m.cfg.ReadCommitted {
		list = m.srcAdm.ListCommittedOffsets // the last stable offset
	}
	ends, eerr := list(lctx, names...)

	out := make(map[*partition]startPos, len(parts))
	for _, p := range parts {
		at, err := m.startOffset(p, stored, starts, serr, ends, eerr)
		if err != nil {
			if p.fail(err) {
				m.log.Error("partition not started", "topic", p.topic.Source, "partition", p.num, "err", err)
			}
			continue
		}
		out[p] = at
	}
	return out
}

func (m *Mirror) startOffset(p *partition, stored map[string]map[int32]storedOffset, starts kadm.ListedOffsets, serr error, ends kadm.ListedOffsets, eerr error) (startPos, error) {
	name := fmt.Sprintf("%s[%d]", p.topic.Source, p.num)
	// Where to resume: Strait's own progress, else a Java MM2's.
	var (
		next      int64
		by        string
		committed bool
	)
	// atStart starts at the log start; the listed start offset tells the
	// index where replication began, so offsets between it and the first
	// record (compacted away) still translate.
	atStart := func() (startPos, error) {
		pos := startPos{at: -1, earliest: true}
		if st, ok := starts.Lookup(p.topic.Source, p.num); ok && serr == nil && st.Err == nil {
			pos.at = st.Offset
			p.mu.Lock()
			p.idx.SetStart(st.Offset)
			p.mu.Unlock()
		}
		return pos, nil
	}
	s, ok := stored[p.topic.Remote][p.num]
	switch {
	case ok:
		if s.hasID && p.topic.ID != ([16]byte{}) && s.id != p.topic.ID {
			return startPos{}, fmt.Errorf("source topic %q was deleted and recreated (topic ID changed) since progress %d was stored for %s on the target; Strait stopped the partition instead of mixing the two incarnations: delete the target topic or reset the progress group %q for it", p.topic.Source, s.next, p.topic.Remote, m.cfg.Group)
		}
		next, by, committed = s.next, "stored progress", true
	default:
		last, mm2 := m.mm2[p.topic.Source][p.num]
		switch {
		case mm2:
			next, by, ok = last+1, "MirrorMaker 2's stored progress in "+m.cfg.TakeoverTopic, true
		case !p.initial:
			return atStart()
		case m.cfg.AutoOffsetReset == "none":
			return startPos{}, fmt.Errorf("%s has no stored progress and auto.offset.reset=none; set auto.offset.reset=earliest or latest on the source consumer", name)
		case m.cfg.AutoOffsetReset != "latest":
			return atStart()
		}
	}
	if serr != nil || eerr != nil {
		return startPos{}, fmt.Errorf("listing offsets of %s on the source: %w", name, errors.Join(serr, eerr))
	}
	start, sok := starts.Lookup(p.topic.Source, p.num)
	end, eok := ends.Lookup(p.topic.Source, p.num)
	if !sok || !eok || start.Err != nil || end.Err != nil {
		var err error
		if sok {
			err = start.Err
		}
		if eok && err == nil {
			err = end.Err
		}
		return startPos{}, fmt.Errorf("listing offsets of %s on the source: %v", name, err)
	}
	if !ok {
		// auto.offset.reset=latest: start at the end as it is now, and
		// store that position, so a restart before the first record does
		// not skip what arrived in between.
		p.mu.Lock()
		p.acked = end.Offset
		p.idx.SetStart(end.Offset)
		p.idx.Cover(end.Offset)
		p.mu.Unlock()
		return startPos{at: end.Offset}, nil
	}
	switch {
	case next < start.Offset:
		return startPos{}, fmt.Errorf("source %s: records %d..%d were deleted before they were replicated (log start is %d, %s %d); the partition is stopped to avoid a silent gap",
			name, next, start.Offset-1, start.Offset, by, next)
	case next > end.Offset:
		return startPos{}, fmt.Errorf("%s %d for %s is beyond the source's end offset %d: the source topic was truncated or recreated; reset the progress group %q for %s to copy it again",
			by, next, name, end.Offset, m.cfg.Group, p.topic.Remote)
	}
	p.mu.Lock()
	p.acked = next
	p.idx.SetStart(next) // kept when the loaded index knows an earlier start
	if committed {
		p.committed = next
	}
	p.mu.Unlock()
	if !committed {
		m.log.Info("taking over from MirrorMaker 2", "topic", p.topic.Source, "partition", p.num, "resume_at", next)
	}
	return startPos{at: next}, nil
}
