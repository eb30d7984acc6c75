package window

import (
	"testing"
	"time"
)

func TestWindowKeepsTheLastMinute(t *testing.T) {
	var w Window
	t0 := time.Unix(1000, 0)
	if st := w.Stats(t0); st != (Stats{}) {
		t.Fatalf("empty window: %+v", st)
	}
	w.Add(10, 1, t0)
	w.Add(30, 3, t0.Add(time.Second))
	st := w.Stats(t0.Add(2 * time.Second))
	if st.Count != 4 || st.Min != 10 || st.Max != 30 || st.Avg != 25 || st.Last != 30 {
		t.Fatalf("one sample: %+v, want count 4, min 10, max 30, avg 25, last 30", st)
	}
	// A second sample starts 30 s on; the first still counts for a minute
	// from its start.
	w.Add(50, 1, t0.Add(31*time.Second))
	if st := w.Stats(t0.Add(40 * time.Second)); st.Count != 5 || st.Max != 50 || st.Min != 10 {
		t.Fatalf("two samples: %+v, want count 5, min 10, max 50", st)
	}
	// A minute after the first sample began, only the second counts.
	if st := w.Stats(t0.Add(61 * time.Second)); st.Count != 1 || st.Min != 50 || st.Avg != 50 {
		t.Fatalf("after the first expired: %+v, want only the 50", st)
	}
	// Nothing for two minutes: the figures are gone, the last value stays.
	if st := w.Stats(t0.Add(3 * time.Minute)); st.Count != 0 || st.Last != 50 {
		t.Fatalf("idle: %+v, want count 0 and last 50", st)
	}
}
