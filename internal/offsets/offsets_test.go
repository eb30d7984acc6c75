package offsets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
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
// replays into each of ps (after calling step, if not nil, after every
// acknowledgement), and returns the source log and the target log (source
// offset of each target record) up to its end.
func simulate(t *testing.T, rng *rand.Rand, batches bool, step func(), ps ...*Partition) (src []int, tgt map[int64]int64, end int64) {
	t.Helper()
	each := func(f func(p *Partition)) {
		for _, p := range ps {
			f(p)
		}
		if step != nil {
			step()
		}
	}
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
	each(func(p *Partition) { p.SetStart(0) })
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
				at := pos + 1
				each(func(p *Partition) { p.Cover(at) })
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
			at := pos
			each(func(p *Partition) { p.AckRange(at, base, k) })
			next = base + k
			pos += k
		} else {
			at, to := pos, next
			switch src[pos] {
			case record:
				tgt[next] = pos
				each(func(p *Partition) { p.Ack(at, to) })
				next++
			case marker:
				each(func(p *Partition) { p.Cover(at + 1) })
			}
			pos++
		}
		if rng.IntN(5) == 0 {
			committed = pos
		}
	}
	return src, tgt, next
}

// oracle answers, for a simulated history, what consumers read.
type oracle struct {
	nextSrc []int64 // first source record at or after u, -1 if none
	minLast []int64 // over source records at or after u: the least of their last target offsets (-1: one was never copied)
	firstAt []int64 // source offset of the first target record at or after t, -1 if none
}

func newOracle(src []int, tgt map[int64]int64, end int64) *oracle {
	n := int64(len(src))
	last := make([]int64, n)
	for i := range last {
		last[i] = -1
	}
	for t, s := range tgt {
		last[s] = max(last[s], t)
	}
	o := &oracle{nextSrc: make([]int64, n+1), minLast: make([]int64, n+1), firstAt: make([]int64, end+1)}
	o.nextSrc[n], o.minLast[n] = -1, math.MaxInt64
	for u := n - 1; u >= 0; u-- {
		o.nextSrc[u], o.minLast[u] = o.nextSrc[u+1], o.minLast[u+1]
		if src[u] == record {
			o.nextSrc[u], o.minLast[u] = u, min(o.minLast[u], last[u])
		}
	}
	o.firstAt[end] = -1
	for t := end - 1; t >= 0; t-- {
		o.firstAt[t] = o.firstAt[t+1]
		if s, ok := tgt[t]; ok {
			o.firstAt[t] = s
		}
	}
	return o
}

// neverSkips checks that a target consumer starting at got reads every
// source record from u on, and first exactly the next one when exact.
func (o *oracle) neverSkips(u, got int64, exact bool) error {
	if got < 0 || got >= int64(len(o.firstAt)) {
		return fmt.Errorf("Translate(%d)=%d is outside the target log [0,%d]", u, got, len(o.firstAt)-1)
	}
	want, first := o.nextSrc[u], o.firstAt[got]
	switch {
	case want < 0 && exact && first >= 0:
		return fmt.Errorf("u=%d: nothing left on the source, the target from %d reads %d first", u, got, first)
	case want < 0:
		return nil
	case exact && first != want:
		return fmt.Errorf("Translate(%d)=%d reads source %d first, want %d", u, got, first, want)
	case o.minLast[want] < got:
		return fmt.Errorf("from Translate(%d)=%d, a source record at or after %d is never read", u, got, want)
	}
	return nil
}

// TestTranslateIsExact checks, for every source offset of many random
// histories, that a target consumer starting at the translated offset reads
// first exactly the record a source consumer would read next, and then
// every later source record; a bound the map stays within changes nothing.
func TestTranslateIsExact(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		for _, batches := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(seed, 7))
			p, bounded := NewPartition(), NewPartition()
			bounded.SetMaxSegments(1000)
			o := newOracle(simulate(t, rng, batches, nil, p, bounded))
			if !slices.Equal(p.Segments(), bounded.Segments()) {
				t.Fatalf("seed %d: a bound of 1000 changed %d segments", seed, p.Len())
			}
			for u := int64(0); u <= p.Covered(); u++ {
				got, res := p.Translate(u)
				if res != Exact {
					t.Fatalf("seed %d batches %v: Translate(%d) = %v", seed, batches, u, res)
				}
				if err := o.neverSkips(u, got, true); err != nil {
					t.Fatalf("seed %d batches %v: %v (segments %v)", seed, batches, err, p.Segments())
				}
			}
		}
	}
}

