//go:build faults

package faults

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

const (
	// recoverTimeout bounds how long after a fault heals Strait may take to copy
	// everything written until then (the plan's T_recover).
	recoverTimeout = 60 * time.Second
	// reconnectTimeout bounds how long Strait may take to store new progress after a
	// broker is back.
	reconnectTimeout = 30 * time.Second
)

// bounce stops broker b (SIGTERM, or SIGKILL with kill), keeps it down for hold and starts
// it again. If the test ends in between, the broker is started at cleanup, so the next
// test finds it up.
func bounce(t *testing.T, b *kafkatest.Broker, kill bool, hold time.Duration) {
	t.Helper()
	up := false
	t.Cleanup(func() {
		if !up {
			b.Start(t)
		}
	})
	b.Stop(t, kill)
	time.Sleep(hold) // the fault's duration, not a wait for anything
	b.Start(t)
	up = true
}

// waitMoreProgress waits until the stored progress of topic, summed over its partitions,
// exceeds prev, and returns the new sum.
func waitMoreProgress(t *testing.T, f flow, topic string, prev int64, timeout time.Duration) int64 {
	t.Helper()
	var sum int64
	kafkatest.Eventually(t, timeout, func() error {
		got, err := storedProgress(t, f, topic)
		if err != nil {
			return err
		}
		sum = 0
		for _, o := range got {
			sum += o
		}
		if sum <= prev {
			return fmt.Errorf("stored progress of %s is %d, waiting for more than %d", f.remote(topic), sum, prev)
		}
		return nil
	})
	return sum
}

// stopCleanly sends SIGTERM and expects exit code 0 within the shutdown timeout and grace.
func stopCleanly(t *testing.T, s *strait) {
	t.Helper()
	if code := s.stop(t, syscall.SIGTERM, time.Minute); code != 0 {
		t.Errorf("strait exited with %d after SIGTERM, want 0", code)
	}
}

// TestBrokerBounce bounces the source broker (SIGTERM, then SIGKILL) and the target broker
// (the same) while Strait copies a steady load, each down for 3 s: Strait reconnects after
// each, loses nothing, keeps the order, and duplicates only records copied but not
// committed when a bounce hit.
func TestBrokerBounce(t *testing.T) {
	f := flowA()
	topic := kafkatest.Name(t, "bounce")
	f.src.CreateTopic(t, topic, 6, nil)
	l := newLoad(t, f.src, topic, 6, 100)
	l.produce(t, 6000)
	w := startWindow(t, f, l)
	s := startStrait(t, "run", f.config(t, topic), "--shutdown-timeout", "10s")
	progress := waitMoreProgress(t, f, topic, 0, time.Minute)
	l.start(t, 2000, 400_000)

	for _, b := range []struct {
		role string
		c    *kafkatest.Cluster
		kill bool
	}{
		{"source", f.src, false},
		{"source", f.src, true},
		{"target", f.dst, false},
		{"target", f.dst, true},
	} {
		w.fault()
		began := time.Now()
		bounce(t, b.c.Brokers[0], b.kill, 3*time.Second)
		progress = waitMoreProgress(t, f, topic, progress, reconnectTimeout)
		t.Logf("%s broker bounced (kill %v): new progress stored %v after the stop", b.role, b.kill, time.Since(began).Round(100*time.Millisecond))
	}
	n := l.stop(t)
	t.Logf("caught up %v after the load stopped (%d records)", waitCaughtUp(t, f, topic, nil, recoverTimeout).Round(100*time.Millisecond), n)
	stopCleanly(t, s)
	verifyWindow(t, f, topic, w)
}

// TestTargetUnreachable makes the target unreachable for 60 s while the load goes on:
// 30 s black-holed (connections open, nothing answers), then 30 s refused (every
// connection reset, the listener closed). After the target is back, Strait copies
// everything within 60 s, with nothing lost.
func TestTargetUnreachable(t *testing.T) {
	f := flowA()
	topic := kafkatest.Name(t, "unreachable")
	f.src.CreateTopic(t, topic, 4, nil)
	l := newLoad(t, f.src, topic, 4, 200)
	w := startWindow(t, f, l)
	s := startStrait(t, "run", f.config(t, topic), "--shutdown-timeout", "10s")
	l.start(t, 1000, 400_000)
	waitMoreProgress(t, f, topic, 0, time.Minute)

	w.fault()
	for _, p := range f.dst.Proxies() {
		p.Blackhole(t)
	}
	time.Sleep(30 * time.Second) // the outage
	for _, p := range f.dst.Proxies() {
		p.Heal(t)
		p.Refuse(t)
	}
	time.Sleep(30 * time.Second) // the outage
	t.Logf("strait's peak RSS by the end of the outage: %.0f MiB", float64(s.peakRSS(t))/(1<<20))
	for _, p := range f.dst.Proxies() {
		p.Heal(t)
	}
	n := l.stop(t)
	t.Logf("caught up %v after the target came back (%d records)", waitCaughtUp(t, f, topic, nil, recoverTimeout).Round(100*time.Millisecond), n)
	stopCleanly(t, s)
	verifyWindow(t, f, topic, w)
}

