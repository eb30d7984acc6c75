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
// record; between Start (where replication of the partition began) and the
// first segment, the first segment's start. Offsets before Start (or before
// the first segment when Start is unknown) or beyond Covered have no exact
// answer and are reported as such, never guessed.
package offsets

import (
	"fmt"
	"sort"
)

// Segment maps source offsets [Src, Src+Len) to target offsets [Tgt, Tgt+Len).
type Segment struct {
	Src int64 `json:"src"`
	Tgt int64 `json:"tgt"`
	Len int64 `json:"len"`
}

// SrcEnd is the source offset after the segment.
func (s Segment) SrcEnd() int64 { return s.Src + s.Len }

// TgtEnd is the target offset after the segment.
func (s Segment) TgtEnd() int64 { return s.Tgt + s.Len }

func (s Segment) String() string {
	return fmt.Sprintf("[%d,%d)->[%d,%d)", s.Src, s.SrcEnd(), s.Tgt, s.TgtEnd())
}

// Partition is the offset map of one partition. It is not safe for
// concurrent use; the owner serialises access.
type Partition struct {
	segs []Segment
	// covered is the source offset below which every offset is accounted
	// for: copied (in a segment) or not copyable. -1 when unknown.
	covered int64
	// start is the source offset replication of the partition began at:
	// offsets from start to the first segment hold nothing to copy. -1
	// when unknown.
	start int64

	// Changes since the last Drain, for persistence.
	changed map[int64]bool // by Tgt: segments written or shortened
	deleted map[int64]bool // by Tgt: segments removed
	coverCh bool
}

// NewPartition returns an empty map.
func NewPartition() *Partition {
	return &Partition{covered: -1, start: -1, changed: map[int64]bool{}, deleted: map[int64]bool{}}
}

// Segments returns a copy of the segments in order.
func (p *Partition) Segments() []Segment { return append([]Segment(nil), p.segs...) }

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
	if k := len(p.segs); k > 0 {
		last := &p.segs[k-1]
		switch {
		case src == last.SrcEnd() && tgt == last.TgtEnd():
			last.Len += n
			p.changed[last.Tgt] = true
			p.cover(src + n)
			return
		case src < last.SrcEnd() || tgt < last.TgtEnd():
			p.cut(src, tgt)
		}
	}
	p.segs = append(p.segs, Segment{Src: src, Tgt: tgt, Len: n})
	p.changed[tgt] = true
	delete(p.deleted, tgt)
	p.cover(src + n)
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
// or after src, and target offsets at or after tgt.
func (p *Partition) cut(src, tgt int64) {
	keep := p.segs[:0]
	for _, s := range p.segs {
		n := s.Len
		if s.SrcEnd() > src {
			n = min(n, src-s.Src)
		}
		if s.TgtEnd() > tgt {
			n = min(n, tgt-s.Tgt)
		}
		switch {
		case n <= 0:
			p.deleted[s.Tgt] = true
			delete(p.changed, s.Tgt)
		case n < s.Len:
			s.Len = n
			p.changed[s.Tgt] = true
			keep = append(keep, s)
		default:
			keep = append(keep, s)
		}
	}
	p.segs = keep
	if p.covered > src {
		p.covered = src
		p.coverCh = true
	}
}

// Result explains a translation.
type Result int

// Translation outcomes.
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
)

func (r Result) String() string {
	switch r {
	case Exact:
		return "exact"
	case BeforeStart:
		return "before the first replicated record"
	case NotCopiedYet:
		return "not replicated yet"
	case OtherIncarnation:
		return "the index holds another incarnation of the source topic"
	case UnknownTopic:
		return "the source topic is unknown"
	default:
		return "nothing replicated"
	}
}

// Translate returns the target offset a consumer must start at to read
// first exactly the record a source consumer at offset u reads next.
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
		if u >= s.Src {
			return s.Tgt + (u - s.Src), Exact
		}
		return s.Tgt, Exact
	}
	last := p.segs[len(p.segs)-1]
	if u <= p.covered {
		return last.TgtEnd(), Exact
	}
	return -1, NotCopiedYet
}

// Prune drops segments that end at or below the source log start: no
// consumer position can need them any more. The last segment is kept so
// the map still knows where the target stands.
func (p *Partition) Prune(logStart int64) int {
	n := 0
	for len(p.segs) > 1 && p.segs[0].SrcEnd() <= logStart {
		p.deleted[p.segs[0].Tgt] = true
		delete(p.changed, p.segs[0].Tgt)
		p.segs = p.segs[1:]
		n++
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
// coverage is persisted.
func (p *Partition) Drain() []Change {
	var out []Change
	for tgt := range p.deleted {
		out = append(out, Change{Segment: Segment{Tgt: tgt}, Deleted: true, Covered: p.covered, Start: p.start})
	}
	for _, s := range p.segs {
		if p.changed[s.Tgt] {
			out = append(out, Change{Segment: s, Covered: p.covered, Start: p.start})
		}
	}
	if len(out) == 0 && p.coverCh && len(p.segs) > 0 {
		out = append(out, Change{Segment: p.segs[len(p.segs)-1], Covered: p.covered, Start: p.start})
	}
	clear(p.changed)
	clear(p.deleted)
	p.coverCh = false
	sort.SliceStable(out, func(i, j int) bool { return out[i].Segment.Tgt < out[j].Segment.Tgt })
	return out
}

// Restore rebuilds a map from persisted segments (any order), the coverage
// and the start stored with them. Overlaps left by an interrupted writer
// are resolved the way AckRange would have: later target ranges win.
func Restore(segs []Segment, covered, start int64) *Partition {
	p := NewPartition()
	sorted := append([]Segment(nil), segs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Tgt < sorted[j].Tgt })
	for _, s := range sorted {
		p.AckRange(s.Src, s.Tgt, s.Len)
	}
	p.covered = max(covered, -1)
	p.start = max(start, -1)
	if n := len(p.segs); n > 0 && p.covered < p.segs[n-1].SrcEnd() {
		p.covered = p.segs[n-1].SrcEnd()
	}
	clear(p.changed)
	clear(p.deleted)
	p.coverCh = false
	return p
}
