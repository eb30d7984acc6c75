//go:build faults

package faults

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/api"
	"strait/internal/index"
	"strait/internal/kafkatest"
	"strait/internal/offsets"
	tailer "strait/internal/tail"
)

// SeedEnv names an environment variable with the seed of the random choices of a fault
// test (kill times), to repeat a run; each test logs the seed it used.
const SeedEnv = "STRAIT_FAULTS_SEED"

// faultRand returns the test's random source, seeded from SeedEnv or the clock, and logs
// the seed.
func faultRand(t *testing.T) *rand.Rand {
	t.Helper()
	return rand.New(rand.NewPCG(testSeed(t, SeedEnv), 0x5eed))
}

// testSeed returns the seed in the environment variable name, or one from the clock, and
// logs it.
func testSeed(t *testing.T, name string) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(name); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", name, v, err)
		}
		seed = s
	}
	t.Logf("seed %d (%s=%d repeats the random choices)", seed, name, seed)
	return seed
}

// txnCounts is what a process's API showed last of its transactions.
type txnCounts struct {
	committed, aborted int64
	// firstCommit is how long after the process's start its first transaction was
	// seen committed; 0 if none was.
	firstCommit time.Duration
}

// watchUntil reads the process's transaction counts from its API every 100 ms until
// the instant until, which is the fault's random moment, not a wait for anything.
func (s *strait) watchUntil(ctx context.Context, f flow, started, until time.Time) txnCounts {
	var c txnCounts
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	end := time.NewTimer(time.Until(until))
	defer end.Stop()
	for {
		if v, err := s.flowView(ctx, f); err == nil && v.Transactions != nil {
			c.committed, c.aborted = v.Transactions.Committed, v.Transactions.Aborted
			if c.committed > 0 && c.firstCommit == 0 {
				c.firstCommit = time.Since(started)
			}
		}
		select {
		case <-end.C:
			return c
		case <-tick.C:
		}
	}
}

// TestExactlyOnceSurvivesSIGKILLs is issue 12's exactly-once proof on real Kafka: one
// strait node in exactly-once mode, with the defaults (a transaction a second, 15 s
// transaction timeout), copies 1,000,000 records of 100 B (8 partitions, written by
// the test's producer while the node runs) and is killed with SIGKILL 20 times, each
// at a random moment 0.1-4 s after its start (seeded: SeedEnv repeats a run), and
// started again at once; its InitProducerID fences the killed one and aborts its open
// transaction. A read_committed reader of the target then finds every source record
// exactly once and in order in each partition, and the offset index maps every source
// offset to its committed copy, never to a copy an aborted transaction left.
func TestExactlyOnceSurvivesSIGKILLs(t *testing.T) {
	began := time.Now()
	rng := faultRand(t)
	f := flow{alias: "E", src: source(), dst: target(), exactlyOnce: true}
	topic := kafkatest.Name(t, "eoskill")
	const (
		partitions = 8
		records    = 1_000_000
		kills      = 20
		// The load writes the records in about 50 s, about the time the kills take
		// (a random 0.1-4 s each, and the restarts), so that the kills hit a copy
		// under way.
		rate = 20_000
	)
	f.src.CreateTopic(t, topic, partitions, nil)
	l := newLoad(t, f.src, topic, partitions, 100)
	// Each run binds an API port of its own: the test reads its transactions there.
	cfg := f.config(t, topic, "strait.api.listen = 127.0.0.1:0")
	l.start(t, rate, records)

	var committed, aborted int64
	var restarts []string
	underway := 0 // kills while records written waited to be copied
	for k := range kills {
		s := startStrait(t, "run", cfg, "--shutdown-timeout", "10s")
		started := time.Now()
		// Any moment may be the kill's: before the producer id, in mid-transaction,
		// during a commit.
		delay := time.Duration(100+rng.IntN(3900)) * time.Millisecond
		c := s.watchUntil(t.Context(), f, started, started.Add(delay))
		s.stop(t, syscall.SIGKILL, 30*time.Second)
		committed += c.committed
		aborted += c.aborted
		first := "none"
		if c.firstCommit > 0 {
			first = c.firstCommit.Round(10 * time.Millisecond).String()
		}
		restarts = append(restarts, first)
		var stored int64
		if got, err := storedProgress(t, f, topic); err == nil {
			for _, o := range got {
				stored += o
			}
		}
		if stored < l.total() {
			underway++
		}
		t.Logf("kill %d after %v: %d transactions committed, %d aborted (first commit after %s); committed progress %d of the %d records written so far",
			k+1, delay, c.committed, c.aborted, first, stored, l.total())
	}
	t.Logf("%d kills in %v, %d of them with records written and not copied yet", kills, time.Since(began).Round(100*time.Millisecond), underway)
	if underway < kills/2 {
		t.Errorf("only %d of the %d kills hit a copy under way: the load ended too soon for the test to test much", underway, kills)
	}
	s := startStrait(t, "run", cfg, "--shutdown-timeout", "10s")
	kafkatest.Eventually(t, 3*time.Minute, func() error {
		if n := l.total(); n < records {
			return fmt.Errorf("the load wrote %d of %d records", n, records)
		}
		return nil
	})
	l.stop(t)
	caughtUp := waitCaughtUp(t, f, topic, nil, 3*time.Minute)
	var last api.TransactionsView
	kafkatest.Eventually(t, 30*time.Second, func() error {
		v, err := s.flowView(t.Context(), f)
		switch {
		case err != nil:
			return err
		case v.Transactions == nil:
			return fmt.Errorf("the flow's status shows no transactions: is exactly-once mode on?")
		case v.Transactions.Committed == 0:
			return fmt.Errorf("the last run has committed no transaction yet")
		}
		last = *v.Transactions
		return nil
	})
	stopCleanly(t, s)
	t.Logf("after %d kills: caught up %v after the load ended; the last run committed %d transactions, aborted %d; the killed runs committed %d, aborted %d (as their API last showed); first commit after each start: %s",
		kills, caughtUp.Round(100*time.Millisecond), last.Committed, last.Aborted, committed, aborted, strings.Join(restarts, " "))

	var total int
	for _, rep := range verifyTopic(t, f, topic) {
		total += rep.Source
		if rep.Duplicates != 0 {
			t.Errorf("%s[%d]: %d duplicates (%d replays) in exactly-once mode, read read_committed", topic, rep.Partition, rep.Duplicates, rep.Replays)
		}
	}
	if total != records {
		t.Errorf("the source holds %d records, want %d", total, records)
	}
	// The records of aborted transactions stay in the target's log, skipped by a
	// read_committed reader: the log's end minus the records read is what the kills
	// left aborted, plus one transaction marker per partition and transaction.
	var logEnd int64
	for _, o := range f.dst.EndOffsets(t, f.remote(topic), kgo.ReadUncommitted()) {
		logEnd += o
	}
	t.Logf("the target's log of %s ends at %d offsets for %d committed records: %d offsets of aborted records and transaction markers",
		f.remote(topic), logEnd, total, logEnd-int64(total))
	checkIndexCommitted(t, f, topic, l)
	t.Logf("the test took %v", time.Since(began).Round(time.Second))
}

