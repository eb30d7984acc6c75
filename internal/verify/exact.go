package verify

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/offsets"
)

// Finding kinds, each one a way a copy can be wrong.
const (
	Missing   = "missing"   // a copied source record is not at its target offset, which holds nothing
	Changed   = "changed"   // its target offset holds a record that differs and matches no other
	Reordered = "reordered" // its target offset holds the copy of another source record
	Extra     = "extra"     // a target record matches no source record
	Duplicate = "duplicate" // a target record is another copy of a source record (an at-least-once replay)
)

// Finding is one wrong record, with its offsets on both sides (-1: none).
type Finding struct {
	Kind   string `json:"kind"`
	Source int64  `json:"source_offset"`
	Target int64  `json:"target_offset"`
	Detail string `json:"detail"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s: source offset %s, target offset %s: %s", f.Kind, offsetText(f.Source), offsetText(f.Target), f.Detail)
}

func offsetText(o int64) string {
	if o < 0 {
		return "none"
	}
	return fmt.Sprint(o)
}

// MaxFindings bounds the findings a PartitionReport lists; its counts are
// exact whatever their number.
const MaxFindings = 20

// PartitionReport is the outcome of an exact check of one partition.
type PartitionReport struct {
	Partition int32 `json:"partition"`
	// From is the first source offset checked; UpTo the source offset the
	// check is complete to: every source record in [From, UpTo) was looked
	// for at the target offset the index gives it.
	From int64 `json:"from"`
	UpTo int64 `json:"up_to"`
	// TargetFrom and TargetTo bound the target offsets read.
	TargetFrom int64 `json:"target_from"`
	TargetTo   int64 `json:"target_to"`
	Records    int64 `json:"records"` // source records in [From, UpTo)
	Matched    int64 `json:"matched"` // of those, found exactly where the index says
	// NotCopied counts source records at or past UpTo: the flow has not
	// copied them yet (lag), so they are not checked.
	NotCopied  int64 `json:"not_copied"`
	Missing    int64 `json:"missing"`
	Changed    int64 `json:"changed"`
	Reordered  int64 `json:"reordered"`
	Extra      int64 `json:"extra"`
	Duplicates int64 `json:"duplicates"`
	// Inexact counts source records in a coarse part of the index (see
	// offsets.Rounded), found by content rather than at a known offset.
	Inexact int64 `json:"inexact"`
	// Returned counts source records an active-active flow left out on
	// purpose: its reverse flow wrote them, so they came from the target.
	Returned int64     `json:"returned,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
}

// OK reports whether the copy is complete and true up to UpTo. Duplicates
// are allowed (an at-least-once flow re-sends after a fault); they are
// counted.
func (r PartitionReport) OK() bool {
	return r.Missing == 0 && r.Changed == 0 && r.Reordered == 0 && r.Extra == 0
}

func (r *PartitionReport) find(kind string, src, tgt int64, format string, args ...any) {
	switch kind {
	case Missing:
		r.Missing++
	case Changed:
		r.Changed++
	case Reordered:
		r.Reordered++
	case Extra:
		r.Extra++
	case Duplicate:
		r.Duplicates++
	}
	if len(r.Findings) < MaxFindings {
		r.Findings = append(r.Findings, Finding{Kind: kind, Source: src, Target: tgt, Detail: fmt.Sprintf(format, args...)})
	}
}

// print is what the check compares of a record, one hash per part so that
// a change can be named.
type print struct {
	key, value, headers uint64
	timestamp           int64
}

func (p print) full() uint64 {
	var b [32]byte
	binary.LittleEndian.PutUint64(b[0:], p.key)
	binary.LittleEndian.PutUint64(b[8:], p.value)
	binary.LittleEndian.PutUint64(b[16:], p.headers)
	binary.LittleEndian.PutUint64(b[24:], uint64(p.timestamp))
	return maphash.Bytes(fixedSeed, b[:])
}

