package index

import (
	"log/slog"
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
		Covered: r.cov, Start: r.strt, TopicID: r.id}
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
				{u: 60, want: -1, wantRes: offsets.NotCopiedYet},
				{u: 99, want: -1, wantRes: offsets.NotCopiedYet},
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
	if got, res := r.Translate(tp.Topic, tp.Partition, 500); res != offsets.NotCopiedYet {
		t.Fatalf("new incarnation: Translate(500) = %d, %v; want %v", got, res, offsets.NotCopiedYet)
	}
	if got, res := r.Translate(tp.Topic, tp.Partition, 5); got != 1005 || res != offsets.Exact {
		t.Fatalf("new incarnation: Translate(5) = %d, %v", got, res)
	}
}
