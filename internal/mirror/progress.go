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
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
	"strait/internal/index"
	"strait/internal/mirror/fastpath"
	"strait/internal/mirror/flow"
	"strait/internal/offsets"
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
	wait := time.Minute
	if t := m.cfg.Transactions; t != nil {
		// A transaction of a node that died holds its progress unstable
		// until the coordinator aborts it: the timeout, plus the broker's
		// check for timed-out transactions (10 s by default).
		wait = max(wait, 2*t.Timeout+30*time.Second)
	}
	deadline := time.Now().Add(wait)
	backoff := 100 * time.Millisecond
	for {
		// RequireStable: progress that an open transaction commits (a node
		// of exactly-once mode that died or stopped mid-commit) is read
		// only once that transaction ended, committed or aborted.
		lctx, cancel := context.WithTimeout(kadm.RequireStable(ctx), 15*time.Second)
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

// pending is what a commit makes durable, drained from the partitions:
// offset index changes, MM2 offset syncs, and the progress that moved.
type pending struct {
	updates []index.Update
	syncs   []*kgo.Record
	offs    kadm.Offsets
	moved   []movedProgress
}

// movedProgress is a partition's progress to commit.
type movedProgress struct {
	p    *partition
	next int64
}

// drain takes from every owned partition what the next commit persists.
func (m *Mirror) drain() pending {
	var c pending
	c.offs = make(kadm.Offsets)
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, t := range m.topics {
		meta := progressMetadata(t.ID)
		for _, p := range ownedParts(t.parts) {
			next, committed, changes, due := p.drain()
			for _, ch := range changes {
				c.updates = append(c.updates, index.Update{TP: index.TP{Topic: t.Source, Partition: p.num}, TopicID: t.ID, Change: ch})
			}
			if m.cfg.SyncTopic != "" {
				for _, s := range due {
					c.syncs = append(c.syncs, m.syncRecord(t.Source, p.num, s))
				}
			}
			if next < 0 || next == committed {
				continue
			}
			c.moved = append(c.moved, movedProgress{p, next})
			c.offs.Add(kadm.Offset{Topic: t.Remote, Partition: p.num, At: next, LeaderEpoch: -1, Metadata: meta})
		}
	}
	return c
}

// writeSyncs writes MM2 offset syncs, best effort as MM2 does: Strait's
// own index does not depend on them.
func (m *Mirror) writeSyncs(ctx context.Context, syncs []*kgo.Record) {
	if len(syncs) == 0 {
		return
	}
	if err := m.cl.SyncWriter.ProduceSync(ctx, syncs...).FirstErr(); err != nil {
		m.log.Warn("writing MM2 offset syncs failed; Strait's own index is unaffected", "topic", m.cfg.SyncTopic, "err", err)
	}
}

// commit makes acknowledged progress durable, in an order that keeps every
// stored fact true: first the offset index segments that cover it, then the
// progress itself, then MM2 offset syncs (best effort, as in MM2). A node
// that may not commit now (its mirror's membership is gone, or its lease
// lapsed) writes none of them: the index records of a node fenced out of
// the flow would land among those of the partitions' next owner.
func (m *Mirror) commit(ctx context.Context) error {
	fenced, cancel, err := m.commitContext(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	syncs, err := m.commitFenced(fenced)
	// Offset syncs only describe records the target acknowledged, and a
	// syncs topic that does not answer must not hold progress back: bounded
	// on their own, after the progress.
	sctx, scancel := context.WithTimeout(ctx, syncsTimeout)
	m.writeSyncs(sctx, syncs)
	scancel()
	return err
}

// syncsTimeout bounds the writing of MM2 offset syncs after a commit.
const syncsTimeout = 5 * time.Second

// commitFenced writes the index records and progress of commit under ctx
// (bounded by the node's lease) and returns the offset syncs due.
func (m *Mirror) commitFenced(ctx context.Context) ([]*kgo.Record, error) {
	// Index writes that failed go first, alone: progress drained now may
	// rely on them, and while the target refuses writes, what waits stays
	// at one update per index key.
	if len(m.unsent) > 0 {
		if err := index.Write(ctx, m.cl.Meta, m.cfg.IndexTopic, m.unsent); err != nil {
			return nil, err
		}
		m.unsent = nil
	}
	c := m.drain()
	if err := index.Write(ctx, m.cl.Meta, m.cfg.IndexTopic, c.updates); err != nil {
		m.unsent = index.Coalesce(c.updates)
		return nil, err
	}
	if len(c.moved) == 0 {
		return c.syncs, nil
	}
	resps, err := m.commitOffsets(ctx, c.offs)
	if err != nil {
		return c.syncs, err
	}
	var errs []error
	for _, mv := range c.moved {
		r, ok := resps.Lookup(mv.p.topic.Remote, mv.p.num)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s[%d]: no commit response", mv.p.topic.Remote, mv.p.num))
		case r.Err != nil:
			errs = append(errs, fmt.Errorf("%s[%d]: %w", mv.p.topic.Remote, mv.p.num, r.Err))
		default:
			mv.p.setCommitted(mv.next)
		}
	}
	return c.syncs, errors.Join(errs...)
}

// commitTxn ends a transaction of exactly-once mode (the forwarder calls
// it once every batch sent in it is acknowledged): the offset index
// records of what was acknowledged are written into the transaction, the
// progress is committed in it with the group generation, and EndTxn
// commits data, index and progress at once. MM2 offset syncs follow, once
// committed, outside it (as MM2 writes them only for committed records).
// Any error leaves the transaction to be aborted: the caller ends the
// attempt, and what drain took is read back from the target by the next.
// A transaction with nothing to write needs no lease: a node with nothing
// to copy must not abort at every tick of a rebalance.
func (m *Mirror) commitTxn(ctx context.Context, p fastpath.Producer, open, indexAdded bool, indexSeq int32) (int32, error) {
	m.prune(ctx)
	c := m.drain()
	if !open && len(c.updates) == 0 && len(c.moved) == 0 {
		return indexSeq, nil // nothing was written: there is no transaction to end
	}
	ctx, cancel, err := m.commitContext(ctx)
	if err != nil {
		return indexSeq, err
	}
	defer cancel()
	if len(c.updates) > 0 {
		if !indexAdded {
			if err := p.AddPartitions(ctx, map[string][]int32{m.cfg.IndexTopic: {0}}); err != nil {
				return indexSeq, err
			}
			open = true
		}
		var err error
		if indexSeq, err = m.writeIndexTxn(ctx, p, c.updates, indexSeq); err != nil {
			return indexSeq, err
		}
	}
	if len(c.moved) > 0 {
		generation, member := int32(-1), ""
		if gen := m.deps.Share.Generation; gen != nil {
			var ok bool
			if generation, member, ok = gen(); !ok {
				return indexSeq, errNotMember
			}
		}
		if err := p.CommitOffsets(ctx, m.cfg.Group, generation, member, txnOffsets(c.offs)); err != nil {
			return indexSeq, err
		}
		open = true
	}
	if err := p.End(ctx, true); err != nil {
		return indexSeq, err
	}
	m.txnCommits.Add(1)
	for _, mv := range c.moved {
		mv.p.setCommitted(mv.next)
	}
	// Best effort, and bounded: the next transaction waits for it.
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	m.writeSyncs(sctx, c.syncs)
	cancel()
	return indexSeq, nil
}

// writeIndexTxn writes offset index updates into the open transaction, in
// batches of at most m.indexBatchBytes (halved, and kept so, each time the
// index topic refuses a batch as larger than its max.message.bytes), from
// sequence seq on; it returns the sequence after them.
func (m *Mirror) writeIndexTxn(ctx context.Context, p fastpath.Producer, updates []index.Update, seq int32) (int32, error) {
	recs, err := index.Records(m.cfg.IndexTopic, updates)
	if err != nil {
		return seq, err
	}
	kvs := make([]batch.KV, len(recs))
	for i, r := range recs {
		kvs[i] = batch.KV{Key: r.Key, Value: r.Value}
	}
	if m.indexBatchBytes <= 0 {
		m.indexBatchBytes = indexBatchBytes
	}
	for len(kvs) > 0 {
		n, size := 0, 0
		for n < len(kvs) && (n == 0 || size+kvSize(kvs[n]) <= m.indexBatchBytes) {
			size += kvSize(kvs[n])
			n++
		}
		h, b, err := batch.Encode(kvs[:n], time.Now().UnixMilli())
		if err != nil {
			return seq, fmt.Errorf("encoding %d offset index records: %w", n, err)
		}
		batch.Rewrite(b, h, p.PID, p.Epoch, seq, true)
		if _, err := p.ProduceOne(ctx, m.cfg.IndexTopic, 0, b, -1); err != nil {
			if flow.TooLarge(err) && n > 1 {
				// Not written: the same sequence goes with a smaller batch.
				m.indexBatchBytes = max(size/2, 1)
				continue
			}
			return seq, fmt.Errorf("writing %d offset index records: %w", n, err)
		}
		seq = fastpath.NextSeq(seq, int32(n))
		kvs = kvs[n:]
	}
	return seq, nil
}

// indexBatchBytes is the most bytes of offset index records one batch of
// exactly-once mode holds at first: below Kafka's default max.message.bytes
// (1 MiB) of the index topic.
const indexBatchBytes = 512 << 10

// kvSize is about what a record takes in a batch.
func kvSize(kv batch.KV) int { return len(kv.Key) + len(kv.Value) + 16 }

// txnOffsets converts progress for TxnOffsetCommit.
func txnOffsets(offs kadm.Offsets) map[string][]kmsg.TxnOffsetCommitRequestTopicPartition {
	out := make(map[string][]kmsg.TxnOffsetCommitRequestTopicPartition, len(offs))
	offs.Each(func(o kadm.Offset) {
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = o.Partition, o.At, o.LeaderEpoch, kmsg.StringPtr(o.Metadata)
		out[o.Topic] = append(out[o.Topic], rp)
	})
	return out
}

// errNotMember is the commit error of a node that is not a member of the
// flow's group right now: it commits nothing until it rejoins.
var errNotMember = errors.New("this node is not a member of the flow's group now (rejoining); progress is committed once it is")

// errLeaseLapsedCommit is the commit error of a node whose lease lapsed: it
// may have been fenced out of the flow's group while it stood still.
var errLeaseLapsedCommit = errors.New("this node's lease in the flow's group lapsed (no heartbeat accepted lately); progress is committed once it is renewed")

// commitContext is the context a commit writes under, bounded by the node's
// lease (Share.LeaseUntil), so that a node frozen in the middle of a commit
// writes nothing of it once it resumes; errNotMember or errLeaseLapsedCommit
// when the node may not commit now.
func (m *Mirror) commitContext(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if gen := m.deps.Share.Generation; gen != nil {
		if _, _, ok := gen(); !ok {
			return nil, nil, errNotMember
		}
	}
	if m.deps.Share.LeaseUntil == nil {
		return ctx, func() {}, nil
	}
	until := m.deps.Share.LeaseUntil()
	if !time.Now().Before(until) {
		return nil, nil, errLeaseLapsedCommit
	}
	ctx, cancel := flow.LeaseContext(ctx, until)
	return ctx, cancel, nil
}

// commitOffsets commits progress to the flow's group: with the group
// generation and member id of this node when the flow is shared, so that
// the broker refuses a fenced node's commit, else as a group without
// members (kadm's generation -1).
func (m *Mirror) commitOffsets(ctx context.Context, offs kadm.Offsets) (kadm.OffsetResponses, error) {
	gen := m.deps.Share.Generation
	if gen == nil {
		return m.dstAdm.CommitOffsets(ctx, m.cfg.Group, offs)
	}
	generation, member, ok := gen()
	if !ok {
		return nil, errNotMember
	}
	ids, err := m.remoteTopicIDs(ctx, offs)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation, req.MemberID = m.cfg.Group, generation, member
	for topic, parts := range offs {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = topic, ids[topic] // v10 on names topics by ID
		for _, o := range parts {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = o.Partition, o.At, o.LeaderEpoch, kmsg.StringPtr(o.Metadata)
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, m.cl.Meta)
	if err != nil {
		return nil, err
	}
	names := make(map[[16]byte]string, len(ids))
	for name, id := range ids {
		names[id] = name
	}
	out := make(kadm.OffsetResponses)
	for _, t := range resp.Topics {
		name := t.Topic
		if name == "" {
			name = names[t.TopicID]
		}
		for _, p := range t.Partitions {
			err := kerr.ErrorForCode(p.ErrorCode)
			if errors.Is(err, kerr.UnknownTopicID) {
				delete(m.remoteIDs, name) // recreated: looked up again
			}
			out.Add(kadm.OffsetResponse{Offset: kadm.Offset{Topic: name, Partition: p.Partition}, Err: err})
		}
	}
	return out, nil
}

// remoteTopicIDs returns the target's topic IDs of the remote topics in
// offs, which OffsetCommit v10 on needs. They are looked up once and kept
// (only the commit goroutine uses m.remoteIDs).
func (m *Mirror) remoteTopicIDs(ctx context.Context, offs kadm.Offsets) (map[string][16]byte, error) {
	if m.remoteIDs == nil {
		m.remoteIDs = map[string][16]byte{}
	}
	var missing []string
	for topic := range offs {
		if _, ok := m.remoteIDs[topic]; !ok {
			missing = append(missing, topic)
		}
	}
	if len(missing) > 0 {
		md, err := m.dstAdm.Metadata(ctx, missing...)
		if err != nil {
			return nil, fmt.Errorf("looking up the remote topics' IDs to commit progress: %w", err)
		}
		for name, t := range md.Topics {
			if t.Err == nil {
				m.remoteIDs[name] = t.ID
			}
		}
	}
	return m.remoteIDs, nil
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
			p.prune(o.Offset)
		}
	})
}