// TestSlowLinks adds 200 ± 50 ms of latency each way on the source and the target links
// for 20 s of load: slower, but nothing lost, reordered or (the idempotent producer
// absorbing retries) duplicated beyond the uncommitted window.
func TestSlowLinks(t *testing.T) {
	f := flowA()
	topic := kafkatest.Name(t, "slow")
	f.src.CreateTopic(t, topic, 4, nil)
	l := newLoad(t, f.src, topic, 4, 200)
	w := startWindow(t, f, l)
	s := startStrait(t, "run", f.config(t, topic), "--shutdown-timeout", "10s")
	l.start(t, 1000, 400_000)
	progress := waitMoreProgress(t, f, topic, 0, time.Minute)

	w.fault()
	for _, p := range append(f.src.Proxies(), f.dst.Proxies()...) {
		p.Latency(t, kafkatest.Both, 200*time.Millisecond, 50*time.Millisecond)
	}
	time.Sleep(20 * time.Second) // the fault
	// Replication went on under the latency.
	waitMoreProgress(t, f, topic, progress, reconnectTimeout)
	for _, p := range append(f.src.Proxies(), f.dst.Proxies()...) {
		p.Heal(t)
	}
	n := l.stop(t)
	t.Logf("caught up %v after the latency ended (%d records)", waitCaughtUp(t, f, topic, nil, recoverTimeout).Round(100*time.Millisecond), n)
	stopCleanly(t, s)
	verifyWindow(t, f, topic, w)
}

// TestConnectionResets resets every connection of Strait to the source and the target
// every 3 s for 21 s while it copies.
func TestConnectionResets(t *testing.T) {
	f := flowA()
	topic := kafkatest.Name(t, "resets")
	f.src.CreateTopic(t, topic, 4, nil)
	l := newLoad(t, f.src, topic, 4, 200)
	w := startWindow(t, f, l)
	s := startStrait(t, "run", f.config(t, topic), "--shutdown-timeout", "10s")
	l.start(t, 2000, 400_000)
	progress := waitMoreProgress(t, f, topic, 0, time.Minute)

	for range 7 {
		time.Sleep(3 * time.Second) // between resets
		w.fault()
		for _, p := range append(f.src.Proxies(), f.dst.Proxies()...) {
			p.Reset(t)
		}
	}
	waitMoreProgress(t, f, topic, progress, reconnectTimeout)
	n := l.stop(t)
	t.Logf("caught up %v after the last reset (%d records)", waitCaughtUp(t, f, topic, nil, recoverTimeout).Round(100*time.Millisecond), n)
	stopCleanly(t, s)
	// The fast path resends a partition's pipelined batches with their
	// sequence numbers after a reset, and the target answers those it has
	// with their offsets: within one run there is no duplicate at all.
	for _, rep := range verifyWindow(t, f, topic, w) {
		if rep.Duplicates != 0 {
			t.Errorf("%s[%d]: %d duplicates from connection resets within one run of the fast path (%d replays)", topic, rep.Partition, rep.Duplicates, rep.Replays)
		}
	}
}

// txnLoad writes transactions of 20 records across the partitions of a topic, aborting
// every third, until stopped. A transaction that fails (its coordinator or a leader moved)
// is aborted, or the producer is replaced; the source log read read_committed is the
// ground truth, so any outcome is fine as long as Strait copies exactly the committed ones.
type txnLoad struct {
	*load
	committed, aborted, failed int
}

func startTxnLoad(t *testing.T, c *kafkatest.Cluster, topic string, partitions int32) (*txnLoad, func()) {
	t.Helper()
	l := &txnLoad{load: newLoad(t, c, topic, partitions, 100, kgo.TransactionalID(topic), kgo.TransactionTimeout(10*time.Second))}
	l.running = false // the loop below owns its flushing
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-l.stopCh:
				return
			case <-time.After(20 * time.Millisecond):
			}
			l.transaction(t, i%3 != 0)
		}
	}()
	var once bool
	stop := func() {
		if !once {
			once = true
			l.stopOnce.Do(func() { close(l.stopCh) })
			<-done
		}
	}
	t.Cleanup(stop)
	return l, stop
}

