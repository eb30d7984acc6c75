// Package offsets holds Strait's exact offset map: for each replicated
// partition, segments of source offsets and the target offsets their records
// were written at. It is pure: the data plane feeds acknowledgements in, the
// checkpointer asks for translations, and persistence lives elsewhere.
//
// # The algorithm
//
// A Segment maps the source range [Src, Src+Len) onto [Tgt, Tgt+Len) with a
// constant shift: the record at source offset s, if it was copied, is at
// target offset s-Src+Tgt. The record path starts a new segment wherever
// either side skips (a compaction hole, a transaction marker, aborted data,
// a restart); a forwarded raw batch covers its whole offset range, holes
// included, because the target keeps the batch's offset deltas.
//
// Segments are kept sorted and non-overlapping on both sides. When a source
// range is copied again (a replay after a crash), the newer copy wins: older
// segments are cut at the replay's start. That is exact for translation,
// because after a replay every later record is copied again in order, so a
// consumer placed on the newer copy reads everything the source would give
// it next, with no extra duplicates.
//
// Translate(u) answers where a consumer whose next source offset is u must
// start on the target to read first exactly the record the source would
// return next: inside a segment, u shifted; in a gap between segments (only
// uncopyable offsets), the start of the next segment; at or past the last
// segment but not beyond Covered, the target position after the last copied
// record (beyond Covered too, but then the answer is Ahead: see Result);
// between Start (where replication of the partition began) and the
// first segment, the first segment's start. Offsets before Start (or before
// the first segment when Start is unknown) or beyond Covered have no exact
// answer and are reported as such, never guessed.
//
// # The bound
//
// A compacted topic's record path starts a segment at every compaction
// hole, so a partition's map can grow without end. SetMaxSegments bounds
// it. Within the bound the map is exact. Beyond it the oldest segments are
// merged into coarse segments (consumers are usually near the head, so the
// newest half of the bound always stays exact): a coarse segment knows only
// where its source and target ranges start and end, and how many offsets
// inside were mapped exactly (Mapped). Translating an offset inside one
// rounds down to a target offset that is never after the exact answer (the
// proof is at roundDown): a consumer placed there reads some records again
// but never skips one, and the Result says Rounded, not Exact. Coarsening
// merges the oldest runs whose worst rounding stays under a threshold that
// doubles when that is not enough, so every coarse segment rounds by about
// as much as the others, and its cost is amortized: a pass runs only after a
// quarter of the bound was added since the last one.
package offsets

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// DefaultMaxSegments is the default bound of a partition's map
// (strait.index.max.segments). A segment costs about 45 bytes in the
// mirror and about 170 bytes in each index reader (its record and its
// translation cache), so a partition at the bound costs about 2 MB in a
// node, while the newest 5,000 segments stay exact: thousands of
// compaction holes or transactions at the head of a compacted or
// transactional partition. Partitions of other topics have a handful of
// segments and never reach it.
const DefaultMaxSegments = 10_000

// Segment maps source offsets [Src, Src+Len) to target offsets
// [Tgt, Tgt+Len) with a constant shift. A coarse segment (TgtLen > 0)
// stands for exact segments that were merged to bound the map: it covers
// source [Src, Src+Len) and target [Tgt, Tgt+TgtLen), and at least Mapped
// offsets of it were mapped exactly; the rest are gaps on either side.
// Its first source offset still maps to Tgt exactly.
type Segment struct {
	Src int64 `json:"src"`
	Tgt int64 `json:"tgt"`
	Len int64 `json:"len"`
	// TgtLen is a coarse segment's target length, 0 for an exact one.
	TgtLen int64 `json:"tgt_len,omitempty"`
	// Mapped is a coarse segment's count of exactly mapped offsets (a
	// lower bound), 0 for an exact one.
	Mapped int64 `json:"mapped,omitempty"`
}

// Coarse reports whether the segment stands for merged segments.
func (s Segment) Coarse() bool { return s.TgtLen > 0 }

