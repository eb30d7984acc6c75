package main

import "testing"

func TestPercentile(t *testing.T) {
	hundred := make([]int64, 100)
	for i := range hundred {
		hundred[i] = int64(i + 1)
	}
	tests := []struct {
		name   string
		sorted []int64
		q      float64
		want   int64
	}{
		{name: "empty", sorted: nil, q: 50, want: 0},
		{name: "one value", sorted: []int64{7}, q: 99, want: 7},
		{name: "p50 of 1..100", sorted: hundred, q: 50, want: 50},
		{name: "p99 of 1..100", sorted: hundred, q: 99, want: 99},
		{name: "p99.9 of 1..100", sorted: hundred, q: 99.9, want: 100},
		{name: "p100", sorted: hundred, q: 100, want: 100},
		{name: "p50 of two", sorted: []int64{1, 2}, q: 50, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.q); got != tt.want {
				t.Errorf("percentile(%v) = %d, want %d", tt.q, got, tt.want)
			}
		})
	}
}

func TestLatencyReaderStats(t *testing.T) {
	tests := []struct {
		name     string
		samples  []sample
		from     int64
		produced int64
		want     latencyStats
	}{
		{name: "nothing received", produced: 5, want: latencyStats{Missing: 5}},
		{
			name:    "some missing",
			samples: []sample{{0, 3000}, {2, 1000}, {3, 2000}}, produced: 4,
			want: latencyStats{Received: 3, Missing: 1, P50Ms: 2, P99Ms: 3, P999Ms: 3, MaxMs: 3, MeanMs: 2},
		},
		{
			name:    "warm-up records left out",
			samples: []sample{{0, 900_000}, {1, 800_000}, {2, 1000}, {3, 3000}}, from: 2, produced: 4,
			want: latencyStats{Received: 2, P50Ms: 1, P99Ms: 3, P999Ms: 3, MaxMs: 3, MeanMs: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := &latencyReader{samples: tt.samples}
			if got := rd.stats(tt.from, tt.produced); got != tt.want {
				t.Errorf("stats() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
