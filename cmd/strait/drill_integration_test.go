//go:build integration

package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

// drillProducer writes "prefix-N" values round-robin to the partitions of
// topic until stopped or a write fails, and keeps the acknowledged values.
type drillProducer struct {
	cl    *kgo.Client
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	acked []string
}

func startDrillProducer(t *testing.T, c *kafkatest.Cluster, topic string, partitions int32, prefix string, limit int) *drillProducer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Seeds()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(5*time.Second), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	p := &drillProducer{cl: cl, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		pace := time.NewTicker(20 * time.Millisecond)
		defer pace.Stop()
		for n := 0; n < limit; n += 10 {
			select {
			case <-p.stop:
				return
			case <-pace.C:
			}
			var recs []*kgo.Record
			for i := n; i < n+10; i++ {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i) % partitions, Value: []byte(fmt.Sprintf("%s-%d", prefix, i))})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			res := cl.ProduceSync(ctx, recs...)
			cancel()
			p.mu.Lock()
			for _, r := range res {
				if r.Err == nil {
					p.acked = append(p.acked, string(r.Record.Value))
				}
			}
			p.mu.Unlock()
			if res.FirstErr() != nil {
				return
			}
		}
	}()
	t.Cleanup(p.halt)
	return p
}

// halt stops the producer. Closing its client fails a write in flight to
// a broker that is gone, which would otherwise wait for it.
func (p *drillProducer) halt() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	p.cl.Close()
	<-p.done
}

func (p *drillProducer) values() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.acked...)
}

// TestDrillFailoverAndFailback is the disaster-recovery day with one node.
func TestDrillFailoverAndFailback(t *testing.T) { drill(t, 1) }

// TestDrillWithThreeNodes is the same day with three nodes sharing the flows.
func TestDrillWithThreeNodes(t *testing.T) { drill(t, 3) }

