package api

import (
	"context"
	"sync"
	"time"

	"strait/internal/daemon"
	"strait/internal/mirror"
)

// History samples the node's status at a fixed interval and keeps the
// last samples: the rates of the flows (from consecutive samples), the
// progress of the backlog each partition had when it was first seen, and
// the points the dashboard charts.
type History struct {
	status   func() daemon.Status
	interval time.Duration
	keep     int

	mu      sync.Mutex
	points  []HistoryPoint
	last    map[string]counts     // per flow, the previous sample
	rates   map[string]FlowSample // per flow, rates between the last two samples
	samples map[string]int        // per flow, how many samples saw it (up to 2)
	backlog map[partKey]*backlog  // per partition, from its first sample with a position and an end
}

type counts struct {
	at             time.Time
	records, bytes int64
}

type partKey struct {
	flow, topic string
	partition   int32
}

// backlog is what one partition held when first seen: from start to end.
type backlog struct{ start, end int64 }

// NewHistory samples status every interval and keeps keep points.
func NewHistory(status func() daemon.Status, interval time.Duration, keep int) *History {
	return &History{status: status, interval: interval, keep: keep,
		last: map[string]counts{}, rates: map[string]FlowSample{}, samples: map[string]int{}, backlog: map[partKey]*backlog{}}
}

// Run samples until ctx is done.
func (h *History) Run(ctx context.Context) {
	t := time.NewTicker(h.interval)
	defer t.Stop()
	h.Sample(time.Now())
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			h.Sample(now)
		}
	}
}

// Sample takes one sample at now.
func (h *History) Sample(now time.Time) {
	st := h.status()
	h.mu.Lock()
	defer h.mu.Unlock()
	pt := HistoryPoint{Time: now.Unix(), Flows: map[string]FlowSample{}}
	for _, f := range st.Flows {
		prev, seen := h.last[f.Name]
		cur := counts{now, f.Mirror.Records, f.Mirror.Bytes}
		h.last[f.Name] = cur
		s := FlowSample{}
		if d := cur.at.Sub(prev.at).Seconds(); seen && d > 0 {
			s.RecordsPerSecond = max(float64(cur.records-prev.records)/d, 0)
			s.BytesPerSecond = max(float64(cur.bytes-prev.bytes)/d, 0)
		}
		s.LagRecords, s.LagSeconds = lagOf(f.Mirror.Partitions)
		s.LatencyAvgMs, s.LatencyMaxMs = latencyOf(f.Mirror.Partitions)
		h.rates[f.Name] = s
		h.samples[f.Name] = min(h.samples[f.Name]+1, 2)
		pt.Flows[f.Name] = s
		for _, p := range f.Mirror.Partitions {
			k := partKey{f.Name, p.Topic, p.Partition}
			if h.backlog[k] == nil && p.Position >= 0 && p.End >= 0 {
				h.backlog[k] = &backlog{start: p.Position, end: max(p.End, p.Position)}
			}
		}
	}
	h.points = append(h.points, pt)
	if len(h.points) > h.keep {
		h.points = append(h.points[:0], h.points[len(h.points)-h.keep:]...)
	}
}

// lagOf sums a flow's lag in records and takes the oldest lag in seconds.
func lagOf(parts []mirror.PartitionStatus) (records int64, seconds float64) {
	for _, p := range parts {
		records += p.Lag
		seconds = max(seconds, p.LagSeconds)
	}
	return records, seconds
}

// latencyOf is a flow's replication latency over its partitions' windows:
// the mean weighted by the records each window counts, and the highest.
func latencyOf(parts []mirror.PartitionStatus) (avgMs, maxMs float64) {
	var sum float64
	var n int64
	for _, p := range parts {
		if p.Latency.Count == 0 {
			continue
		}
		sum += p.Latency.Avg * float64(p.Latency.Count)
		n += p.Latency.Count
		maxMs = max(maxMs, p.Latency.Max)
	}
	if n > 0 {
		avgMs = sum / float64(n)
	}
	return avgMs, maxMs
}

// View returns the kept points, oldest first.
func (h *History) View() HistoryView {
	h.mu.Lock()
	defer h.mu.Unlock()
	return HistoryView{IntervalSeconds: h.interval.Seconds(), Points: append([]HistoryPoint{}, h.points...)}
}

// rate returns a flow's rates from the last two samples. Until there are
// two, it is the rate from the one sample to now (records and bytes, the
// flow's counts now), once a second has passed: a copy that began a moment
// ago shows its rate, not 0 B/s for a whole interval.
func (h *History) rate(flow string, records, bytes int64, now time.Time) FlowSample {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rates[flow]
	if prev, ok := h.last[flow]; ok && h.samples[flow] < 2 {
		if d := now.Sub(prev.at).Seconds(); d >= 1 {
			r.RecordsPerSecond = max(float64(records-prev.records)/d, 0)
			r.BytesPerSecond = max(float64(bytes-prev.bytes)/d, 0)
		}
	}
	return r
}

// backlogOf is a flow's initial copy progress, nil once every partition
// reached the end it had when first seen (or before any was seen).
func (h *History) backlogOf(f daemon.FlowStatus, recordsPerSecond float64) *BacklogView {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b BacklogView
	for _, p := range f.Mirror.Partitions {
		bl := h.backlog[partKey{f.Name, p.Topic, p.Partition}]
		if bl == nil {
			continue
		}
		b.Total += bl.end - bl.start
		b.Copied += min(max(p.Position, bl.start), bl.end) - bl.start
	}
	if b.Total == 0 || b.Copied >= b.Total {
		return nil
	}
	b.Fraction = float64(b.Copied) / float64(b.Total)
	if recordsPerSecond > 0 {
		eta := float64(b.Total-b.Copied) / recordsPerSecond
		b.ETASeconds = &eta
	}
	return &b
}
