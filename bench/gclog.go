package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// gcPauses sums one broker's stop-the-world GC pauses in a time window, read from the GC
// log that scripts/kafka.sh makes each broker write (-Xlog:gc with wall-clock times): a
// pause on B holds every record that crosses it, so it shows in the replication tail of
// whichever tool runs then.
type gcPauses struct {
	Count   int     `json:"count"`
	MaxMs   float64 `json:"max_ms"`
	TotalMs float64 `json:"total_ms"`
}

// gcLogTime is the layout of -Xlog's "time" decoration.
const gcLogTime = "2006-01-02T15:04:05.000-0700"

// brokerGC reads the pauses logged in cluster dir's gc.log between from and to. A pause is
// dated by its log line, written as it ends.
func brokerGC(dir string, from, to time.Time) (gcPauses, error) {
	f, err := os.Open(filepath.Join(dir, "gc.log"))
	if err != nil {
		return gcPauses{}, fmt.Errorf("reading the broker's GC log: %w", err)
	}
	defer f.Close()
	var g gcPauses
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		at, ms, ok := parseGCPause(sc.Text())
		if !ok || at.Before(from) || at.After(to) {
			continue
		}
		g.Count++
		g.TotalMs += ms
		g.MaxMs = max(g.MaxMs, ms)
	}
	if err := sc.Err(); err != nil {
		return gcPauses{}, fmt.Errorf("reading the broker's GC log: %w", err)
	}
	return g, nil
}

// parseGCPause reads a line such as
// "[2026-12-01T20:11:37.174+0000] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 12M->5M(258M) 20.557ms".
// Concurrent phases ("Concurrent Mark Cycle") stop nothing and are not pauses.
func parseGCPause(line string) (time.Time, float64, bool) {
	stamp, rest, ok := strings.Cut(strings.TrimPrefix(line, "["), "] ")
	if !ok || !strings.Contains(rest, " Pause ") {
		return time.Time{}, 0, false
	}
	at, err := time.Parse(gcLogTime, stamp)
	if err != nil {
		return time.Time{}, 0, false
	}
	last := rest[strings.LastIndexByte(rest, ' ')+1:]
	ms, err := strconv.ParseFloat(strings.TrimSuffix(last, "ms"), 64)
	if err != nil || !strings.HasSuffix(last, "ms") {
		return time.Time{}, 0, false
	}
	return at, ms, true
}
