package index

import (
	"log/slog"
	"slices"
	"testing"

	"strait/internal/offsets"
	"strait/internal/wire"
)

var (
	idOld = [16]byte{0xa}
	idNew = [16]byte{0xb}
)

// rec is one record of a simulated index topic: a segment of incarnation
// id, or a tombstone for the key tgt when tomb is set.
type rec struct {
	id        [16]byte
	seg       offsets.Segment
	cov, strt int64
	tomb      bool
}

func (r rec) kv(t *testing.T, tp TP) (key, value []byte) {
	t.Helper()
	s := wire.IndexSegment{Topic: tp.Topic, Partition: tp.Partition, Src: r.seg.Src, Tgt: r.seg.Tgt, Len: r.seg.Len,
		TgtLen: r.seg.TgtLen, Mapped: r.seg.Mapped, Covered: r.cov, Start: r.strt, TopicID: r.id}
	key, err := s.Key().AppendKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.tomb {
		return key, nil
	}
	return key, s.AppendValue(nil)
}

// compact keeps the latest record per key in log order, as Kafka's log
// cleaner does (tombstones kept: delete.retention.ms not passed yet).
func compact(log []rec) []rec {
	last := map[int64]int{}
	for i, r := range log {
		last[r.seg.Tgt] = i
	}
	var out []rec
	for i, r := range log {
		if last[r.seg.Tgt] == i {
			out = append(out, r)
		}
	}
	return out
}

func feed(t *testing.T, tp TP, log []rec) Map {
	t.Helper()
	st := newState()
	for _, r := range log {
		k, v := r.kv(t, tp)
		if !st.add(k, v) {
			t.Fatalf("record %+v not accepted", r)
		}
	}
	return st.build(nil)
}

// TestIncarnations checks that a partition's index holds one incarnation of
// the source topic: the one whose records came last in the log.
func TestIncarnations(t *testing.T) {
	tp := TP{"orders", 0}
	type tr struct {
		u       int64
		want    int64
		wantRes offsets.Result
	}
	tests := []struct {
		name   string
		log    []rec
		wantID [16]byte
		want   []tr
	}{
		{
			// The topic was deleted and recreated, and so was its remote
			// topic: the new incarnation's first segment overwrites key 0,
			// the old segment at key 40 survives.
			name: "recreated with its remote topic",
			log: []rec{
				{id: idOld, seg: offsets.Segment{Src: 0, Tgt: 0, Len: 40}, cov: 40, strt: 0},
				{id: idOld, seg: offsets.Segment{Src: 41, Tgt: 40, Len: 59}, cov: 100, strt: 0},
				{id: idNew, seg: offsets.Segment{Src: 0, Tgt: 0, Len: 50}, cov: 50, strt: 0},
			},
			wantID: idNew,
			want: []tr{
				{u: 45, want: 45},
				{u: 50, want: 50},
				{u: 60, want: 50, wantRes: offsets.Ahead},
				{u: 99, want: 50, wantRes: offsets.Ahead},
			},
		},
		{
			// Only the progress was reset: the new copy continues on the
			// same remote topic, from the new log start 200.
			name: "recreated, remote topic kept",
			log: []rec{
				{id: idOld, seg: offsets.Segment{Src: 0, Tgt: 0, Len: 100}, cov: 100, strt: 0},
				{id: idNew, seg: offsets.Segment{Src: 200, Tgt: 100, Len: 50}, cov: 250, strt: 200},
			},
			wantID: idNew,
			want: []tr{
				{u: 50, want: -1, wantRes: offsets.BeforeStart},
				{u: 200, want: 100},
				{u: 220, want: 120},
			},
		},
		{
			name: "tombstones of the old incarnation before the new one",
			log: []rec{
				{id: idOld, seg: offsets.Segment{Src: 0, Tgt: 0, Len: 100}, cov: 100},
				{id: idOld, seg: offsets.Segment{Tgt: 0}, tomb: true},
				{id: idNew, seg: offsets.Segment{Src: 5, Tgt: 100, Len: 10}, cov: 15, strt: 5},
			},
			wantID: idNew,
			want:   []tr{{u: 7, want: 102}, {u: 3, want: -1, wantRes: offsets.BeforeStart}},
		},
		{
			name: "one incarnation",
			log: []rec{
				{id: idOld, seg: offsets.Segment{Src: 0, Tgt: 0, Len: 40}, cov: 40},
				{id: idOld, seg: offsets.Segment{Src: 41, Tgt: 40, Len: 59}, cov: 100},
			},
			wantID: idOld,
			want:   []tr{{u: 45, want: 44}, {u: 100, want: 99}},
		},
	}
	for _, tt := range tests {
		for _, compacted := range []bool{false, true} {
			log := tt.log
			name := tt.name
			if compacted {
				log, name = compact(log), name+" (compacted)"
			}
			t.Run(name, func(t *testing.T) {
				m := feed(t, tp, log)
				if got := m.IDs[tp]; got != tt.wantID {
					t.Fatalf("ID %x, want %x", got, tt.wantID)
				}
				for _, w := range tt.want {
					got, res := m.Translate(tp.Topic, tp.Partition, w.u)
					if got != w.want || res != w.wantRes {
						t.Errorf("Translate(%d) = %d, %v; want %d, %v (segments %v)", w.u, got, res, w.want, w.wantRes, m.Parts[tp].Segments())
					}
				}
			})
		}
	}
}

