package daemon

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/index"
	"strait/internal/kafkatest"
	"strait/internal/mirror"
	"strait/internal/offsets"
	"strait/internal/tail"
	"strait/internal/verify"
)

// TestAbortedTransactionsAreCopiedAgainOnce fails every third EndTxn of
// exactly-once mode on the target, after the transaction's data, offset
// index records and progress were written into it: each failure ends the
// attempt, the transaction is aborted when the next attempt fences it, and
// the next attempt starts from the last committed transaction. The target,
// read with read_committed, holds every source record once and in order,
// and the committed progress is the source's end: progress written in an
// aborted transaction never counts.
func TestAbortedTransactionsAreCopiedAgainOnce(t *testing.T) {
	a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(4, "orders"))
	var ends atomic.Int64
	var injecting atomic.Bool
	injecting.Store(true)
	failed := failEndTxnCommits(b, func() bool { return injecting.Load() && ends.Add(1)%3 == 0 })
	src := client(t, a, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	const total = 8000
	cfg := fakeConfig(t, a, b, "strait.exactly.once = true\nB.offset.flush.interval.ms = 50")
	d, stop := runDaemon(t, cfg)
	for from := 0; from < total; from += 200 {
		produce(t, src, "orders", 4, from, 200)
		time.Sleep(50 * time.Millisecond) // spread the records over many transactions
	}
	waitProgressAtEnd(t, a, b, d, "orders", time.Minute)
	st := flowStatus(d)
	// The last transaction, at the stop, commits: no failure is injected
	// once one more attempt has committed after the last injection.
	injecting.Store(false)
	aborts := flowStatus(d).AbortedTransactions
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if now := flowStatus(d); now.AbortedTransactions != aborts || now.Transactions <= st.Transactions {
			aborts, st = now.AbortedTransactions, now
			return fmt.Errorf("waiting for a commit after the last abort")
		}
		return nil
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if failed.Load() < 2 || st.AbortedTransactions < 2 || st.Transactions == 0 {
		t.Fatalf("%d EndTxn failed, %d attempts aborted, %d transactions committed: the test did not abort enough", failed.Load(), st.AbortedTransactions, st.Transactions)
	}
	srcRecs := kafkatest.ReadAll(t, a.ListenAddrs(), "orders", kgo.ReadCommitted())
	dstRecs := kafkatest.ReadAll(t, b.ListenAddrs(), "A.orders", kgo.ReadCommitted())
	idx, err := index.Load(t.Context(), client(t, b, tail.ClientOpts()...), index.TopicName("A"))
	if err != nil {
		t.Fatal(err)
	}
	for p := range srcRecs {
		if rep := verify.Compare(int32(p), srcRecs[p], dstRecs[p]); !rep.OK() || rep.Duplicates != 0 {
			t.Errorf("orders[%d]: %v", p, rep)
		}
		// The index maps each source record to its committed copy, never
		// to a copy an aborted transaction left.
		byOffset := map[int64]*kgo.Record{}
		for _, r := range dstRecs[p] {
			byOffset[r.Offset] = r
		}
		for _, r := range srcRecs[p] {
			tgt, res := idx.Translate("orders", int32(p), r.Offset)
			if res != offsets.Exact || byOffset[tgt] == nil || !verify.Same(r, byOffset[tgt]) {
				t.Fatalf("orders[%d]: source offset %d translates to %d (%v), which is not its committed copy", p, r.Offset, tgt, res)
			}
		}
	}
}

// failEndTxnCommits answers UNKNOWN_SERVER_ERROR, on target b, to every
// EndTxn that commits while fail says so (kfake ends the others), and
// returns the count of those it failed.
func failEndTxnCommits(b *kfake.Cluster, fail func() bool) *atomic.Int64 {
	var failed atomic.Int64
	b.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		b.KeepControl()
		r := req.(*kmsg.EndTxnRequest)
		if !r.Commit || !fail() {
			return nil, nil, false
		}
		failed.Add(1)
		resp := r.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.UnknownServerError.Code
		return resp, nil, true
	})
	return &failed
}

// waitProgressAtEnd waits until the flow A->B's committed progress reaches
// the end of every partition of topic on a, as listed now.
func waitProgressAtEnd(t *testing.T, a, b *kfake.Cluster, d *Daemon, topic string, timeout time.Duration) {
	t.Helper()
	srcEnds, err := kadm.NewClient(client(t, a)).ListEndOffsets(t.Context(), topic)
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(client(t, b))
	kafkatest.Eventually(t, timeout, func() error {
		st := flowStatus(d)
		stored, err := adm.FetchOffsets(t.Context(), ProgressGroup("A"))
		if err != nil {
			return fmt.Errorf("%w (%d transactions committed, %d aborted)", err, st.Transactions, st.AbortedTransactions)
		}
		var lag error
		srcEnds.Each(func(o kadm.ListedOffset) {
			if s, ok := stored.Lookup("A."+topic, o.Partition); !ok || s.At < o.Offset {
				lag = fmt.Errorf("%s[%d]: progress %d of %d (%d transactions committed, %d aborted)", topic, o.Partition, s.At, o.Offset, st.Transactions, st.AbortedTransactions)
			}
		})
		return lag
	})
}

// flowStatus is the status of the daemon's only replicating flow.
func flowStatus(d *Daemon) mirror.Status {
	if st := d.Status(); len(st.Flows) > 0 {
		return st.Flows[0].Mirror
	}
	return mirror.Status{}
}