// SrcEnd is the source offset after the segment.
func (s Segment) SrcEnd() int64 { return s.Src + s.Len }

// TgtEnd is the target offset after the segment.
func (s Segment) TgtEnd() int64 { return s.Tgt + s.tgtLen() }

func (s Segment) tgtLen() int64 {
	if s.Coarse() {
		return s.TgtLen
	}
	return s.Len
}

// mapped is how many offsets of the segment are known to map exactly.
func (s Segment) mapped() int64 {
	if s.Coarse() {
		return s.Mapped
	}
	return s.Len
}

// weight is the most a translation inside the segment can round down by
// (see roundDown): 0 for an exact segment.
func (s Segment) weight() int64 {
	if !s.Coarse() {
		return 0
	}
	return min(s.Len+s.TgtLen-2*s.Mapped, s.TgtLen)
}

// span returns the segment covering source [src, srcEnd) and target
// [tgt, tgtEnd) with mapped exactly mapped offsets: exact when nothing
// else is inside, coarse otherwise.
func span(src, srcEnd, tgt, tgtEnd, mapped int64) Segment {
	n, m := srcEnd-src, tgtEnd-tgt
	if mapped == n && mapped == m {
		return Segment{Src: src, Tgt: tgt, Len: n}
	}
	return Segment{Src: src, Tgt: tgt, Len: n, TgtLen: m, Mapped: mapped}
}

func (s Segment) String() string {
	if s.Coarse() {
		return fmt.Sprintf("[%d,%d)~>[%d,%d)(%d mapped)", s.Src, s.SrcEnd(), s.Tgt, s.TgtEnd(), s.Mapped)
	}
	return fmt.Sprintf("[%d,%d)->[%d,%d)", s.Src, s.SrcEnd(), s.Tgt, s.TgtEnd())
}

// roundDown translates source offset u inside the coarse segment s
// (Src < u < SrcEnd) to a target offset that is never after the exact
// answer e, the one the merged exact segments would have given.
//
// Let G = Len-Mapped and H = TgtLen-Mapped bound the offsets in gaps on the
// source and the target side. The merged segments are sorted on both sides
// and start at (Src, Tgt), so fewer than u-Src source offsets before u
// were mapped, and at least u-Src-G of them: e >= Tgt+(u-Src)-G. They end
// at or before (SrcEnd, TgtEnd), so from u to SrcEnd at most H more target
// offsets than source offsets follow: e >= TgtEnd-(SrcEnd-u)-H. And
// e >= Tgt. The answer is the largest of the three, and e minus it is at
// most min(G+H, TgtLen): the segment's weight.
func (s Segment) roundDown(u int64) int64 {
	g, h := s.Len-s.Mapped, s.TgtLen-s.Mapped
	return max(s.Tgt, s.Tgt+(u-s.Src)-g, s.TgtEnd()-(s.SrcEnd()-u)-h)
}

// Partition is the offset map of one partition. It is not safe for
// concurrent use; the owner serialises access.
type Partition struct {
	segs []Segment
	// covered is the source offset below which every offset is accounted
	// for: copied (in a segment) or not copyable. -1 when unknown.
	covered int64
	// drained is covered as of the last Drain: what readers of the
	// persisted changes already rely on.
	drained int64
	// start is the source offset replication of the partition began at:
	// offsets from start to the first segment hold nothing to copy. -1
	// when unknown.
	start int64

	// max bounds len(segs) (0: unbounded); weight is the rounding the
	// coarsening allows itself, doubled when that is not enough.
	max    int
	weight int64

	// Changes since the last Drain, for persistence. A key (a segment's
	// Tgt) is in at most one of changed and deleted. fresh keys were
	// created since the last Drain and were never handed out: removing
	// one needs no tombstone.
	// The sets are nil while empty: an idle partition holds no maps (three
	// empty maps cost about 600 bytes per partition, 3 MB at 5,000).
	changed map[int64]bool // segments written, grown, shortened or merged
	deleted map[int64]bool // segments removed
	fresh   map[int64]bool
	coverCh bool
}

