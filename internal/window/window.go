// Package window keeps MM2's windowed statistics: min, max and average
// over two samples of 30 seconds, and the last value (Kafka's SampledStat
// with the default MetricConfig, which MM2's record-age-ms,
// replication-latency-ms and checkpoint-latency-ms use; spec section 7).
package window

import "time"

// Sample is the length of one of a window's two samples, as in Kafka's
// MetricConfig defaults that MM2's windowed metrics use.
const Sample = 30 * time.Second

// Window is a windowed min/max/avg, with the last value. The zero value
// is empty; it is not safe for concurrent use.
type Window struct {
	cur, prev sample
	last      float64
	any       bool
}

type sample struct {
	start         time.Time
	n             int64
	sum, min, max float64
}

// Add records n observations of v at now.
func (w *Window) Add(v float64, n int64, now time.Time) {
	if now.Sub(w.cur.start) >= Sample {
		w.prev, w.cur = w.cur, sample{start: now}
	}
	s := &w.cur
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n += n
	s.sum += v * float64(n)
	w.last, w.any = v, true
}

// Stats are a window's figures (milliseconds where MM2 has them): over the
// samples of the last minute, and the last value observed (MM2's attribute
// without a suffix).
type Stats struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min_ms"`
	Max   float64 `json:"max_ms"`
	Avg   float64 `json:"avg_ms"`
	Last  float64 `json:"last_ms"`
}

// Stats returns the window's figures at now.
func (w *Window) Stats(now time.Time) Stats {
	st := Stats{Last: w.last}
	if !w.any {
		return st
	}
	var sum float64
	first := true
	for _, s := range []sample{w.prev, w.cur} {
		if s.n == 0 || now.Sub(s.start) >= 2*Sample {
			continue
		}
		if first || s.min < st.Min {
			st.Min = s.min
		}
		if first || s.max > st.Max {
			st.Max = s.max
		}
		first = false
		st.Count += s.n
		sum += s.sum
	}
	if st.Count > 0 {
		st.Avg = sum / float64(st.Count)
	}
	return st
}