// TestBoundedNeverSkips replays random histories into an unbounded map and
// a bounded one, persisting the bounded one's changes at random moments,
// and checks for every source offset that the bounded map's answer is the
// exact one, or is rounded down (never after the exact one, by at most its
// segment's weight) so that a consumer starting there skips no record; and
// that the persisted changes rebuild the bounded map.
func TestBoundedNeverSkips(t *testing.T) {
	rounded := 0
	for seed := uint64(0); seed < 300; seed++ {
		for _, batches := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(seed, 11))
			limit := 2 + rng.IntN(24)
			exact, p := NewPartition(), NewPartition()
			p.SetMaxSegments(limit)
			store := map[int64]Change{}
			persist := func() {
				for _, c := range p.Drain() {
					if c.Deleted {
						if _, ok := store[c.Segment.Tgt]; !ok {
							t.Fatalf("seed %d: tombstone for key %d that was never written", seed, c.Segment.Tgt)
						}
						delete(store, c.Segment.Tgt)
					} else {
						store[c.Segment.Tgt] = c
					}
				}
			}
			step := func() {
				if p.Len() > limit {
					t.Fatalf("seed %d: %d segments, bound %d", seed, p.Len(), limit)
				}
				if rng.IntN(7) == 0 {
					persist()
				}
			}
			o := newOracle(simulate(t, rng, batches, step, exact, p))
			if p.Covered() != exact.Covered() || p.Start() != exact.Start() {
				t.Fatalf("seed %d: covered %d start %d, want %d %d", seed, p.Covered(), p.Start(), exact.Covered(), exact.Start())
			}
			if segs := p.Segments(); len(segs) > 0 && segs[len(segs)-1].Coarse() {
				t.Fatalf("seed %d: the newest segment is coarse: %v", seed, segs)
			}
			for u := int64(0); u <= p.Covered(); u++ {
				want, wres := exact.Translate(u)
				got, res := p.Translate(u)
				switch {
				case wres != Exact:
					t.Fatalf("seed %d: exact map: Translate(%d) = %v", seed, u, wres)
				case res == Exact && got != want:
					t.Fatalf("seed %d batches %v: Translate(%d) = %d exact, want %d (segments %v)", seed, batches, u, got, want, p.Segments())
				case res == Rounded:
					rounded++
					// At most the segment's weight, plus the target gap
					// after it: a replay that cut the segment leaves source
					// offsets at its end that the next segment answers.
					i := sort.Search(p.Len(), func(i int) bool { return p.segs[i].SrcEnd() > u })
					s, slack := p.segs[i], int64(0)
					if i+1 < p.Len() {
						slack = p.segs[i+1].Tgt - s.TgtEnd()
					}
					if got > want || want-got > s.weight()+slack {
						t.Fatalf("seed %d batches %v: Translate(%d) = %d rounded, exact %d, segment %v weight %d", seed, batches, u, got, want, s, s.weight())
					}
				case res != Exact:
					t.Fatalf("seed %d: Translate(%d) = %v", seed, u, res)
				}
				if err := o.neverSkips(u, got, res == Exact); err != nil {
					t.Fatalf("seed %d batches %v bound %d: %v (segments %v)", seed, batches, limit, err, p.Segments())
				}
			}
			persist()
			var segs []Segment
			for _, c := range store {
				segs = append(segs, c.Segment)
			}
			q := Restore(segs, p.Covered(), p.Start())
			if !slices.Equal(q.Segments(), p.Segments()) {
				t.Fatalf("seed %d: restored %v, want %v", seed, q.Segments(), p.Segments())
			}
			if ch := q.Drain(); len(ch) != 0 {
				t.Fatalf("seed %d: a clean restore has changes %v", seed, ch)
			}
		}
	}
	if rounded == 0 {
		t.Fatal("no translation was rounded: the bound was never reached")
	}
}

func TestDrainAndRestore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := NewPartition()
	simulate(t, rng, false, nil, p)
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

// holes returns a map of n segments of one record each, a compaction hole
// after each: source 2i was written at target i.
func holes(n int64, bound int) *Partition {
	p := NewPartition()
	p.SetStart(0)
	p.SetMaxSegments(bound)
	for i := int64(0); i < n; i++ {
		p.Ack(2*i, i)
	}
	return p
}