// NewPartition returns an empty, unbounded map.
func NewPartition() *Partition {
	return &Partition{covered: -1, drained: -1, start: -1}
}

// SetMaxSegments bounds the map to n segments (strait.index.max.segments;
// DefaultMaxSegments by default): beyond n, the oldest segments are
// coarsened at once and from then on, and translations inside coarse
// segments round down. n <= 0 removes the bound; 1 counts as 2 (the newest
// segment always stays exact). Lowering the bound of a map that holds more
// coarsens it now, and the next Drain returns the merges.
func (p *Partition) SetMaxSegments(n int) {
	if n == 1 {
		n = 2
	}
	p.max = max(n, 0)
	if p.weight == 0 {
		// A restored map goes on at the granularity it was coarsened at.
		for _, s := range p.segs {
			p.weight = max(p.weight, s.weight())
		}
	}
	p.bound()
}

// MaxSegments returns the bound, 0 when unbounded.
func (p *Partition) MaxSegments() int { return p.max }

// Segments returns a copy of the segments in order.
func (p *Partition) Segments() []Segment { return append([]Segment(nil), p.segs...) }

// Len returns the number of segments.
func (p *Partition) Len() int { return len(p.segs) }

// Covered returns the source offset below which everything is accounted for.
func (p *Partition) Covered() int64 { return p.covered }

// Start returns where replication of the partition began, -1 if unknown.
func (p *Partition) Start() int64 { return p.start }

// SetStart records where replication of the partition begins (the source
// log start when it starts from the earliest offset), unless it is known.
func (p *Partition) SetStart(offset int64) {
	if p.start < 0 && offset >= 0 {
		p.start = offset
		p.coverCh = true
	}
}

// Ack records that source offset src was written at target offset tgt.
func (p *Partition) Ack(src, tgt int64) { p.AckRange(src, tgt, 1) }

// AckRange records that the n offsets from src were written from tgt on,
// with a constant shift (a forwarded batch, holes included).
func (p *Partition) AckRange(src, tgt, n int64) {
	if n <= 0 {
		return
	}
	p.add(Segment{Src: src, Tgt: tgt, Len: n})
	p.bound()
}

// add appends s (exact or coarse), after cutting what it supersedes, or
// grows the last exact segment when s continues it on both sides.
func (p *Partition) add(s Segment) {
	if k := len(p.segs); k > 0 {
		last := &p.segs[k-1]
		switch {
		case !s.Coarse() && !last.Coarse() && s.Src == last.SrcEnd() && s.Tgt == last.TgtEnd():
			last.Len += s.Len
			mark(&p.changed, last.Tgt)
			p.cover(s.SrcEnd())
			return
		case s.Src < last.SrcEnd() || s.Tgt < last.TgtEnd():
			p.cut(s.Src, s.Tgt)
		}
	}
	p.segs = append(p.segs, s)
	p.created(s.Tgt)
	p.cover(s.SrcEnd())
}

// mark adds k to the change set *m, making the set on first use.
func mark(m *map[int64]bool, k int64) {
	if *m == nil {
		*m = make(map[int64]bool, 1)
	}
	(*m)[k] = true
}

// created notes a new segment at key tgt.
func (p *Partition) created(tgt int64) {
	if p.deleted[tgt] {
		delete(p.deleted, tgt) // its record is overwritten, not removed
	} else if !p.changed[tgt] {
		mark(&p.fresh, tgt)
	}
	mark(&p.changed, tgt)
}

// removed notes that the segment at key tgt is gone.
func (p *Partition) removed(tgt int64) {
	delete(p.changed, tgt)
	if p.fresh[tgt] {
		delete(p.fresh, tgt) // never handed out: nothing to remove
		return
	}
	mark(&p.deleted, tgt)
}

// Cover records that every source offset below next is accounted for, for
// example because the offsets up to next were transaction markers.
func (p *Partition) Cover(next int64) { p.cover(next) }

func (p *Partition) cover(next int64) {
	if next > p.covered {
		p.covered = next
		p.coverCh = true
	}
}