// TestReaderDropsOldIncarnation feeds the Reader as its follower would and
// checks that a cached old-incarnation map is not used after the new
// incarnation's first record.
func TestReaderDropsOldIncarnation(t *testing.T) {
	tp := TP{"orders", 1}
	r := NewReader(nil, "strait-index.A.internal", slog.New(slog.DiscardHandler))
	add := func(x rec) {
		t.Helper()
		k, v := x.kv(t, tp)
		if !r.add(k, v) {
			t.Fatalf("record %+v not accepted", x)
		}
	}
	add(rec{id: idOld, seg: offsets.Segment{Src: 0, Tgt: 0, Len: 1000}, cov: 1000})
	if got, res := r.Translate(tp.Topic, tp.Partition, 500); got != 500 || res != offsets.Exact {
		t.Fatalf("old incarnation: Translate(500) = %d, %v", got, res)
	}
	add(rec{id: idNew, seg: offsets.Segment{Src: 0, Tgt: 1000, Len: 10}, cov: 10, strt: 0})
	if got, res := r.Translate(tp.Topic, tp.Partition, 500); got != 1010 || res != offsets.Ahead {
		t.Fatalf("new incarnation: Translate(500) = %d, %v; want 1010, %v", got, res, offsets.Ahead)
	}
	if got, res := r.Translate(tp.Topic, tp.Partition, 5); got != 1005 || res != offsets.Exact {
		t.Fatalf("new incarnation: Translate(5) = %d, %v", got, res)
	}
}

func TestTranslateID(t *testing.T) {
	tp := TP{"orders", 2}
	m := feed(t, tp, []rec{{id: idOld, seg: offsets.Segment{Src: 0, Tgt: 0, Len: 100}, cov: 100}})
	r := NewReader(nil, "strait-index.A.internal", slog.New(slog.DiscardHandler))
	k, v := rec{id: idOld, seg: offsets.Segment{Src: 0, Tgt: 0, Len: 100}, cov: 100}.kv(t, tp)
	r.add(k, v)
	tests := []struct {
		name    string
		tp      TP
		id      [16]byte
		want    int64
		wantRes offsets.Result
	}{
		{name: "same incarnation", tp: tp, id: idOld, want: 50},
		{name: "unknown source ID", tp: tp, want: 50},
		{name: "recreated source topic", tp: tp, id: idNew, want: -1, wantRes: offsets.OtherIncarnation},
		{name: "nothing indexed", tp: TP{"orders", 3}, id: idNew, want: -1, wantRes: offsets.Empty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, tr := range map[string]interface {
				TranslateID(string, int32, [16]byte, int64) (int64, offsets.Result)
			}{"map": m, "reader": r} {
				if got, res := tr.TranslateID(tt.tp.Topic, tt.tp.Partition, tt.id, 50); got != tt.want || res != tt.wantRes {
					t.Errorf("%s: TranslateID = %d, %v; want %d, %v", name, got, res, tt.want, tt.wantRes)
				}
			}
		})
	}
	if id, ok := r.TopicID(tp.Topic, tp.Partition); !ok || id != idOld {
		t.Fatalf("TopicID = %x, %v", id, ok)
	}
	if _, ok := r.TopicID("orders", 3); ok {
		t.Fatal("TopicID of a partition without segments")
	}
}

