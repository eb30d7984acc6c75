package mirror

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/index"
	"strait/internal/mirror/fastpath"
	"strait/internal/mirror/flow"
	"strait/internal/offsets"
)

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
	if !m.sharedBeginning {
		// The mirror's very first topic set is the flow's: auto.offset.reset
		// applies to its partitions, in this attempt and the ones after it.
		m.begin.Listed(slices.Collect(maps.Values(add)))
	}
	m.mu.Lock()
	var added []*partition
	var recreated []*partition
	for _, t := range add {
		ts := m.topics[t.Source]
		if ts == nil {
			ts = &topicState{Topic: t}
			m.topics[t.Source] = ts
		} else if t.ID != ([16]byte{}) && ts.ID != ([16]byte{}) && t.ID != ts.ID {
			// Deleted and recreated between two listings: the new
			// incarnation must not be read at the old one's offsets.
			recreated = append(recreated, ownedParts(ts.parts)...)
			continue
		}
		for n := int32(len(ts.parts)); n < t.Partitions; n++ {
			idx := offsets.NewPartition()
			tp := index.TP{Topic: t.Source, Partition: n}
			if prev := m.index.Parts[tp]; prev != nil && m.index.IDs[tp] == t.ID {
				idx = prev
			}
			idx.SetMaxSegments(m.cfg.IndexMaxSegments)
			p := newPartition(ts, n, m.begin.initial(t.Source, n), idx, m.cfg.OffsetLagMax, produceCtx)
			p.keepsOffsets = m.keepsOffsets(t.Source)
			ts.parts = append(ts.parts, p)
			if m.own(p) {
				added = append(added, p)
			}
		}
	}
	if m.deps.Share.Owns != nil {
		// Partitions of known topics the node's share gained (Adopt).
		for _, ts := range m.topics {
			for _, p := range ts.parts {
				if !p.owned && !p.removed.Load() && m.own(p) {
					added = append(added, p)
				}
			}
		}
	}
	// Partitions whose start waited for a listing of the source.
	for _, p := range m.startLater {
		if p.owned && !p.removed.Load() && m.deps.Share.Holds(p.topic.Source, p.num) {
			added = append(added, p)
		}
	}
	m.startLater = nil
	added = m.keepStopped(added)
	removed := make(map[string][]int32)
	for name := range gone {
		if ts := m.topics[name]; ts != nil {
			m.retire(ts)
			for _, p := range ts.parts {
				p.removed.Store(true)
				removed[name] = append(removed[name], p.num)
			}
			delete(m.topics, name)
		}
	}
	stored := m.stored
	m.mu.Unlock()

	for _, p := range recreated {
		if p.Stop(recreatedError(p, p.Position())) {
			m.log.Error("partition stopped", "topic", p.topic.Source, "partition", p.num, "err", p.Failed())
			m.pause(p)
		}
	}

	if len(removed) > 0 {
		m.src.RemoveConsumePartitions(removed)
		m.log.Info("stopped replicating topics deleted on the source", "topics", len(removed))
	}
	if len(added) == 0 {
		return
	}
	if m.deps.Share.Owns != nil {
		// Progress and index read again once the partitions are this
		// node's: what the attempt read when it began may predate their
		// previous owner's final commit, also for its first topic set (a
		// partition adopted while it read them).
		var err error
		if stored, err = m.refreshShared(ctx, added, stored); err != nil {
			m.disown(added)
			if ctx.Err() == nil {
				m.log.Warn("reading the progress and offset index of partitions this node took over failed; retrying", "partitions", len(added), "err", err)
				time.AfterFunc(fastpath.RetryBackoff*4, m.Adopt)
			}
			return
		}
	}
	m.awaitProducerMetadata(ctx, added)
	m.describeLimits(ctx, added)
	starts, later := m.startOffsets(ctx, added, stored)
	if m.gaps != nil {
		later = append(later, m.alignStarts(ctx, starts, stored)...)
	}
	m.retryStart(ctx, later)
	record := make(map[string]map[int32]kgo.Offset)
	var fast []*fastpath.Part
	for _, p := range added {
		pos, ok := starts[p]
		if !ok {
			continue // failed to start (the error is in its status), or starts later
		}
		// Every partition starts on the fast path when it is on: batches
		// with compaction holes or LogAppendTime are rebuilt there.
		if m.fwd != nil {
			p.fast.Store(true)
			fp := fastpath.NewPart(p, pos.at)
			if p.keepsOffsets {
				fp.KeepOffsets(m.cfg.Preserve.RefuseGaps.Matches(p.topic.Source))
			}
			fast = append(fast, fp)
			continue
		}
		if record[p.topic.Source] == nil {
			record[p.topic.Source] = make(map[int32]kgo.Offset)
		}
		record[p.topic.Source][p.num] = kgo.NewOffset().At(pos.at)
	}
	if len(record) > 0 {
		m.src.AddConsumePartitions(record)
	}
	if len(fast) > 0 {
		m.fwd.Add(ctx, fast)
	}
}