// cut drops whatever a replay from (src, tgt) supersedes: source offsets at
// or after src, and target offsets at or after tgt. Both sides are sorted,
// so that is a suffix of the segments, of which only the first can keep a
// part: the cost follows what is cut.
func (p *Partition) cut(src, tgt int64) {
	i := sort.Search(len(p.segs), func(i int) bool { return p.segs[i].SrcEnd() > src || p.segs[i].TgtEnd() > tgt })
	for j := len(p.segs) - 1; j > i; j-- {
		p.removed(p.segs[j].Tgt)
	}
	if i < len(p.segs) {
		s := p.segs[i]
		ns, nt := min(s.Len, src-s.Src), min(s.tgtLen(), tgt-s.Tgt)
		switch {
		case ns <= 0 || nt <= 0:
			p.removed(s.Tgt)
		case !s.Coarse():
			p.segs[i].Len = min(ns, nt)
			mark(&p.changed, s.Tgt)
			i++
		default:
			// The records cut off are a suffix on both sides, so at
			// most the longer of the two cut lengths were mapped.
			cutOff := max(s.Len-ns, s.TgtLen-nt)
			mapped := min(max(s.Mapped-cutOff, 0), ns, nt)
			p.segs[i] = span(s.Src, s.Src+ns, s.Tgt, s.Tgt+nt, mapped)
			mark(&p.changed, s.Tgt)
			i++
		}
	}
	clear(p.segs[i:])
	p.segs = p.segs[:i]
	if p.covered > src {
		p.covered = src
		p.coverCh = true
	}
}

// bound coarsens the oldest segments when the map holds more than max,
// down to three quarters of max, so that the next pass comes only after a
// quarter of max new segments. The newest half of max stays exact.
func (p *Partition) bound() {
	if p.max <= 0 || len(p.segs) <= p.max {
		return
	}
	keep, low := p.max/2, p.max-p.max/4
	for len(p.segs) > low {
		if p.weight <= 0 {
			p.weight = 1
		}
		p.coarsen(len(p.segs)-keep, len(p.segs)-low)
		if len(p.segs) > low {
			if p.weight > math.MaxInt64/2 {
				p.weight = math.MaxInt64 // every run fits: the next pass merges all
			} else {
				p.weight *= 2
			}
		}
	}
}

// coarsen merges runs of adjacent segments among the first end, oldest
// first, each into one segment whose weight is at most p.weight, until
// need segments are gone or none more can be merged.
func (p *Partition) coarsen(end, need int) {
	out := 0 // segs[:out] is the merged prefix
	i := 0
	for i < end {
		if need <= 0 {
			break
		}
		first := p.segs[i]
		run := first
		mapped := first.mapped()
		j := i + 1
		for ; j < end && j-i-1 < need; j++ {
			next := p.segs[j]
			c := span(first.Src, next.SrcEnd(), first.Tgt, next.TgtEnd(), mapped+next.mapped())
			if c.weight() > p.weight {
				break
			}
			run, mapped = c, mapped+next.mapped()
		}
		if j > i+1 {
			for k := i + 1; k < j; k++ {
				p.removed(p.segs[k].Tgt)
			}
			mark(&p.changed, run.Tgt)
			need -= j - i - 1
		}
		p.segs[out] = run
		out++
		i = j
	}
	if out == i {
		return // nothing merged
	}
	n := copy(p.segs[out:], p.segs[i:])
	clear(p.segs[out+n:])
	p.segs = p.segs[:out+n]
}

// Result explains a translation.
type Result int