func TestPurge(t *testing.T) {
	tp := TP{"orders", 0}
	// Two overlapping records (an interrupted writer): Restore resolves the
	// one at key 10 away, but its key is in the topic and is purged too.
	m := feed(t, tp, []rec{
		{id: idOld, seg: offsets.Segment{Src: 0, Tgt: 0, Len: 10}, cov: 10},
		{id: idOld, seg: offsets.Segment{Src: 20, Tgt: 10, Len: 10}, cov: 30},
		{id: idOld, seg: offsets.Segment{Src: 5, Tgt: 20, Len: 30}, cov: 35},
	})
	if got := m.Purge(tp, idOld); got != nil {
		t.Fatalf("purged the current incarnation: %v", got)
	}
	if got := m.Purge(TP{"orders", 1}, idNew); got != nil {
		t.Fatalf("purged a partition without segments: %v", got)
	}
	got := m.Purge(tp, idNew)
	var tgts []int64
	for _, u := range got {
		if !u.Change.Deleted || u.TP != tp {
			t.Fatalf("not a tombstone of %v: %+v", tp, u)
		}
		tgts = append(tgts, u.Change.Segment.Tgt)
	}
	if !slices.Equal(tgts, []int64{0, 10, 20}) {
		t.Fatalf("purged keys %v", tgts)
	}
	// Written to the topic, then the new incarnation: nothing of the old
	// one is left, and a reader sees only the new one.
	st := newState()
	for _, r := range []rec{
		{id: idOld, seg: offsets.Segment{Src: 0, Tgt: 0, Len: 10}, cov: 10},
		{id: idOld, seg: offsets.Segment{Src: 20, Tgt: 10, Len: 10}, cov: 30},
		{id: idOld, seg: offsets.Segment{Src: 5, Tgt: 20, Len: 30}, cov: 35},
	} {
		k, v := r.kv(t, tp)
		st.add(k, v)
	}
	for _, u := range got {
		k, v := rec{seg: u.Change.Segment, tomb: true}.kv(t, tp)
		st.add(k, v)
	}
	if n := len(st.parts[tp].segs); n != 0 {
		t.Fatalf("%d segments left after the purge", n)
	}
}

func TestCoalesce(t *testing.T) {
	a, b := TP{"orders", 0}, TP{"orders", 1}
	w := func(tp TP, tgt, n, cov int64) Update {
		return Update{TP: tp, TopicID: idOld, Change: offsets.Change{Segment: offsets.Segment{Src: tgt, Tgt: tgt, Len: n}, Covered: cov, Start: 0}}
	}
	del := func(tp TP, tgt, cov int64) Update {
		return Update{TP: tp, TopicID: idOld, Change: offsets.Change{Segment: offsets.Segment{Tgt: tgt}, Deleted: true, Covered: cov, Start: 0}}
	}
	tests := []struct {
		name string
		in   []Update
		want []Update
	}{
		{name: "empty"},
		{name: "distinct keys kept in order", in: []Update{w(a, 0, 5, 5), w(b, 0, 3, 3), w(a, 5, 1, 6)}, want: []Update{w(a, 0, 5, 5), w(b, 0, 3, 3), w(a, 5, 1, 6)}},
		{name: "a growing segment: the latest write wins", in: []Update{w(a, 0, 5, 5), w(a, 0, 8, 8), w(a, 0, 9, 12)}, want: []Update{w(a, 0, 9, 12)}},
		{name: "a delete after a write is a delete", in: []Update{w(a, 0, 5, 5), w(a, 10, 5, 15), del(a, 10, 12)}, want: []Update{w(a, 0, 5, 5), del(a, 10, 12)}},
		{name: "a write after a delete is a write", in: []Update{del(a, 10, 12), w(b, 4, 1, 5), w(a, 10, 2, 14)}, want: []Update{w(b, 4, 1, 5), w(a, 10, 2, 14)}},
		{name: "same Tgt on two partitions", in: []Update{w(a, 0, 5, 5), w(b, 0, 5, 5), del(a, 0, 5)}, want: []Update{w(b, 0, 5, 5), del(a, 0, 5)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Coalesce(tt.in); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v\nwant %v", got, tt.want)
			}
		})
	}
}