// diff names the parts in which q differs from p.
func (p print) diff(q print) string {
	var parts []string
	if p.key != q.key {
		parts = append(parts, "key")
	}
	if p.value != q.value {
		parts = append(parts, "value")
	}
	if p.headers != q.headers {
		parts = append(parts, "headers")
	}
	if p.timestamp != q.timestamp {
		parts = append(parts, fmt.Sprintf("timestamp (%d ms on the source, %d on the target)", p.timestamp, q.timestamp))
	}
	return strings.Join(parts, ", ")
}

var fixedSeed = maphash.MakeSeed()

// state of a source record during an exact check.
const (
	unseen  uint8 = iota // nothing seen at its target offset yet
	matched              // its copy is where the index says
	wrong                // its target offset holds something else (reported there)
)

// Exact checks a partition's copy through the flow's offset index: the
// index says at which target offset each source record was written, and
// Exact checks that exactly that record is there, and that every other
// target record in the range is a duplicate of a copied record, never a
// stranger. It keeps about 60 bytes per source record checked.
//
// Give it every source record from the first offset to check with Source,
// in offset order, then call TargetRange for the target offsets to read and
// give it those target records with Target, in offset order.
type Exact struct {
	segs    []offsets.Segment
	covered int64
	seed    maphash.Seed

	offs   []int64
	prints []print
	state  []uint8
	expect map[int64]int32    // target offset -> source position, for exact segments
	coarse map[int32]bool     // source positions in a coarse segment: found by content
	byFull map[uint64][]int32 // content hash -> source positions with it
	rep    PartitionReport
	ended  bool
	// returns: a record in a gap of the index was left out on purpose
	// (active-active), not lost.
	returns bool
}

// NewExact returns a check of partition whose index holds segs, covering
// source offsets below covered (offsets.Partition's Segments and Covered).
// Source records below from are not checked. With returns (an
// active-active flow), a source record the index accounts for without a
// target offset was left out on purpose, as its reverse flow wrote it;
// otherwise it is missing.
func NewExact(partition int32, segs []offsets.Segment, covered, from int64, returns bool) *Exact {
	upTo := max(covered, from)
	if covered < 0 {
		upTo = from // nothing accounted for: nothing to check
	}
	return &Exact{
		segs: segs, covered: covered, seed: maphash.MakeSeed(),
		expect: map[int64]int32{}, coarse: map[int32]bool{}, byFull: map[uint64][]int32{},
		rep:     PartitionReport{Partition: partition, From: from, UpTo: upTo, TargetFrom: -1, TargetTo: -1},
		returns: returns,
	}
}

func (e *Exact) print(r *kgo.Record) print {
	var h maphash.Hash
	h.SetSeed(e.seed)
	p := print{timestamp: r.Timestamp.UnixMilli()}
	writeBytes(&h, r.Key)
	p.key = h.Sum64()
	h.Reset()
	writeBytes(&h, r.Value)
	p.value = h.Sum64()
	h.Reset()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(r.Headers)))
	h.Write(n[:])
	for _, hd := range r.Headers {
		writeBytes(&h, []byte(hd.Key))
		writeBytes(&h, hd.Value)
	}
	p.headers = h.Sum64()
	return p
}

// segment returns the index of the segment holding source offset s, or -1.
func (e *Exact) segment(s int64) int {
	i := sort.Search(len(e.segs), func(i int) bool { return e.segs[i].SrcEnd() > s })
	if i < len(e.segs) && e.segs[i].Src <= s {
		return i
	}
	return -1
}