// Translation outcomes. Exact and Rounded carry a target offset; the
// others do not.
const (
	Exact        Result = iota // the offset is exact
	BeforeStart                // the source offset is before the first copied record
	NotCopiedYet               // the source offset is beyond what has been copied
	Empty                      // nothing has been copied for this partition
	// OtherIncarnation: the index holds another incarnation of the source
	// topic (it was deleted and recreated) than the one asked about.
	OtherIncarnation
	// UnknownTopic: the source does not describe the topic (deleted, or
	// not visible), so which incarnation an offset belongs to is unknown.
	UnknownTopic
	// Rounded: the offset is in a coarse part of a bounded map and was
	// rounded down. A consumer starting there reads some records again
	// but never skips one: safe to commit or checkpoint.
	Rounded
	// Ahead: the offset is beyond what was copied (a consumer on the
	// source that keeps up reads records before they are copied). The
	// answer is the target position after the last copied record: every
	// copy before it holds a record the consumer read. Records copied
	// later, up to the offset, it reads again; none it skips. When the
	// source is lost, it is where the consumer must resume.
	Ahead
)

// Usable reports whether the result carries a target offset a consumer
// can start at without skipping a record: Exact or Rounded.
func (r Result) Usable() bool { return r == Exact || r == Rounded || r == Ahead }

func (r Result) String() string {
	switch r {
	case Exact:
		return "exact"
	case BeforeStart:
		return "before the first replicated record"
	case OtherIncarnation:
		return "the index holds another incarnation of the source topic"
	case UnknownTopic:
		return "the source topic is unknown"
	case Rounded:
		return "not exact: rounded down to an earlier position (some records are read again)"
	case Ahead:
		return "ahead of the copy: after the last copied record (records copied later, up to the offset, are read again)"
	default:
		return "nothing replicated"
	}
}

// Translate returns the target offset a consumer must start at to read
// first exactly the record a source consumer at offset u reads next, or,
// inside a coarse segment, an earlier one (Rounded). It costs O(log n).
func (p *Partition) Translate(u int64) (int64, Result) {
	if len(p.segs) == 0 {
		return -1, Empty
	}
	if u < p.segs[0].Src {
		if p.start >= 0 && u >= p.start {
			return p.segs[0].Tgt, Exact
		}
		return -1, BeforeStart
	}
	i := sort.Search(len(p.segs), func(i int) bool { return p.segs[i].SrcEnd() > u })
	if i < len(p.segs) {
		s := p.segs[i]
		switch {
		case u <= s.Src:
			return s.Tgt, Exact
		case s.Coarse():
			return s.roundDown(u), Rounded
		default:
			return s.Tgt + (u - s.Src), Exact
		}
	}
	last := p.segs[len(p.segs)-1]
	if u <= p.covered {
		return last.TgtEnd(), Exact
	}
	return last.TgtEnd(), Ahead
}

// Prune drops segments that end at or below the source log start: no
// consumer position can need them any more. The last segment is kept so
// the map still knows where the target stands.
func (p *Partition) Prune(logStart int64) int {
	n := 0
	for len(p.segs)-n > 1 && p.segs[n].SrcEnd() <= logStart {
		p.removed(p.segs[n].Tgt)
		n++
	}
	if n > 0 {
		k := copy(p.segs, p.segs[n:])
		clear(p.segs[k:])
		p.segs = p.segs[:k]
	}
	return n
}

// Change is a persistence update: the segment keyed by its Tgt was written
// (Deleted false) or removed (Deleted true). Covered and Start are the
// partition's when drained, stored with every change.
type Change struct {
	Segment Segment
	Deleted bool
	Covered int64
	Start   int64
}