func (l *txnLoad) transaction(t *testing.T, commit bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.cl.BeginTransaction(); err != nil {
		l.failed++
		return
	}
	var rs []*kgo.Record
	l.mu.Lock()
	for i := range 20 {
		rs = append(rs, l.record(int32(i)%l.partitions))
	}
	l.mu.Unlock()
	var perr error
	for _, r := range l.cl.ProduceSync(ctx, rs...) {
		if r.Err != nil {
			perr = r.Err
			continue
		}
		l.promise(r.Record, nil)
	}
	if perr != nil {
		commit = false
		_ = l.cl.AbortBufferedRecords(ctx)
	}
	if err := l.cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		l.failed++
		t.Logf("ending a transaction of %s (commit %v) failed, the producer goes on: %v", l.topic, commit, err)
		return
	}
	if commit {
		l.committed++
	} else {
		l.aborted++
	}
}

// TestSourceLeaderChange moves the leaders of a replicated source topic (three brokers,
// replication factor 3) while Strait copies it on the fast path, with a plain and a
// transactional topic (a third of the transactions aborted): a broker stopped cleanly, a
// preferred leader election moving the leaders back, a broker killed. Nothing is lost,
// nothing aborted is copied, and the order is kept.
func TestSourceLeaderChange(t *testing.T) {
	f := flowC()
	plain, txn := kafkatest.Name(t, "leader"), kafkatest.Name(t, "leadertxn")
	f.src.CreateReplicatedTopic(t, plain, 6, 3, nil)
	f.src.CreateReplicatedTopic(t, txn, 3, 3, nil)
	l := newLoad(t, f.src, plain, 6, 100)
	l.produce(t, 6000)
	tl, stopTxn := startTxnLoad(t, f.src, txn, 3)
	wp := startWindow(t, f, l)
	wt := startWindow(t, f, tl.load)
	s := startStrait(t, "run", f.config(t, plain+"|"+txn), "--shutdown-timeout", "10s")
	progress := waitMoreProgress(t, f, plain, 0, time.Minute)
	waitMoreProgress(t, f, txn, 0, time.Minute)
	l.start(t, 1000, 400_000)

	moved := func(what string, before *kafkatest.Broker) {
		t.Helper()
		kafkatest.Eventually(t, 30*time.Second, func() error {
			if now := f.src.Leader(t, plain, 0); now.ID == before.ID {
				return fmt.Errorf("%s: broker %d still leads %s[0]", what, now.ID, plain)
			}
			return nil
		})
		progress = waitMoreProgress(t, f, plain, progress, reconnectTimeout)
	}

	// 1. The leader of partition 0 stops cleanly: its leaderships move at once.
	leader := f.src.Leader(t, plain, 0)
	wp.fault()
	wt.fault()
	leader.Stop(t, false)
	moved("clean stop", leader)
	leader.Start(t)

	// 2. A preferred leader election moves them back once the broker is in sync again.
	wp.fault()
	wt.fault()
	kafkatest.Eventually(t, time.Minute, func() error {
		res, err := f.src.Admin(t).ElectLeaders(t.Context(), kadm.ElectPreferredReplica, kadm.TopicsSet{plain: {0: {}, 1: {}, 2: {}, 3: {}, 4: {}, 5: {}}, txn: {0: {}, 1: {}, 2: {}}})
		if err != nil {
			return err
		}
		if f.src.Leader(t, plain, 0).ID != leader.ID {
			return fmt.Errorf("broker %d does not lead %s[0] again yet (%d results)", leader.ID, plain, len(res))
		}
		return nil
	})
	progress = waitMoreProgress(t, f, plain, progress, reconnectTimeout)

	// 3. The leader of partition 1 is killed: leadership moves once its session expires.
	leader = f.src.Leader(t, plain, 1)
	wp.fault()
	wt.fault()
	up := false
	t.Cleanup(func() {
		if !up {
			leader.Start(t)
		}
	})
	leader.Stop(t, true)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if now := f.src.Leader(t, plain, 1); now.ID == leader.ID {
			return fmt.Errorf("killed broker %d still leads %s[1]", now.ID, plain)
		}
		return nil
	})
	progress = waitMoreProgress(t, f, plain, progress, reconnectTimeout)
	leader.Start(t)
	up = true

	n := l.stop(t)
	stopTxn()
	t.Logf("transactions: %d committed, %d aborted, %d failed", tl.committed, tl.aborted, tl.failed)
	t.Logf("caught up %v after the load stopped (%d plain records)", waitCaughtUp(t, f, plain, nil, recoverTimeout).Round(100*time.Millisecond), n)
	waitCaughtUp(t, f, txn, nil, recoverTimeout)
	stopCleanly(t, s)
	verifyWindow(t, f, plain, wp)
	verifyWindow(t, f, txn, wt)
}