func TestCoarsenOldestFirst(t *testing.T) {
	p := holes(1000, 40)
	segs := p.Segments()
	if len(segs) > 40 {
		t.Fatalf("%d segments, bound 40", len(segs))
	}
	// The newest half of the bound is exact, the oldest segment is coarse.
	for _, s := range segs[len(segs)-20:] {
		if s.Coarse() {
			t.Fatalf("a recent segment is coarse: %v", segs)
		}
	}
	if !segs[0].Coarse() {
		t.Fatalf("the oldest segment is exact: %v", segs)
	}
	tests := []struct {
		u       int64
		want    int64 // the exact answer
		wantRes Result
	}{
		{u: 1998, want: 999, wantRes: Exact}, // the newest record
		{u: 1999, want: 1000, wantRes: Exact},
		{u: 1990, want: 995, wantRes: Exact},
		{u: 0, want: 0, wantRes: Exact}, // a coarse segment's start is exact
		{u: 601, want: 301, wantRes: Rounded},
		{u: 1200, want: 600, wantRes: Rounded},
	}
	for _, tt := range tests {
		got, res := p.Translate(tt.u)
		switch {
		case res != tt.wantRes:
			t.Errorf("Translate(%d) = %d, %v; want %v", tt.u, got, res, tt.wantRes)
		case res == Exact && got != tt.want:
			t.Errorf("Translate(%d) = %d, want %d", tt.u, got, tt.want)
		case res == Rounded && (got > tt.want || got < 0):
			t.Errorf("Translate(%d) = %d rounded, after the exact %d", tt.u, got, tt.want)
		}
	}
	// Every coarse segment rounds by about as much: the threshold.
	for _, s := range segs {
		if s.weight() > p.weight {
			t.Errorf("segment %v weighs %d, over the threshold %d", s, s.weight(), p.weight)
		}
	}
}

func TestCoarsenDrain(t *testing.T) {
	p := NewPartition()
	for i := int64(0); i < 10; i++ {
		p.Ack(2*i, i)
	}
	p.Drain()
	p.SetMaxSegments(4) // keep 2 exact, coarsen down to 3 segments
	got := p.Drain()
	segs := p.Segments()
	if len(segs) != 3 {
		t.Fatalf("segments %v", segs)
	}
	// The merged segments' records are rewritten or removed, nothing else.
	want := map[int64]bool{} // key -> deleted
	for i := int64(0); i < 8; i++ {
		want[i] = true
	}
	for _, s := range segs[:len(segs)-2] {
		want[s.Tgt] = false
	}
	if len(got) != len(want) {
		t.Fatalf("drained %v, want changes for keys %v", got, want)
	}
	for _, c := range got {
		if del, ok := want[c.Segment.Tgt]; !ok || del != c.Deleted {
			t.Fatalf("drained %v", got)
		}
		if !c.Deleted {
			if i, _ := p.find(c.Segment.Tgt); p.segs[i] != c.Segment {
				t.Fatalf("drained %v, segment is %v", c.Segment, p.segs[i])
			}
		}
	}
}

