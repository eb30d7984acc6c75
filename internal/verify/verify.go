// Package verify compares the records of a source partition with those of
// its replica: nothing lost, nothing reordered, nothing that is not in the
// source, and every copy identical in key, value, headers and timestamp.
// Duplicates are counted; an at-least-once replay may only re-send a
// contiguous run of records that were already copied.
package verify

import (
	"bytes"
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
	Problems   []string
}

// OK reports whether the replica is complete, in order and has no strangers.
// Duplicates are allowed; check Duplicates separately.
func (r Report) OK() bool { return r.Lost == 0 && r.Phantoms == 0 && r.Reordered == 0 }

func (r Report) String() string {
	return fmt.Sprintf("partition %d: source %d, target %d, lost %d, duplicates %d, phantoms %d, reordered %d %v",
		r.Partition, r.Source, r.Target, r.Lost, r.Duplicates, r.Phantoms, r.Reordered, r.Problems)
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
	rep := Report{Partition: partition, Source: len(src), Target: len(dst)}
	seed := maphash.MakeSeed()
	index := make(map[uint64][]int, len(src))
	for i, r := range src {
		h := hash(seed, r)
		index[h] = append(index[h], i)
	}
	copies := make([]int, len(src))
	next := 0    // the source record expected next in order
	replay := -1 // during a replay, the source record expected next; -1 otherwise
	for j, r := range dst {
		i := find(index[hash(seed, r)], src, r, next, replay)
		switch {
		case i < 0:
			rep.Phantoms++
			rep.problem("target record %d (offset %d) matches no source record", j, r.Offset)
		case i == next:
			next++
			replay = -1
		case i > next:
			rep.Reordered++
			rep.problem("target record %d (offset %d) is source record %d but source record %d (offset %d) was expected", j, r.Offset, i, next, src[next].Offset)
			next = i + 1
			replay = -1
		default: // i < next: a copy of something already copied
			if replay >= 0 && i != replay {
				rep.Reordered++
				rep.problem("target record %d (offset %d) breaks a replay: source record %d, expected %d", j, r.Offset, i, replay)
			}
			replay = i + 1
			if replay == next {
				replay = -1
			}
		}
		if i >= 0 {
			copies[i]++
		}
	}
	for i, n := range copies {
		switch {
		case n == 0:
			rep.Lost++
			rep.problem("source record %d (offset %d) was not copied", i, src[i].Offset)
		case n > 1:
			rep.Duplicates += n - 1
		}
	}
	return rep
}

// find returns the source index of r: the candidate the order expects
// (replay position or next), else the first at or after next, else the
// last before it; -1 when r matches no source record.
func find(cands []int, src []*kgo.Record, r *kgo.Record, next, replay int) int {
	var equal []int
	for _, c := range cands {
		if Same(src[c], r) {
			equal = append(equal, c)
		}
	}
	if len(equal) == 0 {
		return -1
	}
	for _, want := range []int{replay, next} {
		for _, c := range equal {
			if want >= 0 && c == want {
				return c
			}
		}
	}
	for _, c := range equal {
		if c >= next {
			return c
		}
	}
	return equal[len(equal)-1]
}

func hash(seed maphash.Seed, r *kgo.Record) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.Write(r.Key)
	h.WriteByte(0)
	h.Write(r.Value)
	return h.Sum64()
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