// TestCoalesceBounded checks that retrying failed writes with Coalesce keeps
// one update per key however often the write fails.
func TestCoalesceBounded(t *testing.T) {
	tp := TP{"orders", 0}
	p := offsets.NewPartition()
	var unsent []Update
	for i := int64(0); i < 1000; i++ {
		p.AckRange(2*i, i, 1) // a compaction hole after every record: a segment each
		if i%100 == 99 {
			p.Prune(2*i - 100) // the oldest segments go
		}
		for _, c := range p.Drain() {
			unsent = append(unsent, Update{TP: tp, Change: c})
		}
		unsent = Coalesce(unsent) // the write failed: keep them
	}
	if len(unsent) != 1000 {
		t.Fatalf("%d updates unsent for 1000 keys", len(unsent))
	}
	// The coalesced updates rebuild exactly the map as it is.
	st := newState()
	for _, u := range unsent {
		k, v := rec{seg: u.Change.Segment, cov: u.Change.Covered, tomb: u.Change.Deleted}.kv(t, tp)
		st.add(k, v)
	}
	if got := st.build(nil).Parts[tp]; !slices.Equal(got.Segments(), p.Segments()) || got.Covered() != p.Covered() {
		t.Fatalf("rebuilt %v (covered %d), want %v (covered %d)", got.Segments(), got.Covered(), p.Segments(), p.Covered())
	}
}

// TestBoundedRoundTrip writes a bounded map's changes as Write encodes them,
// reads them back as Load does, and checks that the loaded map is the same,
// coarse segments included, and translates the same.
func TestBoundedRoundTrip(t *testing.T) {
	tp := TP{"changelog", 4}
	p := offsets.NewPartition()
	p.SetStart(0)
	p.SetMaxSegments(8)
	st := newState()
	for i := int64(0); i < 200; i++ {
		p.Ack(2*i, i) // a compaction hole after every record
		if i%7 == 0 {
			var ups []Update
			for _, c := range p.Drain() {
				ups = append(ups, Update{TP: tp, TopicID: idNew, Change: c})
			}
			recs, err := Records("strait-index.A.internal", ups)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if !st.add(r.Key, r.Value) {
					t.Fatalf("record not accepted: %v", r)
				}
			}
		}
	}
	var ups []Update
	for _, c := range p.Drain() {
		ups = append(ups, Update{TP: tp, TopicID: idNew, Change: c})
	}
	recs, _ := Records("strait-index.A.internal", ups)
	for _, r := range recs {
		st.add(r.Key, r.Value)
	}
	m := st.build(nil)
	got := m.Parts[tp]
	coarse := 0
	for _, s := range p.Segments() {
		if s.Coarse() {
			coarse++
		}
	}
	if coarse == 0 || p.Len() > 8 {
		t.Fatalf("the bound did not apply: %v", p.Segments())
	}
	if !slices.Equal(got.Segments(), p.Segments()) || got.Covered() != p.Covered() || got.Start() != 0 {
		t.Fatalf("loaded %v (covered %d, start %d), want %v (covered %d)", got.Segments(), got.Covered(), got.Start(), p.Segments(), p.Covered())
	}
	for u := int64(0); u <= p.Covered(); u++ {
		w, wres := p.Translate(u)
		g, gres := m.TranslateID(tp.Topic, tp.Partition, idNew, u)
		if g != w || gres != wres {
			t.Fatalf("Translate(%d) = %d, %v; want %d, %v", u, g, gres, w, wres)
		}
	}
	if ch := got.Drain(); len(ch) != 0 {
		t.Fatalf("a loaded map without overlaps has changes: %v", ch)
	}
}
