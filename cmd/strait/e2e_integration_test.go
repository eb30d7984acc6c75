//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

var env *kafkatest.Env

func TestMain(m *testing.M) {
	os.Exit(kafkatest.RunWith(m, kafkatest.Options{Clusters: 2, Security: true, Kerberos: true}, &env))
}

// TestReplicatesTopicsEndToEnd is the foundation scenario: 3 topics x 6
// partitions and 200,000 keyed records with headers are copied with every
// field intact and in order; a topic created while running and partitions
// added while running are picked up.
func TestReplicatesTopicsEndToEnd(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	prefix := kafkatest.Name(t, "e2e")
	var loads []*workload
	for i := 0; i < 3; i++ {
		w := &workload{topic: fmt.Sprintf("%s-%d", prefix, i), partitions: 6}
		a.CreateTopic(t, w.topic, 6, nil)
		loads = append(loads, w)
	}
	prod := producer(t, a)
	for _, w := range loads {
		w.produce(t, prod, 200_000/3)
	}

	cfg := writeConfig(t, fmt.Sprintf("topics = %s.*", prefix))
	p := startStrait(t, "run", cfg)
	for _, w := range loads {
		waitCopied(t, w.topic, "A."+w.topic, nil, 2*time.Minute)
	}

	// A topic created while running is replicated within 15 s.
	late := &workload{topic: prefix + "-late", partitions: 2}
	a.CreateTopic(t, late.topic, 2, nil)
	late.produce(t, prod, 100)
	created := time.Now()
	waitCopied(t, late.topic, "A."+late.topic, nil, 15*time.Second)
	t.Logf("topic created while running was replicated after %s", time.Since(created).Round(100*time.Millisecond))

	// Partitions added on the source appear on the target, and data flows into them.
	grow := loads[0]
	if _, err := a.Admin(t).UpdatePartitions(t.Context(), 9, grow.topic); err != nil {
		t.Fatal(err)
	}
	grow.partitions = 9
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if n := len(endOffsets(t, a, grow.topic)); n != 9 {
			return fmt.Errorf("source topic has %d partitions", n)
		}
		return nil
	})
	grow.produce(t, producer(t, a), 900) // a new client sees the new partitions
	kafkatest.Eventually(t, 30*time.Second, func() error {
		if n := len(endOffsets(t, b, "A."+grow.topic)); n != 9 {
			return fmt.Errorf("remote topic has %d partitions, want 9", n)
		}
		return nil
	})
	waitCopied(t, grow.topic, "A."+grow.topic, nil, time.Minute)

	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatalf("strait exited with %v after SIGTERM", err)
	}
	total := 0
	for _, w := range append(loads, late) {
		for _, rep := range compare(t, w.topic, "A."+w.topic, kgo.ReadCommitted()) {
			if rep.Duplicates != 0 {
				t.Errorf("%s: %d duplicates without any restart", w.topic, rep.Duplicates)
			}
			total += rep.Target
		}
	}
	t.Logf("verified %d records: nothing lost, reordered or altered", total)
}

// TestRestartAfterSIGTERMHasNoDuplicates stops Strait cleanly while records
// flow and restarts it: each restart resumes exactly where it stopped.
func TestRestartAfterSIGTERMHasNoDuplicates(t *testing.T) {
	a := env.Clusters[0]
	w := &workload{topic: kafkatest.Name(t, "sigterm"), partitions: 6}
	a.CreateTopic(t, w.topic, 6, nil)
	cfg := writeConfig(t, "topics = "+w.topic)

	stopLoad := startLoad(t, w, producer(t, a))
	for round := 0; round < 3; round++ {
		p := startStrait(t, "run", cfg)
		waitProgress(t, "A."+w.topic, 0)
		sleepBriefly(t, round)
		if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
			t.Fatalf("round %d: exit %v after SIGTERM", round, err)
		}
	}
	produced := stopLoad()
	p := startStrait(t, "run", cfg)
	waitCaughtUp(t, w.topic, "A."+w.topic, time.Minute)
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, rep := range compare(t, w.topic, "A."+w.topic, kgo.ReadCommitted()) {
		if rep.Duplicates != 0 {
			t.Errorf("partition %d: %d duplicates after clean restarts", rep.Partition, rep.Duplicates)
		}
	}
	t.Logf("3 SIGTERM restarts under load (%d records): no duplicates", produced)
}