// retryStart starts again, after a pause, partitions whose start needs a
// listing of the source that failed for a passing reason (a leader
// election, a broker down or unreachable): stopped, they stayed stopped on
// this node until it lost them or restarted. They stay this node's, shown
// with no position yet; the pause keeps a broker that refuses every
// listing from being asked in a loop.
func (m *Mirror) retryStart(ctx context.Context, parts []*partition) {
	if len(parts) == 0 || ctx.Err() != nil {
		return
	}
	m.mu.Lock()
	m.startLater = append(m.startLater, parts...)
	m.mu.Unlock()
	time.AfterFunc(startRetryPause, m.Adopt)
}

// startRetryPause is how long a partition whose start could not list the
// source waits before it tries again.
const startRetryPause = time.Second

// keepStopped stops again, at once, the partitions of added that an
// earlier attempt stopped, and returns the others. The caller holds m.mu.
func (m *Mirror) keepStopped(added []*partition) []*partition {
	out := added[:0]
	for _, p := range added {
		if err := m.stopped[index.TP{Topic: p.topic.Source, Partition: p.num}]; err != nil {
			p.Stop(err)
			continue
		}
		out = append(out, p)
	}
	return out
}

// retire remembers the last position of a topic deleted on the source,
// with its topic ID, as progress to resume from: if the topic comes back,
// startOffset then tells a new incarnation from the same one. The caller
// holds m.mu.
func (m *Mirror) retire(ts *topicState) {
	if m.stored == nil {
		m.stored = map[string]map[int32]storedOffset{}
	}
	for _, p := range ts.parts {
		next := p.Position()
		if next < 0 {
			continue // nothing copied: nothing to mix with
		}
		if m.stored[ts.Remote] == nil {
			m.stored[ts.Remote] = map[int32]storedOffset{}
		}
		m.stored[ts.Remote][p.num] = storedOffset{next: next, id: ts.ID, hasID: ts.ID != ([16]byte{})}
	}
}

// recreatedError is the error of a partition whose source topic was
// deleted and recreated after Strait copied it up to next.
func recreatedError(p *partition, next int64) error {
	return flow.RecreatedError(p.topic.Source, p.topic.Remote, p.num, next)
}