// checkIndexCommitted loads the flow's offset index, as a new reader of the target sees
// it, and checks that it translates the source offset of every record of the load to
// the record's committed copy (exact), or to a target offset before it (rounded), never
// after it and never to a copy an aborted transaction left.
func checkIndexCommitted(t *testing.T, f flow, topic string, l *load) {
	t.Helper()
	idx, err := index.Load(t.Context(), f.dst.Client(t, tailer.ClientOpts()...), index.TopicName(f.alias))
	if err != nil {
		t.Fatalf("loading the offset index: %v", err)
	}
	rep := replica(t, f, topic)
	var exact, rounded, problems int
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := range l.partitions {
		rs := rep[p]
		for s, o := range l.offsets[p] {
			if o < 0 {
				continue
			}
			tgt, res := idx.Translate(topic, p, o)
			i, found := slices.BinarySearchFunc(rs, tgt, func(c copied, off int64) int { return cmp.Compare(c.offset, off) })
			var problem string
			switch {
			case res == offsets.Exact && (!found || rs[i].seq != int64(s)):
				got := "no committed record"
				if found {
					got = fmt.Sprintf("the copy of record %d", rs[i].seq)
				}
				problem = fmt.Sprintf("translates to target offset %d (exact), which holds %s", tgt, got)
			case res == offsets.Exact:
				exact++
			case res == offsets.Rounded && i < len(rs) && rs[i].seq <= int64(s):
				rounded++
			default:
				problem = fmt.Sprintf("translates to target offset %d (%v), after its committed copy or with none", tgt, res)
			}
			if problem != "" {
				if problems++; problems <= 5 {
					t.Errorf("%s[%d]: record %d (source offset %d) %s", topic, p, s, o, problem)
				}
			}
		}
	}
	if problems > 5 {
		t.Errorf("%d more source offsets the index translates wrongly", problems-5)
	}
	t.Logf("the offset index translates %d source offsets exactly to their committed copies, %d rounded down", exact, rounded)
}
