// Package verify compares the records of a source partition with those of
// its replica: nothing lost, nothing reordered, nothing that is not in the
// source, and every copy identical in key, value, headers and timestamp.
// Duplicates are counted; an at-least-once replay may only re-send a
// contiguous run of records that were already copied.
package verify

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Report is the outcome for one partition.
type Report struct {
	Partition  int32
	Source     int // records in the source log
	Target     int // records in the target log
	Lost       int // source records with no copy
	Duplicates int // copies beyond the first of a source record
	Phantoms   int // target records that match no source record
	Reordered  int // copies that appear after a later source record's copy, outside a replay
	Replays    int // runs of copies of records copied before: each a re-send after a fault
	Problems   []string
}

// OK reports whether the replica is complete, in order and has no strangers.
// Duplicates are allowed; check Duplicates separately.
func (r Report) OK() bool { return r.Lost == 0 && r.Phantoms == 0 && r.Reordered == 0 }

func (r Report) String() string {
	return fmt.Sprintf("partition %d: source %d, target %d, lost %d, duplicates %d (%d replays), phantoms %d, reordered %d %v",
		r.Partition, r.Source, r.Target, r.Lost, r.Duplicates, r.Replays, r.Phantoms, r.Reordered, r.Problems)
}

const maxProblems = 5

func (r *Report) problem(format string, args ...any) {
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// Compare checks dst against src for one partition. Records are matched by
// content (key, value, headers, timestamp), so the source offsets need not
// survive; identical source records are matched in order.
func Compare(partition int32, src, dst []*kgo.Record) Report {
	w := newWalk(partition, len(src))
	seed := maphash.MakeSeed()
	index := make(map[uint64][]int, len(src))
	for i, r := range src {
		h := hash(seed, r)
		index[h] = append(index[h], i)
		w.source(r.Offset)
	}
	var equal []int
	for _, r := range dst {
		equal = equal[:0]
		for _, c := range index[hash(seed, r)] {
			if Same(src[c], r) {
				equal = append(equal, c)
			}
		}
		w.target(w.choose(equal), r.Offset)
	}
	return w.report()
}

// Checker is Compare for partitions too large to hold in memory: it keeps a
// 64-bit hash of each source record's content (key, value, headers,
// timestamp) rather than the record, about 50 bytes per source record, and
// matches target records by that hash. Two different records with the same
// hash, which happens with a probability of about n²/2⁶⁵ for n records, would
// count as one.
//
// Give it every source record with Source, in offset order, then every target
// record with Target, in offset order; Report returns the outcome so far.
type Checker struct {
	w     *walk
	seed  maphash.Seed
	first map[uint64]int32 // content hash -> first source position with it
	more  []int32          // source position -> next position with the same hash, or -1
	last  map[uint64]int32 // content hash -> last source position with it, while adding
	cands []int
}

// NewChecker returns a Checker for one partition.
func NewChecker(partition int32) *Checker {
	return &Checker{w: newWalk(partition, 0), seed: maphash.MakeSeed(), first: map[uint64]int32{}, last: map[uint64]int32{}}
}

// Source adds the next source record. It panics once Target was called.
func (c *Checker) Source(r *kgo.Record) {
	if c.last == nil {
		panic("verify: Checker.Source after Target")
	}
	h := fullHash(c.seed, r)
	pos := int32(len(c.more))
	c.more = append(c.more, -1)
	if prev, ok := c.last[h]; ok {
		c.more[prev] = pos
	} else {
		c.first[h] = pos
	}
	c.last[h] = pos
	c.w.source(r.Offset)
}

// Target checks the next target record.
func (c *Checker) Target(r *kgo.Record) {
	c.last = nil
	c.cands = c.cands[:0]
	pos, ok := c.first[fullHash(c.seed, r)]
	for ok && pos >= 0 {
		c.cands = append(c.cands, int(pos))
		pos = c.more[pos]
	}
	c.w.target(c.w.choose(c.cands), r.Offset)
}

// Report returns the outcome for the records given so far: a source record
// not seen on the target yet counts as lost.
func (c *Checker) Report() Report { return c.w.report() }

// walk follows the target records through the source positions they match.
type walk struct {
	rep     Report
	offsets []int64 // source position -> source offset
	copies  []int32 // source position -> copies seen on the target
	next    int     // the source position expected next in order
	replay  int     // during a replay, the source position expected next; -1 otherwise
	from    int     // during a replay, the source position it began at
	j       int     // target records seen
}

func newWalk(partition int32, n int) *walk {
	return &walk{rep: Report{Partition: partition}, offsets: make([]int64, 0, n), copies: make([]int32, 0, n), replay: -1}
}

func (w *walk) source(offset int64) {
	w.offsets = append(w.offsets, offset)
	w.copies = append(w.copies, 0)
}

// choose returns the source position of a target record among equal, the
// source positions whose content it has (ascending): the one the order
// expects (replay position or next), else the first at or after next, else
// the last before it; -1 when there is none.
func (w *walk) choose(equal []int) int {
	if len(equal) == 0 {
		return -1
	}
	for _, want := range []int{w.replay, w.next} {
		for _, c := range equal {
			if want >= 0 && c == want {
				return c
			}
		}
	}
	for _, c := range equal {
		if c >= w.next {
			return c
		}
	}
	return equal[len(equal)-1]
}

// target records that target record number w.j, at offset, is source position i
// (-1: none).
func (w *walk) target(i int, offset int64) {
	rep, j := &w.rep, w.j
	w.j++
	switch {
	case i < 0:
		rep.Phantoms++
		rep.problem("target record %d (offset %d) matches no source record", j, offset)
	case i == w.next:
		w.next++
		w.replay = -1
	case i > w.next:
		rep.Reordered++
		rep.problem("target record %d (offset %d) is source record %d but source record %d (offset %d) was expected", j, offset, i, w.next, w.offsets[w.next])
		w.next = i + 1
		w.replay = -1
	default: // i < next: a copy of something already copied
		switch {
		case i == w.replay: // the replay goes on
		case w.replay < 0 || i >= w.from && i < w.replay:
			// A replay begins; inside a running one when its writer was cut
			// short and the next resumed from progress committed within it.
			// Progress never moves back, so no replay begins before the one
			// it cuts.
			rep.Replays++
			w.from = i
		default:
			rep.Reordered++
			rep.problem("target record %d (offset %d) breaks a replay: source record %d, expected %d", j, offset, i, w.replay)
		}
		w.replay = i + 1
		if w.replay == w.next {
			w.replay = -1
		}
	}
	if i >= 0 {
		w.copies[i]++
	}
}

func (w *walk) report() Report {
	rep := w.rep
	rep.Problems = append([]string(nil), rep.Problems...)
	rep.Source, rep.Target = len(w.offsets), w.j
	for i, n := range w.copies {
		switch {
		case n == 0:
			rep.Lost++
			rep.problem("source record %d (offset %d) was not copied", i, w.offsets[i])
		case n > 1:
			rep.Duplicates += int(n - 1)
		}
	}
	return rep
}

func hash(seed maphash.Seed, r *kgo.Record) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.Write(r.Key)
	h.WriteByte(0)
	h.Write(r.Value)
	return h.Sum64()
}