// Source adds the next source record.
func (e *Exact) Source(r *kgo.Record) {
	if e.ended {
		panic("verify: Exact.Source after Target")
	}
	s := r.Offset
	if s < e.rep.From {
		return
	}
	if s >= e.rep.UpTo {
		e.rep.NotCopied++
		return
	}
	pos := int32(len(e.offs))
	p := e.print(r)
	e.offs = append(e.offs, s)
	e.prints = append(e.prints, p)
	e.state = append(e.state, unseen)
	e.byFull[p.full()] = append(e.byFull[p.full()], pos)
	e.rep.Records++
	switch i := e.segment(s); {
	case i < 0 && e.returns:
		e.state[pos] = matched
		e.rep.Returned++
	case i < 0:
		e.state[pos] = wrong
		e.rep.find(Missing, s, -1, "the offset index maps no target offset to this record: it was never copied")
	case e.segs[i].Coarse():
		e.coarse[pos] = true
		e.rep.Inexact++
	default:
		e.expect[s-e.segs[i].Src+e.segs[i].Tgt] = pos
	}
}

// TargetRange returns the target offsets [from, to) that hold the copies of
// the source records checked, and every other record in between.
func (e *Exact) TargetRange() (from, to int64) {
	e.ended = true
	from, to = -1, -1
	for _, s := range e.segs {
		if s.SrcEnd() <= e.rep.From || s.Src >= e.rep.UpTo {
			continue
		}
		if from < 0 {
			from = s.Tgt
			if !s.Coarse() && e.rep.From > s.Src {
				from = s.Tgt + e.rep.From - s.Src
			}
		}
		to = s.TgtEnd()
		if !s.Coarse() && e.rep.UpTo < s.SrcEnd() {
			to = s.Tgt + e.rep.UpTo - s.Src
		}
	}
	if from < 0 {
		return 0, 0
	}
	e.rep.TargetFrom, e.rep.TargetTo = from, to
	return from, to
}

// Target checks the next target record in the range TargetRange gave.
func (e *Exact) Target(r *kgo.Record) {
	e.ended = true
	t := r.Offset
	if t < e.rep.TargetFrom || t >= e.rep.TargetTo {
		return
	}
	p := e.print(r)
	same := e.byFull[p.full()]
	if pos, ok := e.expect[t]; ok {
		delete(e.expect, t)
		want := e.prints[pos]
		switch {
		case want == p:
			e.state[pos] = matched
			e.rep.Matched++
		case len(same) > 0:
			e.state[pos] = wrong
			e.rep.find(Reordered, e.offs[pos], t, "the target holds the copy of source offset %d here", e.offs[same[0]])
		default:
			e.state[pos] = wrong
			e.rep.find(Changed, e.offs[pos], t, "the copy differs in %s", want.diff(p))
		}
		return
	}
	// No source record belongs here: a copy that the index superseded
	// (a replay), a copy located by content (coarse index), or a stranger.
	for _, pos := range same {
		if e.coarse[pos] && e.state[pos] == unseen {
			e.state[pos] = matched
			e.rep.Matched++
			return
		}
	}
	if len(same) > 0 {
		e.rep.find(Duplicate, e.offs[same[0]], t, "another copy of source offset %d", e.offs[same[0]])
		return
	}
	e.rep.find(Extra, -1, t, "matches no source record")
}

// Report returns the outcome: every source record whose copy was not seen
// by now counts as missing.
func (e *Exact) Report() PartitionReport {
	rep := e.rep
	rep.Findings = append([]Finding(nil), rep.Findings...)
	var gone []int32
	for _, pos := range e.expect {
		gone = append(gone, pos)
	}
	for pos := range e.coarse {
		if e.state[pos] == unseen {
			gone = append(gone, pos)
		}
	}
	for _, pos := range sortedPositions(gone) {
		t := int64(-1)
		if i := e.segment(e.offs[pos]); i >= 0 && !e.segs[i].Coarse() {
			t = e.offs[pos] - e.segs[i].Src + e.segs[i].Tgt
		}
		if t >= 0 {
			rep.find(Missing, e.offs[pos], t, "the target holds no record at the offset the index gives")
		} else {
			rep.find(Missing, e.offs[pos], -1, "no copy found in the coarse part of the index")
		}
	}
	return rep
}

func sortedPositions(ps []int32) []int32 {
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}
