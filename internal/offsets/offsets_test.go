package offsets

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestTranslateTable(t *testing.T) {
	type ack struct{ src, tgt, n int64 }
	tests := []struct {
		name    string
		acks    []ack
		start   int64
		cover   int64
		u       int64
		want    int64
		wantRes Result
	}{
		{name: "empty", u: 5, want: -1, wantRes: Empty},
		{name: "inside contiguous run", acks: []ack{{100, 0, 50}}, u: 120, want: 20},
		{name: "at the first record", acks: []ack{{100, 0, 50}}, u: 100, want: 0},
		{name: "before the first record", acks: []ack{{100, 0, 50}}, u: 99, want: -1, wantRes: BeforeStart},
		{name: "between the start and the first record", start: 90, acks: []ack{{100, 0, 50}}, u: 95, want: 0},
		{name: "before the start", start: 90, acks: []ack{{100, 0, 50}}, u: 89, want: -1, wantRes: BeforeStart},
		{name: "at the end of what was copied", acks: []ack{{100, 0, 50}}, u: 150, want: 50},
		{name: "beyond what was copied", acks: []ack{{100, 0, 50}}, u: 151, want: -1, wantRes: NotCopiedYet},
		{name: "beyond copied but covered by markers", acks: []ack{{100, 0, 50}}, cover: 153, u: 153, want: 50},
		{name: "compaction hole", acks: []ack{{10, 0, 1}, {12, 1, 1}}, u: 11, want: 1},
		{name: "transaction marker gap", acks: []ack{{0, 0, 5}, {6, 5, 5}}, u: 5, want: 5},
		{name: "aborted range gap", acks: []ack{{0, 0, 5}, {20, 5, 5}}, u: 12, want: 5},
		{name: "replay: newer copy wins", acks: []ack{{0, 0, 100}, {80, 100, 50}}, u: 90, want: 110},
		{name: "replay: older part before the replay stays", acks: []ack{{0, 0, 100}, {80, 100, 50}}, u: 50, want: 50},
		{name: "replay from before the first segment", acks: []ack{{10, 0, 10}, {5, 10, 20}}, u: 12, want: 17},
		{name: "forwarded batch keeps holes", acks: []ack{{100, 40, 10}}, u: 104, want: 44},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPartition()
			if tt.start > 0 {
				p.SetStart(tt.start)
			}
			for _, a := range tt.acks {
				p.AckRange(a.src, a.tgt, a.n)
			}
			if tt.cover > 0 {
				p.Cover(tt.cover)
			}
			got, res := p.Translate(tt.u)
			if got != tt.want || res != tt.wantRes {
				t.Fatalf("Translate(%d) = %d, %v; want %d, %v (segments %v)", tt.u, got, res, tt.want, tt.wantRes, p.Segments())
			}
		})
	}
}

// entry kinds of the simulated source log.
const (
	record = iota
	hole   // removed by compaction: no record at this offset
	marker // a transaction marker: never copied
)

// simulate replicates a random source log with holes, markers and crash
// replays, and returns the offset map plus the target log (source offset of
// each target record, -1 for target holes).
func simulate(t *testing.T, rng *rand.Rand, batches bool) (src []int, tgt map[int64]int64, p *Partition, end int64) {
	t.Helper()
	n := 200 + rng.IntN(300)
	src = make([]int, n)
	for i := range src {
		switch r := rng.IntN(10); {
		case r < 2:
			src[i] = hole
		case r < 3:
			src[i] = marker
		default:
			src[i] = record
		}
	}
	p = NewPartition()
	p.SetStart(0)
	tgt = map[int64]int64{}
	var next int64      // target log end
	var committed int64 // progress a restart resumes from
	pos := int64(0)
	for pos < int64(n) {
		if rng.IntN(40) == 0 && committed < pos {
			// crash: resume from the last committed progress
			pos = committed + rng.Int64N(pos-committed+1)
			committed = pos
		}
		if batches {
			// forward a batch of up to 8 offsets, holes preserved on the target
			size := min(int64(1+rng.IntN(8)), int64(n)-pos)
			// a batch never spans a marker: markers are batches of their own
			if src[pos] == marker {
				p.Cover(pos + 1)
				pos++
				continue
			}
			k := int64(0)
			for k < size && src[pos+k] != marker {
				k++
			}
			base := next
			for i := int64(0); i < k; i++ {
				if src[pos+i] == record {
					tgt[base+i] = pos + i
				}
			}
			p.AckRange(pos, base, k)
			next = base + k
			pos += k
		} else {
			switch src[pos] {
			case record:
				tgt[next] = pos
				p.Ack(pos, next)
				next++
			case marker:
				p.Cover(pos + 1)
			}
			pos++
		}
		if rng.IntN(5) == 0 {
			committed = pos
		}
	}
	return src, tgt, p, next
}

