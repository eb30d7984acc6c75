package metrics

import "time"

// rateWindow is how far back MM2's record-rate and byte-rate look: two
// samples of 30 seconds (window.Sample).
const rateWindow = time.Minute

// rates turns the counts each scrape reads into MM2's per-second rates:
// per series, the counts of the scrapes in the last minute, and the rate
// from the oldest of them to now. Before a series has a scrape a minute
// old, the rate runs from the registry's start, when every count was 0.
type rates struct {
	start  time.Time
	series map[string][]countAt
}

type countAt struct {
	at             time.Time
	records, bytes int64
}

func newRates(start time.Time) rates {
	return rates{start: start, series: map[string][]countAt{}}
}

// observe records a series' counts at now and returns its rates. Callers
// hold Registry.mu (scrapes may run concurrently).
func (r *rates) observe(key string, records, bytes int64, now time.Time) (recordRate, byteRate float64) {
	s := r.series[key]
	for len(s) > 1 && now.Sub(s[1].at) >= rateWindow {
		s = s[1:] // keep one sample at least a minute old as the base
	}
	base := countAt{at: r.start}
	if len(s) > 0 {
		base = s[0]
	}
	r.series[key] = append(s, countAt{now, records, bytes})
	if d := now.Sub(base.at).Seconds(); d > 0 {
		recordRate = float64(records-base.records) / d
		byteRate = float64(bytes-base.bytes) / d
	}
	return max(recordRate, 0), max(byteRate, 0)
}

// forget drops series not observed for two windows (a partition that went
// away).
func (r *rates) forget(now time.Time) {
	for k, s := range r.series {
		if len(s) == 0 || now.Sub(s[len(s)-1].at) >= 2*rateWindow {
			delete(r.series, k)
		}
	}
}