// Drain returns the changes since the last Drain, in target order. When
// only the coverage moved, the last segment is returned again so the new
// coverage is persisted. Its cost follows the changes, not the segments.
//
// Only the last segment written carries the new coverage; the other
// changes carry the lower of the old and the new. A reader applies the changes one by one
// and may answer between them: a coverage past segments it has not read
// yet would tell it that records those segments map were never copied, and
// an active-active checkpoint would then skip them (firstUnread in package
// checkpoint).
func (p *Partition) Drain() []Change {
	out := make([]Change, 0, len(p.deleted)+len(p.changed))
	for tgt := range p.deleted {
		out = append(out, Change{Segment: Segment{Tgt: tgt}, Deleted: true, Covered: p.covered, Start: p.start})
	}
	for tgt := range p.changed {
		if i, ok := p.find(tgt); ok {
			out = append(out, Change{Segment: p.segs[i], Covered: p.covered, Start: p.start})
		}
	}
	if len(out) == 0 && p.coverCh && len(p.segs) > 0 {
		out = append(out, Change{Segment: p.segs[len(p.segs)-1], Covered: p.covered, Start: p.start})
	}
	p.forget()
	sort.Slice(out, func(i, j int) bool { return out[i].Segment.Tgt < out[j].Segment.Tgt })
	if len(out) == 0 {
		return nil
	}
	carrier := len(out) - 1 // a removal stores no coverage: the last segment written
	for carrier >= 0 && out[carrier].Deleted {
		carrier--
	}
	for i := range out {
		if i != carrier {
			out[i].Covered = min(p.drained, p.covered)
		}
	}
	if carrier >= 0 {
		p.drained = p.covered
	}
	return out
}

// forget empties the change sets. They are dropped, not cleared:
// clearing a map costs its capacity, which a burst of changes (a restore,
// a coarsening pass) leaves large, and a partition that goes idle should
// not keep maps at all.
func (p *Partition) forget() {
	p.changed, p.deleted, p.fresh = nil, nil, nil
	p.coverCh = false
}

// find returns the index of the segment at key tgt.
func (p *Partition) find(tgt int64) (int, bool) {
	i := sort.Search(len(p.segs), func(i int) bool { return p.segs[i].Tgt >= tgt })
	return i, i < len(p.segs) && p.segs[i].Tgt == tgt
}

// Restore rebuilds a map from persisted segments (any order), the coverage
// and the start stored with them. The segments may come from several
// writers, one after the other: a writer begins at the progress its
// predecessor committed, which an index record covers, and writes its own
// records only after its predecessor wrote its last (index writes are
// fenced by the node's lease, like its data: see mirror.commit). A writer
// that crashes or is taken over leaves its copies beyond that progress; its
// successor copies them again and may itself stop before it got that far.
// Segments are taken in target order, the order their records were
// written in, and overlaps are resolved so that Translate never places a
// consumer after a record it has not read:
//
//   - a newer segment that reaches at least as far on the source as the
//     older ones supersedes them from where it starts, as AckRange does for
//     a replay: every later record was copied again, in order, after it;
//   - a newer segment that stops short of the older ones is dropped: the
//     records after it are copied only in the older segments, before it on
//     the target, and cutting those would leave them unmapped, so that a
//     translation past the newer segment would skip them. A consumer placed
//     on the older copies reads the newer ones later, some records twice.
//
// The resolution is kept as changes, so the next Drain rewrites or removes
// the persisted segments it changed. The map is unbounded until
// SetMaxSegments.
func Restore(segs []Segment, covered, start int64) *Partition {
	p := NewPartition()
	sorted := append([]Segment(nil), segs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Tgt < sorted[j].Tgt })
	for _, s := range sorted {
		if s.Len <= 0 {
			continue
		}
		if n := len(p.segs); n > 0 && s.Src < p.segs[n-1].SrcEnd() && s.SrcEnd() < p.segs[n-1].SrcEnd() {
			continue // stops short of older copies (see above)
		}
		p.add(s)
	}
	p.covered = max(covered, -1)
	p.start = max(start, -1)
	if n := len(p.segs); n > 0 && p.covered < p.segs[n-1].SrcEnd() {
		p.covered = p.segs[n-1].SrcEnd()
	}
	p.drained = p.covered // what was persisted
	p.forget()
	if slices.Equal(sorted, p.segs) {
		return p // nothing overlapped: nothing to persist
	}
	in := make(map[int64]Segment, len(sorted))
	for _, s := range sorted {
		in[s.Tgt] = s
	}
	for _, s := range p.segs {
		if in[s.Tgt] != s {
			mark(&p.changed, s.Tgt)
		}
		delete(in, s.Tgt)
	}
	for tgt := range in {
		mark(&p.deleted, tgt)
	}
	return p
}
