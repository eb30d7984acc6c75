//go:build integration

package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

var env *kafkatest.Env

func TestMain(m *testing.M) { os.Exit(kafkatest.Run(m, 2, &env)) }

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
	grow.produce(t, prod, 900)
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
// flow and restarts it: the restart resumes exactly where it stopped.
func TestRestartAfterSIGTERMHasNoDuplicates(t *testing.T) {
	a := env.Clusters[0]
	w := &workload{topic: kafkatest.Name(t, "sigterm"), partitions: 6}
	a.CreateTopic(t, w.topic, 6, nil)
	prod := producer(t, a)
	cfg := writeConfig(t, "topics = "+w.topic)

	w.produce(t, prod, 20_000)
	for round := 0; round < 3; round++ {
		p := startStrait(t, "run", cfg)
		// Stop while records are still being written.
		w.produce(t, prod, 10_000)
		if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
			t.Fatalf("round %d: exit %v after SIGTERM", round, err)
		}
	}
	p := startStrait(t, "run", cfg)
	waitCopied(t, w.topic, "A."+w.topic, nil, time.Minute)
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, rep := range compare(t, w.topic, "A."+w.topic, kgo.ReadCommitted()) {
		if rep.Duplicates != 0 {
			t.Errorf("partition %d: %d duplicates after clean restarts", rep.Partition, rep.Duplicates)
		}
	}
}

// TestRestartAfterSIGKILLLosesNothing kills Strait hard while it copies: a
// restart resumes at the stored progress, so nothing is lost and the only
// duplicates are the records copied after the last progress commit.
func TestRestartAfterSIGKILLLosesNothing(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	w := &workload{topic: kafkatest.Name(t, "sigkill"), partitions: 6}
	remote := "A." + w.topic
	a.CreateTopic(t, w.topic, 6, nil)
	prod := producer(t, a)
	cfg := writeConfig(t, "topics = "+w.topic)
	w.produce(t, prod, 60_000)

	var expectedDups int64
	for round := 0; round < 3; round++ {
		p := startStrait(t, "run", cfg)
		// Kill once some records were copied, while more keep arriving.
		kafkatest.Eventually(t, time.Minute, func() error {
			var n int64
			for _, e := range endOffsets(t, b, remote) {
				n += e
			}
			if n < int64(10_000*(round+1)) {
				return fmt.Errorf("%d records copied", n)
			}
			return nil
		})
		w.produce(t, prod, 5_000)
		_ = p.stop(t, syscall.SIGKILL, 30*time.Second)
		// While Strait is dead: what the target holds beyond the stored
		// progress will be copied again.
		stored := committedProgress(t, "strait-A", remote)
		copied := sourceOffsetsCopied(t, w.topic, remote)
		for part, next := range copied {
			if next > stored[part] {
				expectedDups += next - stored[part]
			}
		}
	}
	p := startStrait(t, "run", cfg)
	waitCopied(t, w.topic, remote, nil, 2*time.Minute)
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}
	var dups int64
	for _, rep := range compare(t, w.topic, remote, kgo.ReadCommitted()) {
		dups += int64(rep.Duplicates)
	}
	t.Logf("3 SIGKILLs: %d duplicates, all from the uncommitted window (expected %d)", dups, expectedDups)
	if dups != expectedDups {
		t.Errorf("duplicates %d, want exactly the uncommitted window %d", dups, expectedDups)
	}
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
		n := 0
		for _, recs := range b.ReadAll(t, "A."+topic, kgo.ReadUncommitted()) {
			n += len(recs)
		}
		if n < committed {
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