// startLoad writes records in the background until the returned function
// is called, and returns how many were written. The load is paced (at most
// 500 records every loadPace) and bounded (loadLimit): it must last through
// restarts whose group joins wait out a killed node's session, without
// piling up more records than the checks can read back.
func startLoad(t *testing.T, w *workload, cl *kgo.Client) func() int {
	t.Helper()
	const (
		loadPace  = 50 * time.Millisecond
		loadLimit = 3 * time.Minute
	)
	stop := make(chan struct{})
	done := make(chan int)
	var loadErr error
	go func() {
		n := 0
		pace := time.NewTicker(loadPace)
		defer pace.Stop()
		limit := time.After(loadLimit)
		for loadErr == nil {
			select {
			case <-stop:
				done <- n
				return
			case <-limit:
				<-stop
				done <- n
				return
			case <-pace.C:
			}
			loadErr = w.write(context.Background(), cl, 500)
			n += 500
		}
		<-stop
		done <- n
	}()
	var once sync.Once
	var n int
	f := func() int {
		once.Do(func() {
			close(stop)
			n = <-done
			if loadErr != nil {
				t.Errorf("background load: %v", loadErr)
			}
		})
		return n
	}
	t.Cleanup(func() { f() })
	return f
}

// waitProgress waits until the stored progress of a remote topic exceeds prev.
func waitProgress(t *testing.T, remote string, prev int64) {
	t.Helper()
	kafkatest.Eventually(t, time.Minute, func() error {
		stored, err := storedProgress(t, "strait-A", remote)
		if err != nil {
			return err
		}
		if n := sum(stored); n <= prev {
			return fmt.Errorf("stored progress %d, waiting for more than %d", n, prev)
		}
		return nil
	})
}

// sleepBriefly varies the moment of a fault between rounds (0-600 ms). It
// is not synchronisation: any moment is a valid one.
func sleepBriefly(t *testing.T, round int) {
	t.Helper()
	time.Sleep(time.Duration(round*300%700) * time.Millisecond)
}

