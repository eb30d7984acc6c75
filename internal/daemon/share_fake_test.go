package daemon

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
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