// TestTranslateIsExact checks, for every source offset of many random
// histories, that a target consumer starting at the translated offset reads
// first exactly the record a source consumer would read next, and then
// every later source record.
func TestTranslateIsExact(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		for _, batches := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(seed, 7))
			src, tgt, p, end := simulate(t, rng, batches)
			for u := int64(0); u <= p.Covered(); u++ {
				got, res := p.Translate(u)
				if res != Exact {
					t.Fatalf("seed %d batches %v: Translate(%d) = %v", seed, batches, u, res)
				}
				// what a source consumer reads next from u
				want := int64(-1)
				for o := u; o < int64(len(src)); o++ {
					if src[o] == record {
						want = o
						break
					}
				}
				// what a target consumer reads from got
				var read []int64
				for o := got; o < end; o++ {
					if s, ok := tgt[o]; ok {
						read = append(read, s)
					}
				}
				if want < 0 {
					if len(read) != 0 {
						t.Fatalf("seed %d: u=%d nothing left on source, target reads %v", seed, u, read)
					}
					continue
				}
				if len(read) == 0 || read[0] != want {
					t.Fatalf("seed %d batches %v: Translate(%d)=%d reads %v first, want source %d (segments %v)", seed, batches, u, got, read[:min(3, len(read))], want, p.Segments())
				}
				for o := want; o < int64(len(src)); o++ {
					if src[o] == record && !slices.Contains(read, o) {
						t.Fatalf("seed %d: from Translate(%d)=%d, source record %d is never read", seed, u, got, o)
					}
				}
			}

		}
	}
}

func TestDrainAndRestore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	_, _, p, _ := simulate(t, rng, false)
	// persist through a compacted "topic": latest change per Tgt wins
	store := map[int64]Change{}
	for _, c := range p.Drain() {
		if c.Deleted {
			delete(store, c.Segment.Tgt)
		} else {
			store[c.Segment.Tgt] = c
		}
	}
	var segs []Segment
	var covered, start int64 = -1, -1
	for _, c := range store {
		segs = append(segs, c.Segment)
		covered = max(covered, c.Covered)
		start = c.Start
	}
	q := Restore(segs, covered, start)
	if !slices.Equal(p.Segments(), q.Segments()) || p.Covered() != q.Covered() || q.Start() != 0 {
		t.Fatalf("restored %v cov %d, want %v cov %d", q.Segments(), q.Covered(), p.Segments(), p.Covered())
	}
	if len(p.Drain()) != 0 {
		t.Fatal("second drain not empty")
	}
	p.Cover(p.Covered() + 3)
	if ch := p.Drain(); len(ch) != 1 || ch[0].Covered != p.Covered() {
		t.Fatalf("coverage change not drained: %v", ch)
	}
}

func TestDrainAcrossReplay(t *testing.T) {
	p := NewPartition()
	p.AckRange(0, 0, 10)
	p.AckRange(10, 10, 10)
	p.Drain()
	p.AckRange(5, 20, 3) // replay from 5: segment [0,20) is cut to [0,5)
	got := p.Drain()
	want := []Change{
		{Segment: Segment{Src: 0, Tgt: 0, Len: 5}, Covered: 8, Start: -1},
		{Segment: Segment{Src: 5, Tgt: 20, Len: 3}, Covered: 8, Start: -1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

func TestPrune(t *testing.T) {
	p := NewPartition()
	p.AckRange(0, 0, 10)
	p.AckRange(12, 10, 10)
	p.AckRange(30, 20, 10)
	p.Drain()
	if n := p.Prune(22); n != 2 {
		t.Fatalf("pruned %d", n)
	}
	if n := p.Prune(1000); n != 0 {
		t.Fatalf("pruned the last segment")
	}
	ch := p.Drain()
	if len(ch) != 2 || !ch[0].Deleted || !ch[1].Deleted {
		t.Fatalf("drain %v", ch)
	}
}

func TestSyncEmitterMM2Rules(t *testing.T) {
	e := NewSyncEmitter(100)
	e.Ack(0, 0) // first record: pending
	for i := int64(1); i < 50; i++ {
		e.Ack(i, i)
	}
	if got := e.Flush(); !slices.Equal(got, []Sync{{0, 0}, {49, 49}}) {
		t.Fatalf("got %v", got)
	}
	e.Ack(51, 50) // upstream gap
	if got := e.Flush(); !slices.Equal(got, []Sync{{51, 50}}) {
		t.Fatalf("gap: %v", got)
	}
	// offset.lag.max: next trigger when down-(50+1) >= 100, i.e. down 151
	for i := int64(52); i <= 152; i++ {
		e.Ack(i, i-1)
	}
	if got := e.Flush(); !slices.Equal(got, []Sync{{152, 151}}) {
		t.Fatalf("lag: %v", got)
	}
	e.Ack(153, 10) // target went backwards
	if got := e.Flush(); !slices.Equal(got, []Sync{{153, 10}}) {
		t.Fatalf("backwards: %v", got)
	}
}

func TestSyncEmitterRangeMatchesRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 500; trial++ {
		lag := int64(rng.IntN(20))
		a, b := NewSyncEmitter(lag), NewSyncEmitter(lag)
		up, down := int64(rng.IntN(5)), int64(rng.IntN(5))
		for k := 0; k < 10; k++ {
			n := int64(1 + rng.IntN(60))
			for i := int64(0); i < n; i++ {
				a.Ack(up+i, down+i)
			}
			b.AckRange(up, down, n)
			up += n + int64(rng.IntN(2))
			down += n
			if rng.IntN(3) == 0 {
				if ga, gb := a.Flush(), b.Flush(); !slices.Equal(ga, gb) {
					t.Fatalf("trial %d lag %d: records %v range %v", trial, lag, ga, gb)
				}
			}
		}
	}
}