// describeLimits reads max.message.bytes of the remote topics of new
// partitions, for the error that names it when a record is too large.
func (m *Mirror) describeLimits(ctx context.Context, parts []*partition) {
	byRemote := map[string]*topicState{}
	var names []string
	for _, p := range parts {
		if _, ok := byRemote[p.topic.Remote]; !ok {
			byRemote[p.topic.Remote] = p.topic
			names = append(names, p.topic.Remote)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cfgs, err := m.dstAdm.DescribeTopicConfigs(lctx, names...)
	if err != nil {
		return // only an error message loses a detail
	}
	for _, rc := range cfgs {
		ts := byRemote[rc.Name]
		if rc.Err != nil || ts == nil {
			continue
		}
		for _, c := range rc.Configs {
			if c.Key == "max.message.bytes" {
				if n, err := strconv.ParseInt(c.MaybeValue(), 10, 64); err == nil {
					ts.maxMessageBytes.Store(n)
				}
			}
		}
	}
}

// leaveFastPath is the fast path's Deps.ToRecordPath: l is one of the
// mirror's partitions.
func (m *Mirror) leaveFastPath(l fastpath.Ledger, offset int64, reason string) {
	m.toRecordPath(l.(*partition), offset, reason)
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

// startPos is where a partition starts: an exact offset, which is the
// listed log start when earliest. The log start is never left to the
// consumer to find: records deleted between the listing and the first fetch
// then give OFFSET_OUT_OF_RANGE, and the partition stops naming them, where
// AtStart let the consumer begin after them without a word.
type startPos struct {
	at       int64
	earliest bool
}

// listingError is a failed listing of the source's offsets: a partition
// that needs it starts later (retryStart), unless the broker's answer says
// that asking again cannot help (errFinal).
type listingError struct{ err error }

func (e *listingError) Error() string { return e.err.Error() }
func (e *listingError) Unwrap() error { return e.err }

// errFinal reports whether err, a listing's error, would come back at
// every try: Kafka's errors that are not retriable (authorization, an
// unsupported version). Connection failures, timeouts and retriable
// errors (OFFSET_NOT_AVAILABLE after an election, NOT_LEADER) pass.
func errFinal(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke) && !ke.Retriable && !errors.Is(err, kerr.UnknownTopicOrPartition)
}

// startOffsets decides where each new partition starts: at its stored
// progress (checked against the source log), else by auto.offset.reset for
// partitions present at start, else at the log start. It returns apart the
// partitions that start later, as the listing they need failed for a
// passing reason, or because ctx ended.
func (m *Mirror) startOffsets(ctx context.Context, parts []*partition, stored map[string]map[int32]storedOffset) (map[*partition]startPos, []*partition) {
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
	var later []*partition
	var laterErr error
	for _, p := range parts {
		at, err := m.startOffset(p, stored, starts, serr, ends, eerr)
		var le *listingError
		if errors.As(err, &le) && (ctx.Err() != nil || !errFinal(le.err)) {
			later, laterErr = append(later, p), err
			continue
		}
		if err != nil {
			if p.Stop(err) {
				m.log.Error("partition not started", "topic", p.topic.Source, "partition", p.num, "err", err)
			}
			continue
		}
		out[p] = at
		m.log.Debug("partition starts", "topic", p.topic.Source, "partition", p.num, "offset", at.at, "log_start", at.earliest)
	}
	if len(later) > 0 && ctx.Err() == nil {
		m.log.Warn("partitions start later: listing their offsets on the source failed", "partitions", len(later), "retry_in", startRetryPause, "err", laterErr)
	}
	return out, later
}

func (m *Mirror) startOffset(p *partition, stored map[string]map[int32]storedOffset, starts kadm.ListedOffsets, serr error, ends kadm.ListedOffsets, eerr error) (startPos, error) {
	name := fmt.Sprintf("%s[%d]", p.topic.Source, p.num)
	// Where to resume: Strait's own progress, else a Java MM2's.
	var (
		next      int64
		by        string
		committed bool
		latest    bool // resumes where auto.offset.reset=latest began in an earlier attempt
	)
	// atStart starts at the log start, as listed; it also tells the index
	// where replication began, so offsets between it and the first record
	// (compacted away) still translate.
	atStart := func() (startPos, error) {
		st, ok := starts.Lookup(p.topic.Source, p.num)
		switch {
		case serr != nil:
			return startPos{}, &listingError{fmt.Errorf("listing where %s begins on the source: %w", name, serr)}
		case !ok:
			return startPos{}, &listingError{fmt.Errorf("listing where %s begins on the source: no answer for it", name)}
		case st.Err != nil:
			return startPos{}, &listingError{fmt.Errorf("listing where %s begins on the source: %w", name, st.Err)}
		}
		p.startAtLogStart(st.Offset)
		return startPos{at: st.Offset, earliest: true}, nil
	}
	s, ok := stored[p.topic.Remote][p.num]
	switch {
	case ok:
		if s.hasID && p.topic.ID != ([16]byte{}) && s.id != p.topic.ID {
			return startPos{}, fmt.Errorf("%w (progress group %q)", recreatedError(p, s.next), m.cfg.Group)
		}
		next, by, committed = s.next, "stored progress", true
	default:
		last, mm2 := m.mm2[p.topic.Source][p.num]
		began, seen := m.begin.latestOf(index.TP{Topic: p.topic.Source, Partition: p.num})
		switch {
		case mm2:
			next, by, ok = last+1, "MirrorMaker 2's stored progress in "+m.cfg.TakeoverTopic, true
		case seen:
			// An attempt of exactly-once mode aborted before it committed
			// this position: the end as it was then, not as it is now.
			next, by, ok, latest = began, "the source end where auto.offset.reset=latest began", true, true
		case !p.initial:
			return atStart()
		case m.cfg.AutoOffsetReset == "none":
			return startPos{}, fmt.Errorf("%s has no stored progress and auto.offset.reset=none; set auto.offset.reset=earliest or latest on the source consumer", name)
		case m.cfg.AutoOffsetReset != "latest":
			return atStart()
		}
	}
	if serr != nil || eerr != nil {
		return startPos{}, &listingError{fmt.Errorf("listing offsets of %s on the source: %w", name, errors.Join(serr, eerr))}
	}
	start, sok := starts.Lookup(p.topic.Source, p.num)
	end, eok := ends.Lookup(p.topic.Source, p.num)
	if !sok || !eok || start.Err != nil || end.Err != nil {
		err := errors.New("no answer for it")
		switch {
		case sok && start.Err != nil:
			err = start.Err
		case eok && end.Err != nil:
			err = end.Err
		}
		return startPos{}, &listingError{fmt.Errorf("listing offsets of %s on the source: %w", name, err)}
	}
	if !ok {
		// auto.offset.reset=latest: start at the end as it is now, and
		// store that position, so a restart before the first record does
		// not skip what arrived in between; a later attempt or mirror of
		// this run starts there too (Beginning).
		m.begin.beganLatest(index.TP{Topic: p.topic.Source, Partition: p.num}, end.Offset)
		p.startAtEnd(end.Offset)
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
	if latest {
		p.startAtEnd(next)
		return startPos{at: next}, nil
	}
	p.startAt(next, committed)
	if !committed {
		m.log.Info("taking over from MirrorMaker 2", "topic", p.topic.Source, "partition", p.num, "resume_at", next)
	}
	return startPos{at: next}, nil
}

// own marks p as this node's when its share holds it, ready to start: its
// latency observer, and (for a mirror that does not share its flow) the
// previous incarnation's index segments to delete with its first write, so
// compaction does not keep them forever. The caller holds m.mu.
func (m *Mirror) own(p *partition) bool {
	ts := p.topic
	if !m.deps.Share.Holds(ts.Source, p.num) {
		return false // another node's: kept only so parts stays indexed by number
	}
	p.owned = true
	if m.deps.Latency != nil {
		p.timing.observe = m.deps.Latency(ts.Source, p.num)
	}
	if m.deps.Share.Owns == nil {
		// A shared mirror reads the index again before the partition
		// starts (refreshShared), and purges from that read only: the
		// previous owner may have written segments since.
		for _, u := range m.index.Purge(index.TP{Topic: ts.Source, Partition: p.num}, ts.ID) {
			p.purge = append(p.purge, u.Change)
		}
	}
	return true
}

// refreshShared reads again, for partitions a shared mirror starts after
// it began (taken over, or of topics new to it), the progress and the
// offset index their previous owner left: what the mirror read when it
// began may predate that owner's final commit, and starting from it would
// copy again what the owner copied after. It returns the progress to
// start from: the fresh one, with the entries only stored knows (topics
// this mirror saw deleted, retire).
func (m *Mirror) refreshShared(ctx context.Context, added []*partition, stored map[string]map[int32]storedOffset) (map[string]map[int32]storedOffset, error) {
	fresh, err := m.loadProgress(ctx)
	if err != nil {
		return nil, err
	}
	idx, err := index.Load(ctx, m.cl.IndexReader, m.cfg.IndexTopic)
	if err != nil {
		return nil, fmt.Errorf("flow %s: loading the offset index: %w", m.cfg.Flow, err)
	}
	for topic, parts := range stored {
		for n, o := range parts {
			if _, ok := fresh[topic][n]; !ok {
				if fresh[topic] == nil {
					fresh[topic] = map[int32]storedOffset{}
				}
				fresh[topic][n] = o
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.index = idx
	m.stored = fresh
	for _, p := range added {
		tp := index.TP{Topic: p.topic.Source, Partition: p.num}
		pidx := offsets.NewPartition()
		if prev := idx.Parts[tp]; prev != nil && idx.IDs[tp] == p.topic.ID {
			pidx = prev
		}
		pidx.SetMaxSegments(m.cfg.IndexMaxSegments)
		var purge []offsets.Change
		for _, u := range idx.Purge(tp, p.topic.ID) {
			purge = append(purge, u.Change)
		}
		p.reset(pidx, purge)
	}
	return fresh, nil
}

// disown gives back partitions a shared mirror could not start: Adopt
// tries them again.
func (m *Mirror) disown(parts []*partition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range parts {
		p.owned = false
	}
}

// ownedParts returns the partitions of parts this node copies.
func ownedParts(parts []*partition) []*partition {
	var out []*partition
	for _, p := range parts {
		if p.owned {
			out = append(out, p)
		}
	}
	return out
}
