// Package index persists a flow's exact offset map (package offsets) in a
// compacted topic on the target, "strait-index.<source>.internal", and reads
// it back: once to the end when a node starts, or continuously for the
// checkpointer. Records are wire.IndexSegment.
package index

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/offsets"
	"strait/internal/tail"
	"strait/internal/wire"
)

// TopicName is the index topic of the flow from source, on the target.
// The ".internal" suffix keeps every MM2-style replicator from copying it.
func TopicName(source string) string { return "strait-index." + source + ".internal" }

// TP names a source partition.
type TP struct {
	Topic     string
	Partition int32
}

// Update is one change of one partition's map, ready to be written.
type Update struct {
	TP      TP
	TopicID [16]byte
	Change  offsets.Change
}

// Write appends updates to the index topic and waits until the target
// acknowledged all of them. Progress that relies on these segments must be
// committed only after Write returns nil.
func Write(ctx context.Context, cl *kgo.Client, topic string, updates []Update) error {
	if len(updates) == 0 {
		return nil
	}
	recs, err := Records(topic, updates)
	if err != nil {
		return err
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("writing %d offset index records to %s: %w", len(recs), topic, err)
	}
	return nil
}

// Records encodes updates as index records of topic, in order.
func Records(topic string, updates []Update) ([]*kgo.Record, error) {
	recs := make([]*kgo.Record, 0, len(updates))
	for _, u := range updates {
		c := u.Change.Segment
		seg := wire.IndexSegment{
			Topic: u.TP.Topic, Partition: u.TP.Partition,
			Src: c.Src, Tgt: c.Tgt, Len: c.Len, TgtLen: c.TgtLen, Mapped: c.Mapped,
			Covered: u.Change.Covered, Start: u.Change.Start, TopicID: u.TopicID,
		}
		key, err := seg.Key().AppendKey(nil)
		if err != nil {
			return nil, err
		}
		r := &kgo.Record{Topic: topic, Partition: 0, Key: key}
		if !u.Change.Deleted {
			r.Value = seg.AppendValue(nil)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// Map is a loaded index: one offset map per source partition, with the
// source topic ID each was built for.
type Map struct {
	Parts map[TP]*offsets.Partition
	IDs   map[TP][16]byte
	// Skipped counts records that could not be decoded.
	Skipped int

	// keys are the Tgt keys of each partition's records in the topic,
	// including those Restore resolved away as overlaps.
	keys map[TP][]int64
}

// NewMap returns the Map Load would build from records holding exactly the
// segments of parts, each partition of the source topic incarnation ids
// gives.
func NewMap(parts map[TP]*offsets.Partition, ids map[TP][16]byte) Map {
	m := Map{Parts: parts, IDs: ids, keys: map[TP][]int64{}}
	for tp, p := range parts {
		for _, s := range p.Segments() {
			m.keys[tp] = append(m.keys[tp], s.Tgt)
		}
	}
	return m
}

// Purge returns the tombstones that remove tp's segments from the index
// topic when they belong to another incarnation of the source topic than
// id (it was deleted and recreated), and nil when they belong to id or tp
// has none. Readers ignore an old incarnation once the new one's first
// segment is written (see state), so the tombstones are not needed for
// correctness: they stop compaction from keeping the old keys forever.
// They must be written before the new incarnation's first segment of tp,
// as one ordered batch with it or earlier: a tombstone written after a new
// segment with the same key would delete that segment.
func (m Map) Purge(tp TP, id [16]byte) []Update {
	old, ok := m.IDs[tp]
	if !ok || old == id {
		return nil
	}
	out := make([]Update, 0, len(m.keys[tp]))
	for _, tgt := range m.keys[tp] {
		out = append(out, Update{TP: tp, TopicID: old, Change: offsets.Change{Segment: offsets.Segment{Tgt: tgt}, Deleted: true, Covered: -1, Start: -1}})
	}
	return out
}

// Coalesce returns updates with only the latest update of each index key
// (partition and Tgt), in the order those latest updates had. A later
// update of a key supersedes an earlier one whatever each is: a delete
// after a write is a delete, a write after a delete is a write, and the
// coverage and start are the latest's. Updates whose write failed can so
// be kept and sent again together with newer ones without growing past one
// update per key. The order matters and is kept: the index topic is read in
// order, and a partition's incarnation is that of its latest record.
func Coalesce(updates []Update) []Update {
	type key struct {
		tp  TP
		tgt int64
	}
	last := make(map[key]int, len(updates))
	for i, u := range updates {
		last[key{u.TP, u.Change.Segment.Tgt}] = i
	}
	if len(last) == len(updates) {
		return updates
	}
	out := make([]Update, 0, len(last))
	for i, u := range updates {
		if last[key{u.TP, u.Change.Segment.Tgt}] == i {
			out = append(out, u)
		}
	}
	return out
}

// state accumulates index records (latest per key wins, as compaction
// would) and rebuilds the maps from them.
//
// A partition's segments belong to one incarnation of its source topic (one
// topic ID). A source topic that is deleted and recreated gets a new ID, and
// the mirror writes the new incarnation's segments after the old one's, so
// the ID of the latest record read wins: a record with another ID than the
// partition's drops every segment held so far. Compaction keeps that true:
// it keeps the latest record per key and never reorders, so an old
// incarnation's record that survives (its key was not written again) is
// still before every record of the new one.
type state struct {
	parts   map[TP]*tpState
	skipped int
}

// tpState is what the index holds for one partition: one incarnation's
// segments by Tgt.
type tpState struct {
	id   [16]byte
	segs map[int64]stored
}

// stored is one segment record's value, without what its partition's
// records share.
type stored struct {
	seg            offsets.Segment
	covered, start int64
}

func newState() *state { return &state{parts: map[TP]*tpState{}} }

// add applies one record; it reports false for an undecodable one.
func (s *state) add(key, value []byte) bool {
	seg, err := wire.DecodeIndexSegment(key, value)
	tp := TP{seg.Topic, seg.Partition}
	switch {
	case errors.Is(err, wire.ErrTombstone) && key != nil:
		if ts := s.parts[tp]; ts != nil {
			delete(ts.segs, seg.Tgt)
		}
		return true
	case err != nil:
		s.skipped++
		return false
	}
	ts := s.parts[tp]
	if ts == nil {
		ts = &tpState{id: seg.TopicID, segs: map[int64]stored{}}
		s.parts[tp] = ts
	}
	if seg.TopicID != ts.id {
		ts.segs = map[int64]stored{} // a new incarnation: the old one's segments are void
		ts.id = seg.TopicID
	}
	ts.segs[seg.Tgt] = stored{
		seg:     offsets.Segment{Src: seg.Src, Tgt: seg.Tgt, Len: seg.Len, TgtLen: seg.TgtLen, Mapped: seg.Mapped},
		covered: seg.Covered, start: seg.Start,
	}
	return true
}

func (s *state) build(only map[TP]bool) Map {
	m := Map{Parts: map[TP]*offsets.Partition{}, IDs: map[TP][16]byte{}, Skipped: s.skipped, keys: map[TP][]int64{}}
	for tp, ts := range s.parts {
		if only != nil && !only[tp] {
			continue
		}
		var (
			segs          = make([]offsets.Segment, 0, len(ts.segs))
			covered int64 = -1
			newest  stored
		)
		keys := make([]int64, 0, len(ts.segs))
		for tgt, st := range ts.segs {
			keys = append(keys, tgt)
			segs = append(segs, st.seg)
			if len(segs) == 1 || tgt > newest.seg.Tgt {
				newest = st
			}
			covered = max(covered, st.covered)
		}
		if len(segs) == 0 {
			continue
		}
		m.Parts[tp] = offsets.Restore(segs, covered, newest.start)
		m.IDs[tp] = ts.id
		slices.Sort(keys)
		m.keys[tp] = keys
	}
	return m
}

// Load reads the index topic from its start to its current end. cl must
// suit tail.ReadToEnd; a missing topic is an empty index.
func Load(ctx context.Context, cl *kgo.Client, topic string) (Map, error) {
	st := newState()
	if _, err := tail.ReadToEnd(ctx, cl, topic, func(r *kgo.Record) { st.add(r.Key, r.Value) }); err != nil {
		return Map{}, err
	}
	return st.build(nil), nil
}

// Reader follows the index topic and answers translations from it. It is
// how the checkpointer and the API see the offsets the data plane wrote,
// whichever node wrote them.
type Reader struct {
	cl    *kgo.Client
	topic string
	log   *slog.Logger

	mu    sync.RWMutex
	st    *state
	cache map[TP]*offsets.Partition
	ready bool
}

// NewReader returns a Reader that consumes topic with cl (a client without
// consume options, used only by this Reader).
func NewReader(cl *kgo.Client, topic string, log *slog.Logger) *Reader {
	return &Reader{cl: cl, topic: topic, log: log.With("component", "index-reader", "topic", topic), st: newState(), cache: map[TP]*offsets.Partition{}}
}

// Run reads the topic until ctx is done. Ready turns true once it has read
// everything that existed when it started.
func (r *Reader) Run(ctx context.Context) error {
	var from map[int32]int64
	for ctx.Err() == nil {
		lctx, cancel := context.WithTimeout(ctx, time.Minute)
		ends, err := tail.ReadToEnd(lctx, r.cl, r.topic, func(rec *kgo.Record) { r.add(rec.Key, rec.Value) })
		cancel()
		if err == nil {
			from = ends
			break
		}
		r.log.Warn("loading the offset index failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
		}
	}
	r.mu.Lock()
	r.ready = true
	r.mu.Unlock()
	tail.Follow(ctx, r.cl, r.topic, from, func(rec *kgo.Record) { r.add(rec.Key, rec.Value) },
		func(err error) { r.log.Warn("reading the offset index", "err", err) })
	return nil
}

func (r *Reader) add(key, value []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := r.st.add(key, value)
	if k, err := wire.DecodeIndexKey(key); err == nil {
		delete(r.cache, TP{k.Topic, k.Partition})
	}
	if !ok {
		r.log.Warn("skipped an undecodable offset index record", "skipped_total", r.st.skipped)
	}
	return ok
}

// Ready reports whether the initial read finished.
func (r *Reader) Ready() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.ready
}

// Skipped returns how many undecodable records were skipped.
func (r *Reader) Skipped() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.st.skipped
}

// Translate translates source offset u of a partition, whichever
// incarnation of the source topic the index holds (see TranslateID).
func (r *Reader) Translate(topic string, partition int32, u int64) (int64, offsets.Result) {
	return r.TranslateID(topic, partition, [16]byte{}, u)
}

// TranslateID translates source offset u of a partition of the source
// topic whose current ID is id. When the index holds another incarnation
// of the topic (it was deleted and recreated and the new one is not
// indexed yet), there is no answer: OtherIncarnation. A zero id (a source
// that reports no topic IDs) skips the check.
func (r *Reader) TranslateID(topic string, partition int32, id [16]byte, u int64) (int64, offsets.Result) {
	tp := TP{topic, partition}
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.cache[tp]
	if !ok {
		p = r.st.build(map[TP]bool{tp: true}).Parts[tp]
		r.cache[tp] = p
	}
	if p == nil {
		return -1, offsets.Empty
	}
	if ts := r.st.parts[tp]; id != ([16]byte{}) && ts.id != id {
		return -1, offsets.OtherIncarnation
	}
	return p.Translate(u)
}

// Partition returns the map the index holds for a partition, whichever
// incarnation of the source topic it belongs to; nil before the initial
// read finished or when the index holds no segment of it. The map is
// shared: only read it.
func (r *Reader) Partition(topic string, partition int32) *offsets.Partition {
	tp := TP{topic, partition}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.ready {
		return nil
	}
	p, ok := r.cache[tp]
	if !ok {
		p = r.st.build(map[TP]bool{tp: true}).Parts[tp]
		r.cache[tp] = p
	}
	return p
}

// TopicID returns the source topic ID of the incarnation the index holds
// for a partition, and false when it holds no segment of it.
func (r *Reader) TopicID(topic string, partition int32) ([16]byte, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ts := r.st.parts[TP{topic, partition}]
	if ts == nil || len(ts.segs) == 0 {
		return [16]byte{}, false
	}
	return ts.id, true
}

// Translate translates source offset u of a partition with a loaded map,
// whichever incarnation of the source topic it holds (see TranslateID).
func (m Map) Translate(topic string, partition int32, u int64) (int64, offsets.Result) {
	return m.TranslateID(topic, partition, [16]byte{}, u)
}

// TranslateID translates source offset u of a partition of the source
// topic whose current ID is id, as Reader.TranslateID does.
func (m Map) TranslateID(topic string, partition int32, id [16]byte, u int64) (int64, offsets.Result) {
	tp := TP{topic, partition}
	p := m.Parts[tp]
	if p == nil {
		return -1, offsets.Empty
	}
	if id != ([16]byte{}) && m.IDs[tp] != id {
		return -1, offsets.OtherIncarnation
	}
	return p.Translate(u)
}