// fullHash hashes everything Same compares, with lengths and nil-ness, so
// that records Same tells apart hash apart (but for collisions).
func fullHash(seed maphash.Seed, r *kgo.Record) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	writeBytes(&h, r.Key)
	writeBytes(&h, r.Value)
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(r.Timestamp.UnixMilli()))
	h.Write(n[:])
	binary.LittleEndian.PutUint64(n[:], uint64(len(r.Headers)))
	h.Write(n[:])
	for _, hd := range r.Headers {
		writeBytes(&h, []byte(hd.Key))
		writeBytes(&h, hd.Value)
	}
	return h.Sum64()
}

func writeBytes(h *maphash.Hash, b []byte) {
	var n [8]byte
	l := uint64(len(b)) + 1
	if b == nil {
		l = 0
	}
	binary.LittleEndian.PutUint64(n[:], l)
	h.Write(n[:])
	h.Write(b)
}

// Same reports whether two records carry the same key, value, headers (in
// order) and timestamp. A nil key or value differs from an empty one.
func Same(a, b *kgo.Record) bool {
	if !sameBytes(a.Key, b.Key) || !sameBytes(a.Value, b.Value) || !a.Timestamp.Truncate(time.Millisecond).Equal(b.Timestamp.Truncate(time.Millisecond)) {
		return false
	}
	if len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !sameBytes(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}

func sameBytes(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}