// TestFreshKeys checks that a segment created and removed between two
// drains is not tombstoned (it was never handed out), while one that was
// drained is.
func TestFreshKeys(t *testing.T) {
	p := NewPartition()
	p.AckRange(0, 0, 10)
	p.Drain()
	p.AckRange(12, 10, 5) // new key 10
	p.AckRange(11, 15, 3) // a replay from 11: key 10 goes again
	got := p.Drain()
	want := []Change{
		{Segment: Segment{Src: 11, Tgt: 15, Len: 3}, Covered: 14, Start: -1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	p.AckRange(5, 18, 1) // a replay from 5: key 15, drained, goes; key 0 is cut
	got = p.Drain()
	want = []Change{
		{Segment: Segment{Src: 0, Tgt: 0, Len: 5}, Covered: 6, Start: -1},
		{Segment: Segment{Tgt: 15}, Deleted: true, Covered: 6, Start: -1},
		{Segment: Segment{Src: 5, Tgt: 18, Len: 1}, Covered: 6, Start: -1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

// TestRestoreResolution checks that Restore keeps what it resolved as
// changes: overlapping persisted segments are rewritten or removed by the
// next Drain.
func TestRestoreResolution(t *testing.T) {
	p := Restore([]Segment{
		{Src: 0, Tgt: 0, Len: 20},  // cut by the replay at key 20
		{Src: 30, Tgt: 10, Len: 5}, // an interrupted writer's leftover, superseded
		{Src: 10, Tgt: 20, Len: 10},
		{Src: 20, Tgt: 30, Len: 5}, // continues key 20 on both sides: merged into it
	}, 25, 0)
	if want := []Segment{{Src: 0, Tgt: 0, Len: 10}, {Src: 10, Tgt: 20, Len: 15}}; !slices.Equal(p.Segments(), want) {
		t.Fatalf("restored %v, want %v", p.Segments(), want)
	}
	got := p.Drain()
	want := []Change{
		{Segment: Segment{Src: 0, Tgt: 0, Len: 10}, Covered: 25, Start: 0},
		{Segment: Segment{Tgt: 10}, Deleted: true, Covered: 25, Start: 0},
		{Segment: Segment{Src: 10, Tgt: 20, Len: 15}, Covered: 25, Start: 0},
		{Segment: Segment{Tgt: 30}, Deleted: true, Covered: 25, Start: 0},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestPruneCoarse(t *testing.T) {
	p := holes(100, 8)
	first := p.Segments()[0]
	if !first.Coarse() {
		t.Fatalf("setup: %v", p.Segments())
	}
	p.Drain()
	if n := p.Prune(first.SrcEnd() - 1); n != 0 {
		t.Fatalf("pruned a segment that ends after the log start")
	}
	if n := p.Prune(first.SrcEnd()); n != 1 {
		t.Fatalf("pruned %d", n)
	}
	if ch := p.Drain(); len(ch) != 1 || !ch[0].Deleted || ch[0].Segment.Tgt != first.Tgt {
		t.Fatalf("drain %v", ch)
	}
}

func TestCutCoarse(t *testing.T) {
	p := holes(100, 8)
	first := p.Segments()[0]
	// A replay from inside the first (coarse) segment, written at the
	// target's end: everything from there is superseded.
	at := first.Src + first.Len/2
	p.AckRange(at, 100, 1)
	segs := p.Segments()
	if len(segs) != 2 || segs[1] != (Segment{Src: at, Tgt: 100, Len: 1}) {
		t.Fatalf("segments %v", segs)
	}
	if c := segs[0]; c.Src != first.Src || c.Tgt != first.Tgt || c.SrcEnd() != at || c.TgtEnd() != first.TgtEnd() {
		t.Fatalf("cut %v to %v", first, c)
	}
	// Inside the cut segment, a translation still never passes the exact
	// answer: source 2i is at target i.
	for u := first.Src; u < at; u++ {
		got, res := p.Translate(u)
		if exact := (u + 1) / 2; got > exact || res != Exact && res != Rounded {
			t.Fatalf("Translate(%d) = %d, %v; exact %d", u, got, res, exact)
		}
	}
}

// TestBoundAfterRestore checks that a restored bounded map is not changed
// by setting its bound again, and goes on at the granularity it had.
func TestBoundAfterRestore(t *testing.T) {
	p := holes(1000, 40)
	q := Restore(p.Segments(), p.Covered(), p.Start())
	q.SetMaxSegments(40)
	if ch := q.Drain(); len(ch) != 0 {
		t.Fatalf("setting the same bound changed %v", ch)
	}
	if q.weight != p.weight {
		t.Fatalf("restored weight %d, want %d", q.weight, p.weight)
	}
	for i := int64(1000); i < 2000; i++ {
		p.Ack(2*i, i)
		q.Ack(2*i, i)
	}
	if !slices.Equal(p.Segments(), q.Segments()) {
		t.Fatalf("restored map coarsens differently:\n%v\n%v", q.Segments(), p.Segments())
	}
}

// TestIdlePartitionHoldsNoChangeSets checks that a partition keeps no change
// maps while nothing changed: with thousands of partitions, three empty maps
// each cost megabytes.
func TestIdlePartitionHoldsNoChangeSets(t *testing.T) {
	p := NewPartition()
	if p.changed != nil || p.deleted != nil || p.fresh != nil {
		t.Fatal("a new partition holds change maps")
	}
	p.AckRange(0, 0, 10)
	p.Ack(10, 20) // a new segment
	if got := len(p.Drain()); got != 2 {
		t.Fatalf("Drain returned %d changes, want 2", got)
	}
	if p.changed != nil || p.deleted != nil || p.fresh != nil {
		t.Fatal("a drained partition still holds change maps")
	}
	if got := p.Drain(); got != nil {
		t.Fatalf("a second Drain returned %v, want nothing", got)
	}
	p.Ack(11, 21)
	if got := len(p.Drain()); got != 1 {
		t.Fatalf("Drain after a new ack returned %d changes, want 1", got)
	}
}