// TestRestartAfterSIGKILLLosesNothing kills Strait hard while it copies: a
// restart resumes exactly at the stored progress, so nothing is lost and the
// only duplicates are the records copied after the last progress commit.
func TestRestartAfterSIGKILLLosesNothing(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	w := &workload{topic: kafkatest.Name(t, "sigkill"), partitions: 6}
	remote := "A." + w.topic
	a.CreateTopic(t, w.topic, 6, nil)
	cfg := writeConfig(t, "topics = "+w.topic)
	stopLoad := startLoad(t, w, producer(t, a))

	type restart struct {
		targetEnd map[int32]int64 // where the next run's copies begin on the target
		stored    map[int32]int64 // progress stored when the previous run died
	}
	var (
		restarts []restart
		window   int64 // records copied after the last commit, summed over kills
		stored   map[int32]int64
	)
	for round := 0; round < 3; round++ {
		restarts = append(restarts, restart{targetEnd: endOffsets(t, b, remote), stored: stored})
		p := startStrait(t, "run", cfg)
		// Kill once this run stored progress of its own, while records
		// keep arriving.
		waitProgress(t, remote, sum(stored))
		sleepBriefly(t, round+1)
		_ = p.stop(t, syscall.SIGKILL, 30*time.Second)
		// While Strait is dead: what it copied beyond the stored progress
		// is the window that will be copied again.
		stored = committedProgress(t, "strait-A", remote)
		for part, next := range sourceOffsetsCopied(t, w.topic, remote) {
			window += max(0, next-stored[part])
		}
	}
	restarts = append(restarts, restart{targetEnd: endOffsets(t, b, remote), stored: stored})
	stopLoad()
	p := startStrait(t, "run", cfg)
	waitCaughtUp(t, w.topic, remote, 2*time.Minute)
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}

	var dups int64
	for _, rep := range compare(t, w.topic, remote, kgo.ReadCommitted()) {
		dups += int64(rep.Duplicates)
	}
	// Each restart's first copy is exactly the record at the stored progress.
	src := a.ReadAll(t, w.topic, kgo.ReadCommitted())
	dst := b.ReadAll(t, remote, kgo.ReadCommitted())
	for k, rs := range restarts[1:] {
		for part := range dst {
			at := rs.targetEnd[int32(part)]
			if at >= int64(len(dst[part])) {
				continue // this run copied nothing to the partition
			}
			want := rs.stored[int32(part)] // 0 when nothing was stored
			if got := dst[part][at]; string(got.Value) != string(src[part][want].Value) {
				t.Errorf("restart %d, partition %d: first copy is %q, want source offset %d %q", k+1, part, got.Value, want, src[part][want].Value)
			}
		}
	}
	t.Logf("3 SIGKILLs: %d duplicates; uncommitted windows at the kills held %d records", dups, window)
	if dups > window {
		t.Errorf("%d duplicates exceed the uncommitted windows (%d records)", dups, window)
	}
}