// drill runs the drill against real brokers with nodes Strait
// processes copying A->B and B->A (identity names, so clients switch
// unchanged) and Apache Kafka's Java consumer as the application:
//  1. a producer and the consumer group run on A while Strait copies to B;
//  2. A's broker is killed;
//  3. failover moves the group, from its checkpoints;
//  4. the consumer resumes on B and reads every record after its last
//     commit: nothing on B is skipped;
//  5. a producer writes to B;
//  6. A returns; failback reports the orphans exactly, waits for B->A to
//     copy B's records and moves the group back;
//  7. the consumer resumes on A and reads the new records once each,
//     nothing it read before.
func drill(t *testing.T, nodes int) {
	a, b := env.Clusters[0], env.Clusters[1]
	// B->A replicates B's heartbeats to A, where later tests' flows from A
	// would copy them again (as in TestActiveActiveCopiesEveryRecordOnce).
	deleteTopicsAtCleanup(t, a, func(name string) bool { return name == "B.heartbeats" })
	topic := kafkatest.Name(t, "drill")
	group := topic + "-g"
	a.CreateTopic(t, topic, 2, nil)
	cfg := writeConfig(t, fmt.Sprintf(`B->A.enabled = true
replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy
topics = %s
groups = %s
emit.checkpoints.interval.seconds = 1
strait.api.listen = 127.0.0.1:0`, topic, group))
	var procs []*process
	for range nodes {
		procs = append(procs, startStrait(t, "run", cfg))
	}
	defer clearFailover(t, "A->B")

	// 1. Production and consumption on A.
	prodA := startDrillProducer(t, a, topic, 2, "a", 100000)
	consA := env.StartDrillConsumer(t, a, group, topic, time.Minute)
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		if n := len(consA.Records()); n < 500 {
			return fmt.Errorf("the consumer on A read %d records", n)
		}
		if n := endOffsets(t, b, topic)[0]; n < 200 {
			return fmt.Errorf("B holds %d records of partition 0", n)
		}
		return nil
	})
	// Let a checkpoint of a recent commit land.
	cpBefore := checkpointCount(t, group)
	kafkatest.Eventually(t, time.Minute, func() error {
		if n := checkpointCount(t, group); n <= cpBefore {
			return fmt.Errorf("%d checkpoints of %s, waiting for a new one", n, group)
		}
		return nil
	})

	// 2. The disaster. The nodes are frozen first, so that the last records
	// written on A are certainly not copied: orphans, known exactly.
	for _, p := range procs {
		if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	frozenAt := len(prodA.values())
	kafkatest.Eventually(t, time.Minute, func() error {
		if n := len(prodA.values()) - frozenAt; n < 100 {
			return fmt.Errorf("%d records written on A since the nodes froze", n)
		}
		return nil
	})
	a.StopBroker(t, true)
	for _, p := range procs {
		if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	aBack := false
	t.Cleanup(func() {
		if !aBack {
			a.StartBroker(t)
		}
	})
	consA.Kill()
	prodA.halt()

	// 3. Failover, with the source gone.
	fo := startStrait(t, "failover", cfg, "--flow", "A->B", "--execute", "--source-timeout", "5s", "--report", t.TempDir()+"/failover.json")
	if err := fo.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("failover: %v\n%s", err, fo.out.String())
	}
	t.Logf("failover:\n%s", fo.out.String())

	// 4 and 5. The consumer on B, and a producer on B.
	consB := env.StartDrillConsumer(t, b, group, topic, 8*time.Second)
	prodB := startDrillProducer(t, b, topic, 2, "b", 400)
	<-prodB.done
	consB.Wait(t, 4*time.Minute)
	onB := b.ReadAll(t, topic, kgo.ReadCommitted())
	seen := map[string]int{}
	for _, r := range append(consA.Records(), consB.Records()...) {
		seen[r.Value]++
	}
	for p, recs := range onB {
		for _, r := range recs {
			if seen[string(r.Value)] == 0 {
				t.Errorf("skipped: %s[%d] offset %d (%s) on B was read on neither cluster", topic, p, r.Offset, r.Value)
			}
		}
	}
	if len(prodB.values()) != 400 {
		t.Fatalf("the producer on B wrote %d of 400", len(prodB.values()))
	}

	// 6. A returns: failback. The consumer killed on A stays a member of
	// its group there until its session times out; the failback refuses
	// an active group, so wait for that as an operator would.
	a.StartBroker(t)
	aBack = true
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		d, err := a.Admin(t).DescribeGroups(t.Context(), group)
		if err != nil {
			return err
		}
		if n := len(d[group].Members); n > 0 {
			return fmt.Errorf("%s still has %d members on A", group, n)
		}
		return nil
	})
	report := t.TempDir() + "/failback.json"
	fb := startStrait(t, "failback", cfg, "--flow", "A->B", "--execute", "--copy-orphans", "--report", report, "--gate-timeout", "3m")
	if err := fb.wait(t, 5*time.Minute); err != nil {
		t.Fatalf("failback: %v\n%s", err, fb.out.String())
	}
	t.Logf("failback:\n%s", fb.out.String())
	// The orphans are exactly A's records that never reached B.
	onBValues := map[string]bool{}
	for _, recs := range onB {
		for _, r := range recs {
			onBValues[string(r.Value)] = true
		}
	}
	var rep struct {
		Orphans []struct {
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
			From      int64  `json:"from"`
			To        int64  `json:"to"`
			Records   int64  `json:"records"`
		} `json:"orphans"`
	}
	readJSON(t, report, &rep)
	wantOrphans := map[int32][]int64{}
	for p, recs := range a.ReadAll(t, topic, kgo.ReadCommitted()) {
		for _, r := range recs {
			if strings.HasPrefix(string(r.Value), "a-") && !onBValues[string(r.Value)] {
				wantOrphans[int32(p)] = append(wantOrphans[int32(p)], r.Offset)
			}
		}
	}
	gotOrphans := map[int32]int64{}
	for _, o := range rep.Orphans {
		if o.Topic != topic {
			t.Errorf("orphans of %s reported: %+v", o.Topic, o)
			continue
		}
		gotOrphans[o.Partition] = o.Records
		want := wantOrphans[o.Partition]
		if int64(len(want)) != o.Records || len(want) > 0 && (want[0] != o.From || want[len(want)-1] != o.To-1) {
			t.Errorf("orphans of partition %d: reported [%d, %d) %d records, want offsets %v", o.Partition, o.From, o.To, o.Records, want)
		}
	}
	for p, want := range wantOrphans {
		if gotOrphans[p] != int64(len(want)) {
			t.Errorf("orphans of partition %d: reported %d, want %d", p, gotOrphans[p], len(want))
		}
	}
	orphanCount := sum(endOffsets(t, a, "strait-orphans."+topic+".internal"))
	if total := len(wantOrphans[0]) + len(wantOrphans[1]); orphanCount != int64(total) || total < 100 {
		t.Errorf("the side topic holds %d orphans, want %d (at least the 100 written while the nodes were frozen)", orphanCount, total)
	}
	t.Logf("orphans: %v", gotOrphans)

	// 7. The consumer on A reads the new records, once each, and nothing
	// it read before.
	consA2 := env.StartDrillConsumer(t, a, group, topic, 8*time.Second)
	prodA2 := startDrillProducer(t, a, topic, 2, "a2", 100)
	<-prodA2.done
	consA2.Wait(t, 3*time.Minute)
	again := map[string]int{}
	for _, r := range consA2.Records() {
		again[r.Value]++
		if !strings.HasPrefix(r.Value, "a2-") {
			t.Errorf("read again on A after the failback: partition %d offset %d (%s)", r.Partition, r.Offset, r.Value)
		}
	}
	for _, v := range prodA2.values() {
		if again[v] != 1 {
			t.Errorf("%s read %d times on A after the failback, want once", v, again[v])
		}
	}
	for _, p := range procs {
		if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
			t.Errorf("strait run: %v", err)
		}
	}
}

// checkpointCount counts the checkpoint records of group on B.
func checkpointCount(t *testing.T, group string) int {
	n := 0
	for _, recs := range env.Clusters[1].ReadAll(t, "A.checkpoints.internal", kgo.ReadCommitted()) {
		for _, r := range recs {
			if strings.Contains(string(r.Key), group) {
				n++
			}
		}
	}
	return n
}
