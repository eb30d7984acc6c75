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
		{name: "beyond what was copied", acks: []ack{{100, 0, 50}}, u: 151, want: 50, wantRes: Ahead},
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

// randomLog is a source log of n offsets: a fifth compaction holes, a tenth
// transaction markers, the rest records.
func randomLog(rng *rand.Rand, n int) []int {
	src := make([]int, n)
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
	return src
}

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
	src = randomLog(rng, 200+rng.IntN(300))
	n := len(src)
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
// TestRestoreResolution: Restore resolves the segments several writers left
// (a replay after a crash, a node fenced out that wrote on after its
// successor began) so that a consumer placed by Translate never skips a
// record: a newer copy that reaches as far as the older ones supersedes
// them from where it starts; one that stops short of them is dropped, as
// the older copies it would cut off are the only ones of the records after
// it, and a consumer placed on the older copies reads the newer ones later.
func TestRestoreResolution(t *testing.T) {
	tests := []struct {
		name  string
		segs  []Segment
		want  []Segment
		trans map[int64]int64 // source offset: target offset
		drain []Change
	}{
		{
			name:  "a replay that reaches the end supersedes the older copies",
			segs:  []Segment{{Src: 0, Tgt: 0, Len: 20}, {Src: 10, Tgt: 20, Len: 10}, {Src: 20, Tgt: 30, Len: 5}},
			want:  []Segment{{Src: 0, Tgt: 0, Len: 10}, {Src: 10, Tgt: 20, Len: 15}},
			trans: map[int64]int64{5: 5, 12: 22, 24: 34},
			drain: []Change{
				{Segment: Segment{Src: 0, Tgt: 0, Len: 10}, Covered: 25, Start: 0},
				{Segment: Segment{Src: 10, Tgt: 20, Len: 15}, Covered: 25, Start: 0},
				{Segment: Segment{Tgt: 30}, Deleted: true, Covered: 25, Start: 0},
			},
		},
		{
			// The minimal case: writer 1 copied 0..49 at 100; a second
			// writer began again at 0 and its index shows 0..19 at 200, then
			// 50..59 at 300. Source 30 is copied at 130 only.
			name:  "overlapping writers: a copy that stops short is dropped",
			segs:  []Segment{{Src: 0, Tgt: 100, Len: 50}, {Src: 0, Tgt: 200, Len: 20}, {Src: 50, Tgt: 300, Len: 10}},
			want:  []Segment{{Src: 0, Tgt: 100, Len: 50}, {Src: 50, Tgt: 300, Len: 10}},
			trans: map[int64]int64{30: 130, 10: 110, 50: 300},
			drain: []Change{{Segment: Segment{Tgt: 200}, Deleted: true, Covered: 60, Start: 0}},
		},
		{
			// One writer copied 0..59 at 100, crashed with progress at 40,
			// replayed 40..49 at 200 and crashed again: 50..59 are only at
			// 150..159.
			name:  "a replay cut short by a second crash",
			segs:  []Segment{{Src: 0, Tgt: 100, Len: 60}, {Src: 40, Tgt: 200, Len: 10}},
			want:  []Segment{{Src: 0, Tgt: 100, Len: 60}},
			trans: map[int64]int64{45: 145, 55: 155},
			drain: []Change{{Segment: Segment{Tgt: 200}, Deleted: true, Covered: 60, Start: 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var covered int64
			for _, s := range tt.segs {
				covered = max(covered, s.SrcEnd())
			}
			p := Restore(tt.segs, covered, 0)
			if !slices.Equal(p.Segments(), tt.want) {
				t.Fatalf("restored %v, want %v", p.Segments(), tt.want)
			}
			for u, want := range tt.trans {
				if got, res := p.Translate(u); got != want || !res.Usable() {
					t.Errorf("Translate(%d) = %d %v, want %d", u, got, res, want)
				}
			}
			if got := p.Drain(); !slices.Equal(got, tt.drain) {
				t.Errorf("drain %v\nwant %v", got, tt.drain)
			}
		})
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

// TestRestoreOfSuccessiveWritersNeverSkips replays random histories in
// which one partition has a succession of writers (restarts after crashes,
// nodes taking it over): a writer restores the index as it stands and
// copies in source order from the committed progress, which a writer
// commits only after it persisted the index records that cover it. Its
// predecessor is fenced out from then on: it persists and commits nothing
// more (index writes carry the node's lease, commits its generation),
// though copies it had in flight may still land on the target for a
// while. Each writer persists its own map's changes into one compacted
// store at random moments (latest record per key). The map restored from
// the store at the end must place a consumer, for every source offset it
// covers, where it reads every record from that offset on.
func TestRestoreOfSuccessiveWritersNeverSkips(t *testing.T) {
	resolved := 0 // segments Restore removed, over all restores
	for seed := uint64(0); seed < 1000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 13))
		n := int64(100 + rng.IntN(200))
		src := randomLog(rng, int(n))
		tgt := map[int64]int64{}
		var next, progress int64
		store := map[int64]Change{}
		restore := func() *Partition {
			var segs []Segment
			var covered int64 = -1
			for _, c := range store {
				segs = append(segs, c.Segment)
				covered = max(covered, c.Covered)
			}
			p := Restore(segs, covered, 0)
			for _, c := range p.Drain() {
				if c.Deleted {
					resolved++
				}
			}
			return Restore(segs, covered, 0)
		}
		type writer struct {
			p        *Partition
			pos      int64
			fenced   bool
			inflight int // copies still landing after it was fenced
		}
		first := NewPartition()
		first.SetStart(0)
		ws := []*writer{{p: first}}
		for steps := 0; steps < 3000; steps++ {
			cur := ws[len(ws)-1]
			if cur.pos >= n {
				break
			}
			if rng.IntN(20) == 0 || cur.fenced {
				// The writer crashes or is taken over; the next begins.
				for _, w := range ws {
					if !w.fenced {
						w.fenced, w.inflight = true, rng.IntN(4)
					}
				}
				q := restore()
				q.SetStart(0)
				ws = append(ws, &writer{p: q, pos: progress})
				continue
			}
			w := cur
			for _, z := range ws {
				if z.fenced && z.inflight > 0 && z.pos < n && rng.IntN(3) == 0 {
					w = z
					z.inflight--
					break
				}
			}
			// Forward one batch of up to 6 offsets; a marker is a batch of its own.
			if src[w.pos] == marker {
				w.p.Cover(w.pos + 1)
				w.pos++
			} else {
				k := int64(0)
				for k < min(int64(1+rng.IntN(6)), n-w.pos) && src[w.pos+k] != marker {
					k++
				}
				for i := int64(0); i < k; i++ {
					if src[w.pos+i] == record {
						tgt[next+i] = w.pos + i
					}
				}
				w.p.AckRange(w.pos, next, k)
				next += k
				w.pos += k
			}
			if !w.fenced && rng.IntN(4) == 0 {
				changes := w.p.Drain()
				if rng.IntN(10) == 0 {
					// A write that fails part way: some of its records
					// land, in any order, and the writer crashes.
					rng.Shuffle(len(changes), func(i, j int) { changes[i], changes[j] = changes[j], changes[i] })
					changes = changes[:rng.IntN(len(changes)+1)]
					w.fenced = true
				}
				for _, c := range changes {
					if c.Deleted {
						delete(store, c.Segment.Tgt)
					} else {
						store[c.Segment.Tgt] = c
					}
				}
				if !w.fenced && rng.IntN(2) == 0 {
					progress = w.pos // everything before it is persisted
				}
			}
		}
		var segs []Segment
		for _, c := range store {
			segs = append(segs, c.Segment)
		}
		p := restore()
		o := newOracle(src, tgt, next)
		for u := int64(0); u <= min(p.Covered(), n-1); u++ {
			got, res := p.Translate(u)
			if !res.Usable() {
				t.Fatalf("seed %d: Translate(%d) = %v (segments %v, covered %d)", seed, u, res, p.Segments(), p.Covered())
			}
			if err := o.neverSkips(u, got, false); err != nil {
				t.Fatalf("seed %d, %d writers: %v (restored %v from %v)", seed, len(ws), err, p.Segments(), segs)
			}
		}
	}
	if resolved == 0 {
		t.Fatal("no history left overlapping segments: the test exercises nothing")
	}
	t.Logf("Restore removed %d overlapping segments", resolved)
}