func sum(m map[int32]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// sourceOffsetsCopied returns, per partition, the source offset after the
// last record on the target (records are matched by their unique value).
func sourceOffsetsCopied(t *testing.T, source, remote string) map[int32]int64 {
	t.Helper()
	a, b := env.Clusters[0], env.Clusters[1]
	src := a.ReadAll(t, source, kgo.ReadCommitted())
	dst := b.ReadAll(t, remote, kgo.ReadCommitted())
	out := map[int32]int64{}
	for p := range dst {
		if len(dst[p]) == 0 {
			continue
		}
		last := dst[p][len(dst[p])-1]
		for _, r := range src[p] {
			if string(r.Value) == string(last.Value) && string(r.Key) == string(last.Key) {
				out[int32(p)] = r.Offset + 1
			}
		}
	}
	return out
}

// TestAbortedTransactionsAreNotCopied writes with a transactional producer
// that aborts some transactions: only committed records reach the target.
func TestAbortedTransactionsAreNotCopied(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "txn")
	a.CreateTopic(t, topic, 3, nil)
	txn := a.Client(t, kgo.TransactionalID(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := t.Context()
	committed := 0
	for i := 0; i < 60; i++ {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 50; j++ {
			r := &kgo.Record{Topic: topic, Partition: int32(j % 3), Value: []byte(fmt.Sprintf("txn-%d-%d", i, j))}
			if err := txn.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		commit := i%3 != 0
		if commit {
			committed += 50
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := writeConfig(t, "topics = "+topic)
	p := startStrait(t, "run", cfg)
	kafkatest.Eventually(t, time.Minute, func() error {
		if n := sum(endOffsets(t, b, "A."+topic)); n < int64(committed) {
			return fmt.Errorf("%d of %d committed records copied", n, committed)
		}
		return nil
	})
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, recs := range b.ReadAll(t, "A."+topic, kgo.ReadUncommitted()) {
		for _, r := range recs {
			var i, j int
			fmt.Sscanf(string(r.Value), "txn-%d-%d", &i, &j)
			if i%3 == 0 {
				t.Errorf("record %q of an aborted transaction reached the target", r.Value)
			}
			n++
		}
	}
	if n != committed {
		t.Errorf("target holds %d records, want the %d committed ones", n, committed)
	}
	compare(t, topic, "A."+topic, kgo.ReadCommitted())
}

// TestUnreachableBootstrapFailsClearly checks the error names the alias and
// the address, with a non-zero exit.
func TestUnreachableBootstrapFailsClearly(t *testing.T) {
	b := env.Clusters[1]
	cfg := fmt.Sprintf("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = %s\nA->B.enabled = true\nreplication.factor = 1\n", b.Bootstrap)
	path := t.TempDir() + "/mm2.properties"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startStrait(t, "run", path)
	err := p.wait(t, time.Minute)
	if err == nil {
		t.Fatal("strait exited 0 with an unreachable source")
	}
	out := p.out.String()
	if !strings.Contains(out, `cluster "A"`) || !strings.Contains(out, "127.0.0.1:1") {
		t.Fatalf("error does not name the alias and address:\n%s", out)
	}
}

// TestExistingSmallerTargetTopicIsReported pre-creates a remote topic with
// fewer partitions: that topic gets a clear error, the others keep flowing.
func TestExistingSmallerTargetTopicIsReported(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	prefix := kafkatest.Name(t, "small")
	bad, good := &workload{topic: prefix + "-bad", partitions: 4}, &workload{topic: prefix + "-good", partitions: 4}
	a.CreateTopic(t, bad.topic, 4, nil)
	a.CreateTopic(t, good.topic, 4, nil)
	b.CreateTopic(t, "A."+bad.topic, 2, nil)
	prod := producer(t, a)
	bad.produce(t, prod, 400)
	good.produce(t, prod, 400)

	p := startStrait(t, "run", writeConfig(t, "topics = "+prefix+".*"))
	waitCopied(t, good.topic, "A."+good.topic, nil, time.Minute)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		out := p.out.String()
		if !strings.Contains(out, "A."+bad.topic) || !strings.Contains(out, "already exists on the target with 2 partitions") {
			return fmt.Errorf("no clear error for %s yet", bad.topic)
		}
		return nil
	})
	if n := endOffsets(t, b, "A."+bad.topic); n[0]+n[1] != 0 {
		t.Errorf("records were written to the foreign topic: %v", n)
	}
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}
}

// TestAutoOffsetResetLatest starts a new flow at the end of the source, as
// MM2 does with auto.offset.reset=latest.
func TestAutoOffsetResetLatest(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	w := &workload{topic: kafkatest.Name(t, "latest"), partitions: 2}
	a.CreateTopic(t, w.topic, 2, nil)
	prod := producer(t, a)
	w.produce(t, prod, 100)
	p := startStrait(t, "run", writeConfig(t, "topics = "+w.topic+"\nA.consumer.auto.offset.reset = latest"))
	// Wait until Strait has started the partitions (it committed progress
	// at the end), then write more: only those are copied.
	kafkatest.Eventually(t, time.Minute, func() error {
		got := committedProgress(t, "strait-A", "A."+w.topic)
		if got[0] != 50 || got[1] != 50 {
			return fmt.Errorf("progress %v", got)
		}
		return nil
	})
	w.produce(t, prod, 10)
	waitCopied(t, w.topic, "A."+w.topic, map[int32]int64{0: 5, 1: 5}, time.Minute)
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, recs := range b.ReadAll(t, "A."+w.topic, kgo.ReadCommitted()) {
		n += len(recs)
	}
	if n != 10 {
		t.Fatalf("copied %d records with auto.offset.reset=latest, want the 10 new ones", n)
	}
}

// TestOffsetsTranslateCommand prints the exact target offsets of a group,
// as a table and as JSON.
func TestOffsetsTranslateCommand(t *testing.T) {
	a := env.Clusters[0]
	w := &workload{topic: kafkatest.Name(t, "translate"), partitions: 2}
	a.CreateTopic(t, w.topic, 2, nil)
	w.produce(t, producer(t, a), 2000)
	group := w.topic + "-g"
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: w.topic, Partition: 0, At: 400, LeaderEpoch: -1})
	offs.Add(kadm.Offset{Topic: w.topic, Partition: 1, At: 1000, LeaderEpoch: -1})
	if _, err := a.Admin(t).CommitOffsets(t.Context(), group, offs); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "topics = "+w.topic)
	p := startStrait(t, "run", cfg)
	waitCaughtUp(t, w.topic, "A."+w.topic, time.Minute)
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}
	q := startStrait(t, "offsets", "translate", "--group", group, "--from", "A", "--to", "B", "--json", cfg)
	if err := q.wait(t, time.Minute); err != nil {
		t.Fatalf("offsets translate: %v\n%s", err, q.out.String())
	}
	var got struct {
		Partitions []struct {
			Topic      string `json:"topic"`
			Partition  int32  `json:"partition"`
			Upstream   int64  `json:"upstream"`
			Remote     string `json:"remote"`
			Downstream int64  `json:"downstream"`
			Status     string `json:"status"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(q.out.String()), &got); err != nil {
		t.Fatalf("%v: %s", err, q.out.String())
	}
	if len(got.Partitions) != 2 {
		t.Fatalf("%+v", got)
	}
	for _, tr := range got.Partitions {
		// One writer, no gaps: the offsets are the same on both sides.
		if tr.Status != "exact" || tr.Downstream != tr.Upstream || tr.Remote != "A."+w.topic {
			t.Errorf("%+v", tr)
		}
	}
	table := startStrait(t, "offsets", "translate", "--group", group, "--from", "A", "--to", "B", "-c", cfg)
	if err := table.wait(t, time.Minute); err != nil || !strings.Contains(table.out.String(), "B OFFSET") {
		t.Fatalf("table: %v\n%s", err, table.out.String())
	}
	// The file kafka-consumer-groups.sh --reset-offsets --from-file takes.
	csv := startStrait(t, "offsets", "translate", "--group", group, "--flow", "A->B", "--format", "csv", cfg)
	if err := csv.wait(t, time.Minute); err != nil || csv.out.String() != fmt.Sprintf("A.%s,0,400\nA.%s,1,1000\n", w.topic, w.topic) {
		t.Fatalf("csv: %v\n%s", err, csv.out.String())
	}
	// An offset kept outside consumer groups.
	one := startStrait(t, "offsets", "translate", "--flow", "A->B", "--topic", w.topic, "--partition", "1", "--offset", "777", "--json", cfg)
	if err := one.wait(t, time.Minute); err != nil || !strings.Contains(one.out.String(), `"downstream": 777`) {
		t.Fatalf("one offset: %v\n%s", err, one.out.String())
	}
}

// TestStopWhileTargetIsDown: with the target broker gone, a stop still
// ends within its deadline instead of waiting for answers that never come,
// and after the target is back a restart copies everything.
func TestStopWhileTargetIsDown(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	w := &workload{topic: kafkatest.Name(t, "targetdown"), partitions: 3}
	a.CreateTopic(t, w.topic, 3, nil)
	stopLoad := startLoad(t, w, producer(t, a))
	cfg := writeConfig(t, "topics = "+w.topic)
	p := startStrait(t, "run", cfg, "--shutdown-timeout", "3s")
	waitProgress(t, "A."+w.topic, 0)
	b.StopBroker(t, true)
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			b.StartBroker(t)
		}
	})
	// The stop's deadline (3 s) plus the final commit's and the CLI's grace
	// bound the wait; a minute means it hung.
	_ = p.stop(t, syscall.SIGTERM, time.Minute)
	b.StartBroker(t)
	restarted = true
	stopLoad()
	q := startStrait(t, "run", cfg)
	waitCaughtUp(t, w.topic, "A."+w.topic, 2*time.Minute)
	if err := q.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}
	compare(t, w.topic, "A."+w.topic, kgo.ReadCommitted())
}
