package checkpoint

import (
	"log/slog"
	"slices"
	"testing"
	"time"
)

// TestScheduleOnEveryDueTick: on a ticker of the emit interval, group
// offset sync and group refresh run on every tick that is due within the
// ticker's jitter, so ticks that fire a millisecond early do not skip one.
func TestScheduleOnEveryDueTick(t *testing.T) {
	const emit = 5 * time.Second
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		every    time.Duration // the task's interval
		spacing  time.Duration // between ticks
		wantRuns []int         // the ticks the task runs on
	}{
		{name: "interval equal to the tick, ticks early", every: emit, spacing: emit - time.Millisecond, wantRuns: []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{name: "interval equal to the tick, ticks late", every: emit, spacing: emit + 40*time.Millisecond, wantRuns: []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{name: "twice the tick, ticks early", every: 2 * emit, spacing: emit - time.Millisecond, wantRuns: []int{0, 2, 4, 6, 8}},
		{name: "three times the tick, ticks late", every: 3 * emit, spacing: emit + 40*time.Millisecond, wantRuns: []int{0, 3, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Config{EmitInterval: emit, SyncInterval: tt.every, RefreshGroupsInterval: tt.every, SyncGroupOffsets: true}, Clients{}, nil, slog.New(slog.DiscardHandler))
			for task, s := range map[string]*schedule{"group offset sync": &c.sync, "group refresh": &c.refresh} {
				var runs []int
				for i := range 9 {
					now := start.Add(time.Duration(i) * tt.spacing)
					if s.due(now) {
						s.ran(now)
						runs = append(runs, i)
					}
				}
				if !slices.Equal(runs, tt.wantRuns) {
					t.Errorf("%s every %s, ticks %s apart: ran on ticks %v, want %v", task, tt.every, tt.spacing, runs, tt.wantRuns)
				}
			}
		})
	}
}
