package daemon

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/coord"
	"strait/internal/kafkatest"
	"strait/internal/mirror"
	"strait/internal/verify"
)

// ownedBy returns the partitions each daemon's share owns, and which
// holds the control duty.
func sharesOf(ds ...*Daemon) (units []int, control []bool) {
	for _, d := range ds {
		st := d.Status()
		n, c := 0, false
		for _, f := range st.Flows {
			if f.Share != nil {
				n += len(f.Share.Units)
				c = c || f.Share.Control
			}
		}
		units, control = append(units, n), append(control, c)
	}
	return units, control
}

// Two nodes with strait.cluster.enabled share a flow: the partitions split
// between them with one control holder, every record is copied once and in
// order; when one stops, the other takes over all of them.
func TestSharedFlowSplitsAndTakesOver(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(6, "orders"))
	src := client(t, a, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(t, src, "orders", 6, 0, 600)
	cfg := fakeConfig(t, a, b, "strait.cluster.enabled = true\nemit.heartbeats.enabled = false\n")

	logs := &kafkatest.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs)
		}
	})
	d1, stop1 := runDaemonWith(t, cfg, Options{Logger: log.With("node", 1)})
	waitRecords(t, b, "A.orders", 600)
	d2, stop2 := runDaemonWith(t, cfg, Options{Logger: log.With("node", 2)})
	kafkatest.Eventually(t, 60*time.Second, func() error {
		units, control := sharesOf(d1, d2)
		if units[0] != 3 || units[1] != 3 || control[0] == control[1] {
			return fmt.Errorf("partitions %v, control %v; want 3 each and one holder", units, control)
		}
		return nil
	})
	produce(t, src, "orders", 6, 600, 600)
	waitRecords(t, b, "A.orders", 1200)

	if err := stop1(); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 60*time.Second, func() error {
		units, control := sharesOf(d2)
		if units[0] != 6 || !control[0] {
			return fmt.Errorf("the remaining node owns %v partitions, control %v; want all 6 and the duty", units, control)
		}
		return nil
	})
	produce(t, src, "orders", 6, 1200, 600)
	waitRecords(t, b, "A.orders", 1800)
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
	srcRecs := kafkatest.ReadAll(t, a.ListenAddrs(), "orders", kgo.ReadCommitted())
	dstRecs := kafkatest.ReadAll(t, b.ListenAddrs(), "A.orders", kgo.ReadCommitted())
	for p := range srcRecs {
		if rep := verify.Compare(int32(p), srcRecs[p], dstRecs[p]); !rep.OK() || rep.Duplicates != 0 {
			t.Errorf("%v", rep)
		}
	}
}

// A partition's rate needs two samples a second apart under one mirror: a
// mirror run after a release counts bytes from zero, so its first sample
// starts a new measure instead of giving a negative or tiny rate (what the
// leader got after every rebuild before), and a second sample too soon
// gives nothing rather than 0.
func TestRatesRestartWithANewMirror(t *testing.T) {
	var r rateMeter
	m1, m2 := new(mirror.Mirror), new(mirror.Mirror)
	u := coord.Unit{Topic: "orders", Partition: 0}
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	steps := []struct {
		m     *mirror.Mirror
		bytes int64
		at    time.Time
		want  float64 // -1: unknown
	}{
		{m1, 1000, at(0), -1},
		{m1, 1500, at(500 * time.Millisecond), -1}, // too soon: nothing, not 0
		{m1, 3000, at(time.Second), 2000},
		{m1, 3100, at(1500 * time.Millisecond), 2000}, // too soon: the last rate
		{m2, 100, at(2 * time.Second), -1},            // a new mirror counts from 0
		{m2, 1100, at(3 * time.Second), 1000},
	}
	for i, s := range steps {
		got, ok := r.measure(s.m, map[coord.Unit]int64{u: s.bytes}, s.at)[u]
		if s.want < 0 && ok || s.want >= 0 && (!ok || got != s.want) {
			t.Fatalf("step %d: rate %v (known %v), want %v", i, got, ok, s.want)
		}
	}
}
