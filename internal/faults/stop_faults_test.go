//go:build faults

package faults

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
	"strait/internal/verify"
)

// paths are the two data paths Strait copies a partition on.
var paths = []struct {
	name  string
	props string
}{
	{name: "fast path"},
	{name: "record path", props: "strait.fast.path = false"},
}

// TestSIGTERMWithTargetThrottled stops Strait with SIGTERM while its produce requests crawl
// to the target at 8 KiB/s, so the shutdown deadline (3 s) passes with records in flight.
// The stop still exits 0 in time, and the progress it stored covers only records the
// target acknowledged: a restart copies the rest with nothing lost, in order, and
// duplicates only what was copied but not committed at the stop.
func TestSIGTERMWithTargetThrottled(t *testing.T) {
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			f := flowA()
			topic := kafkatest.Name(t, "crawl")
			f.src.CreateTopic(t, topic, 4, nil)
			l := newLoad(t, f.src, topic, 4, 1000)
			l.produce(t, 4000)
			w := startWindow(t, f, l)
			cfg := f.config(t, topic, path.props)
			s := startStrait(t, "run", cfg, "--shutdown-timeout", "3s")
			l.start(t, 1000, 400_000)
			waitMoreProgress(t, f, topic, 0, time.Minute)

			for _, p := range f.dst.Proxies() {
				p.Bandwidth(t, kafkatest.Upstream, 8)
			}
			time.Sleep(3 * time.Second) // the crawl before the stop
			w.fault()
			began := time.Now()
			code := s.stop(t, syscall.SIGTERM, time.Minute)
			t.Logf("exit code %d, %v after SIGTERM", code, time.Since(began).Round(100*time.Millisecond))
			if code != 0 {
				t.Errorf("strait exited with %d after SIGTERM with a slow target, want 0", code)
			}
			if line := s.errorAbout(topic, 0, anything); line != "" {
				t.Logf("an error at the stop: %s", line)
			}
			w.waitSampled(t, time.Now().Add(windowLag))
			for _, p := range f.dst.Proxies() {
				p.Heal(t)
			}
			n := l.stop(t)
			again := startStrait(t, "run", cfg, "--shutdown-timeout", "10s")
			t.Logf("the restart caught up in %v (%d records)", waitCaughtUp(t, f, topic, nil, recoverTimeout).Round(100*time.Millisecond), n)
			stopCleanly(t, again)
			verifyWindow(t, f, topic, w)
		})
	}
}

// waitSampled waits until the window has sampled at or after at.
func (w *window) waitSampled(t *testing.T, at time.Time) {
	t.Helper()
	kafkatest.Eventually(t, 30*time.Second, func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		if n := len(w.samples); n > 0 && !w.samples[n-1].at.Before(at) {
			return nil
		}
		return fmt.Errorf("the window has not sampled since %v", at.Format(time.TimeOnly))
	})
}

// prefix checks the copies of one partition of a load whose source partition was cut
// (truncated, recreated, corrupt): they must be exactly the load's records 0, 1, 2, ...
// in order, re-sends of a run allowed, with no record missing before the last one copied.
// It returns the sequence number after the highest one copied, and whether they all passed.
func prefix(t *testing.T, what string, recs []*kgo.Record, l *load) (int64, bool) {
	t.Helper()
	next := int64(0) // the record expected next
	problems := 0
	for i, r := range recs {
		s := seqOf(r)
		var problem string
		switch {
		case s < 0 || !verify.Same(r, l.make(r.Partition, s)):
			problem = fmt.Sprintf("is not a record of the load, or altered: %.60q", r.Value)
		case s > next:
			problem = fmt.Sprintf("is source record %d, but %d was expected: records %d..%d are missing", s, next, next, s-1)
		}
		if problem != "" {
			if problems++; problems <= 5 {
				t.Errorf("%s: target record %d (offset %d) %s", what, i, r.Offset, problem)
			}
			if s < 0 {
				continue
			}
		}
		next = max(next, s+1)
	}
	if problems > 5 {
		t.Errorf("%s: %d more records like these", what, problems-5)
	}
	return next, problems == 0
}
