package mirror

// Exactly-once mode's ownership and failure edges. Each failed before its
// fix.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
	"strait/internal/tail"
)

// TestAdoptedWhileAnAttemptStartsReadsFreshProgress: a partition a shared
// mirror comes to own between its attempt's progress read and its first
// topic set starts from what its previous owner committed meanwhile, read
// again; it started from the stale read before the fix (60 of 100 records
// copied twice).
func TestAdoptedWhileAnAttemptStartsReadsFreshProgress(t *testing.T) {
	const group, indexTopic = "strait-A", "strait-index.A.internal"
	a := kafkatest.NewFake(t, kfake.SeedTopics(1, "t"))
	b := kafkatest.NewFake(t, kfake.SeedTopics(1, "A.t", indexTopic))
	src := newClient(t, a)
	produceN(t, src, "t", 100)
	// The previous owner X copied t[0] 0..99 to A.t (plain records, as
	// if committed) and had committed progress 40 so far.
	bcl := newClient(t, b)
	produceN(t, bcl, "A.t", 100)
	badm := kadm.NewClient(bcl)
	commit := func(at int64) {
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: "A.t", Partition: 0, At: at, LeaderEpoch: -1})
		if _, err := badm.CommitOffsets(context.Background(), group, offs); err != nil {
			t.Error(err)
		}
	}
	commit(40)

	var owned, hooked atomic.Bool
	// index.Load lists the index topic's end right after this attempt read
	// progress: X's final commit (progress 100) and the assignment that
	// gives t[0] to this node land meanwhile.
	b.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		b.KeepControl()
		if !hooked.Swap(true) {
			b.SleepControl(func() {
				commit(100)
				owned.Store(true)
			})
		}
		return nil, nil, false
	})

	dst := newClient(t, b, TransactionOpts()...)
	m := newTestMirror(t, Config{
		Flow: "A->B", Source: "A", Group: group, FlushInterval: 100 * time.Millisecond,
		AutoOffsetReset: "earliest", ReadCommitted: true, ShutdownTimeout: 5 * time.Second,
		IndexTopic: indexTopic, FastPath: true, Idempotent: true, Acks: -1,
		Transactions: &Transactions{ID: "strait-A-node", Interval: 100 * time.Millisecond, Timeout: 10 * time.Second},
	}, Deps{
		Clients: Clients{Source: newClient(t, a), Target: dst, Meta: newClient(t, b), IndexReader: newClient(t, b, tail.ClientOpts()...), SyncWriter: newClient(t, b)},
		Share:   Share{Owns: func(string, int32) bool { return owned.Load() }},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	m.Update([]Topic{{Source: "t", Remote: "A.t", Partitions: 1}}, nil)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		p := m.partition("t", 0)
		if p == nil {
			return fmt.Errorf("t[0] not started")
		}
		if _, _, committed, err := p.snapshot(); err != nil || committed < 100 {
			return fmt.Errorf("t[0] committed %d (%v)", committed, err)
		}
		return nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	recs := kafkatest.ReadAll(t, b.ListenAddrs(), "A.t", kgo.ReadCommitted())
	if n := len(recs[0]); n != 100 {
		t.Fatalf("A.t holds %d records for the 100 of t: %d copied twice", n, n-100)
	}
}
