//go:build faults

package faults

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
	"strait/internal/mirror/fastpath"
	"strait/internal/preserve"
)

// TestPreservedOffsetsThroughKills copies, with strait.offsets.preserve, a plain topic
// whose source log starts at 1,000,000, a transactional topic with aborted transactions
// and a compacted topic with the cleaner's holes, with three nodes sharing the flow,
// while the plain and transactional loads write and ten kill -9s hit the nodes in turn,
// each restarted at once. Afterwards Apache Kafka's Java consumer reads, read_committed,
// the same records at the same offsets on both sides, every remote partition ends where
// its source partition does, and no partition stopped: progress is the target's log
// end, so a restart resumes exactly where the target ends.
func TestPreservedOffsetsThroughKills(t *testing.T) {
	f := flowA()
	prefix := kafkatest.Name(t, "keep")
	plain, txn, compacted := prefix+"-plain", prefix+"-txn", prefix+"-compacted"
	f.src.CreateTopic(t, plain, 3, nil)
	f.src.CreateTopic(t, txn, 3, nil)
	f.src.CreateTopic(t, compacted, 1, kafkatest.CompactedConfig())
	starts := preserve.NewGaps(f.src.Client(t, fastpath.TransactionOpts()...), prefix+"-start", time.Minute)
	if err := starts.StartAt(t.Context(), []preserve.Start{{Topic: plain, Partition: 0, At: 1_000_000}})[0]; err != nil {
		t.Fatal(err)
	}
	kafkatest.CompactWithHoles(t, f.src, compacted)

	l := newLoad(t, f.src, plain, 3, 100)
	l.start(t, 600, 600*120) // ends by itself after two minutes
	tl, stopTxn := startTxnLoad(t, f.src, txn, 3)

	ns := newNodes(t, f.config(t, prefix+"-.*", append(f.sharedProps(), "A->B.strait.offsets.preserve = true")...))
	live := []*node{ns.start("n1"), ns.start("n2"), ns.start("n3")}
	waitMoreProgress(t, f, plain, 0, time.Minute)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for i := range 10 {
		// 0.5 to 2 s of copying, then the next node in turn dies mid-copy and comes back.
		time.Sleep(time.Second/2 + time.Duration(rng.Int64N(int64(3*time.Second/2)))) // the fault's timing, not a wait for a state
		victim := live[i%len(live)]
		ns.kill(victim)
		live[i%len(live)] = ns.start(victim.base())
		t.Logf("kill -9 %d: %s, restarted as %s", i+1, victim.name, live[i%len(live)].name)
	}
	l.stop(t)
	stopTxn()
	t.Logf("loads: %d plain records; %d transactions committed, %d aborted, %d failed", l.total(), tl.committed, tl.aborted, tl.failed)

	for _, topic := range []string{plain, txn, compacted} {
		remote := f.remote(topic)
		kafkatest.Eventually(t, 3*time.Minute, func() error {
			se, de := f.src.EndOffsets(t, topic, kgo.ReadUncommitted()), f.dst.EndOffsets(t, remote, kgo.ReadUncommitted())
			if fmt.Sprint(se) != fmt.Sprint(de) {
				return fmt.Errorf("%s ends at %v on the source, %s at %v on the target", topic, se, remote, de)
			}
			return nil
		})
		if diff := env.CompareWithJava(t, f.src, topic, f.dst, remote); diff != "" {
			t.Error(diff)
		}
	}
	if s := f.dst.StartOffsets(t, f.remote(plain))[0]; s != 1_000_000 {
		t.Errorf("the remote partition of the plain topic starts at %d, want 1000000 like the source", s)
	}
	for _, n := range ns.all {
		for _, line := range n.s.logs() {
			if line.level() == "ERROR" {
				t.Errorf("%s logged an error: %v", n.name, line.attrs)
			}
		}
	}
	for _, n := range live {
		v, err := n.s.flowView(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		if v.StoppedPartitions != 0 {
			t.Errorf("%s: %d partitions stopped", n.name, v.StoppedPartitions)
		}
	}
	if t.Failed() {
		for _, n := range ns.all {
			t.Logf("%s:\n%s", n.name, tail(strings.TrimSpace(n.s.out.String()), 30))
		}
	}
}
