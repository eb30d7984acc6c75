//go:build integration

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/dr"
	"strait/internal/index"
	"strait/internal/kafkatest"
	"strait/internal/offsets"
	"strait/internal/verify"
	"strait/internal/wire"
)

// verifyOutput is verify --json.
type verifyOutput struct {
	Flows []verify.FlowReport `json:"flows"`
}

func runVerify(t *testing.T, args ...string) (verifyOutput, int) {
	t.Helper()
	p := startStrait(t, append([]string{"verify", "--json"}, args...)...)
	err := p.wait(t, 2*time.Minute)
	code := p.cmd.ProcessState.ExitCode()
	if err != nil && code != 1 {
		t.Fatalf("verify: %v\n%s", err, p.out.String())
	}
	out := p.out.String()
	var got verifyOutput
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &got); err != nil {
		t.Fatalf("verify's JSON: %v\n%s", err, out)
	}
	return got, code
}

func topicReport(t *testing.T, v verifyOutput, topic string) verify.TopicReport {
	t.Helper()
	for _, f := range v.Flows {
		for _, tr := range f.Topics {
			if tr.Topic == topic {
				return tr
			}
		}
	}
	t.Fatalf("verify reported no topic %s: %+v", topic, v)
	return verify.TopicReport{}
}

func groupReport(t *testing.T, v verifyOutput, group string) verify.GroupReport {
	t.Helper()
	for _, f := range v.Flows {
		for _, g := range f.Groups {
			if g.Group == group {
				return g
			}
		}
	}
	t.Fatalf("verify reported no group %s: %+v", group, v)
	return verify.GroupReport{}
}

func hasFinding(p verify.PartitionReport, want verify.Finding) bool {
	for _, f := range p.Findings {
		if f.Kind == want.Kind && f.Source == want.Source && f.Target == want.Target {
			return true
		}
	}
	return false
}

// TestVerifyFindsPlantedFaults passes verify on a clean copy made by
// Strait, then plants each fault the issue names and checks that verify
// reports it with its offsets on both sides and exits 1: a deleted target
// record, an extra record, a changed header, a swap of two records (in a
// copy written by hand, with its own index segments, since Kafka cannot
// change a record in place) and a missing checkpoint.
func TestVerifyFindsPlantedFaults(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	w := &workload{topic: kafkatest.Name(t, "verify"), partitions: 2}
	hand := w.topic + "-hand"
	a.CreateTopic(t, w.topic, 2, nil)
	w.produce(t, producer(t, a), 400)
	group := w.topic + "-g"
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: w.topic, Partition: 0, At: 50, LeaderEpoch: -1})
	offs.Add(kadm.Offset{Topic: w.topic, Partition: 1, At: 60, LeaderEpoch: -1})
	if _, err := a.Admin(t).CommitOffsets(t.Context(), group, offs); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "topics = "+w.topic+".*\ngroups = "+group+"\nemit.checkpoints.interval.seconds = 1")
	p := startStrait(t, "run", cfg)
	waitCaughtUp(t, w.topic, "A."+w.topic, time.Minute)
	kafkatest.Eventually(t, time.Minute, func() error {
		v, code := runVerify(t, cfg, "--flow", "A->B")
		if code != 0 {
			return fmt.Errorf("verify exits %d on the copy: %+v", code, v)
		}
		return nil
	})
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}
	clean, _ := runVerify(t, cfg)
	for _, pr := range topicReport(t, clean, w.topic).Partitions {
		if pr.Records != 200 || pr.Matched != 200 || !pr.OK() {
			t.Errorf("clean copy: %+v", pr)
		}
	}
	for _, gc := range groupReport(t, clean, group).Partitions {
		if gc.State != verify.CheckpointExact || gc.Translated != gc.Committed {
			t.Errorf("clean checkpoint: %+v", gc)
		}
	}

	// A deleted target record: the target's first 5 records of partition 0.
	if _, err := b.Admin(t).DeleteRecords(t.Context(), kadm.Offsets{"A." + w.topic: {0: {Topic: "A." + w.topic, Partition: 0, At: 5}}}); err != nil {
		t.Fatal(err)
	}
	// A missing checkpoint: tombstone the group's checkpoint of partition 1.
	cpKey, err := wire.Checkpoint{Group: group, Topic: "A." + w.topic, Partition: 1}.AppendKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	manual := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := manual.ProduceSync(t.Context(), &kgo.Record{Topic: "A.checkpoints.internal", Key: cpKey}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// A copy by hand of a 10-record topic, with record 3's header changed,
	// records 6 and 7 swapped and a stranger between records 8 and 9 that
	// the index steps over.
	a.CreateTopic(t, hand, 1, nil)
	b.CreateTopic(t, "A."+hand, 1, nil)
	hw := &workload{topic: hand, partitions: 1}
	hw.produce(t, producer(t, a), 10)
	src := a.ReadAll(t, hand, kgo.ReadCommitted())[0]
	var copies []*kgo.Record
	for i, r := range src {
		c := &kgo.Record{Topic: "A." + hand, Key: r.Key, Value: r.Value, Headers: append([]kgo.RecordHeader(nil), r.Headers...), Timestamp: r.Timestamp}
		if i == 3 {
			c.Headers = append(c.Headers, kgo.RecordHeader{Key: "planted", Value: []byte("x")})
		}
		copies = append(copies, c)
	}
	copies[6], copies[7] = copies[7], copies[6]
	stranger := &kgo.Record{Topic: "A." + hand, Value: []byte("not from the source"), Timestamp: time.Now()}
	copies = append(copies[:9], stranger, copies[9])
	if err := manual.ProduceSync(t.Context(), copies...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	td, err := a.Admin(t).ListTopics(t.Context(), hand)
	if err != nil {
		t.Fatal(err)
	}
	id := td[hand].ID
	tp := index.TP{Topic: hand, Partition: 0}
	if err := index.Write(t.Context(), manual, index.TopicName("A"), []index.Update{
		{TP: tp, TopicID: id, Change: offsets.Change{Segment: offsets.Segment{Src: 0, Tgt: 0, Len: 9}, Covered: 10, Start: 0}},
		{TP: tp, TopicID: id, Change: offsets.Change{Segment: offsets.Segment{Src: 9, Tgt: 10, Len: 1}, Covered: 10, Start: 0}},
	}); err != nil {
		t.Fatal(err)
	}

	got, code := runVerify(t, cfg, "--flow", "A->B", "--topics", w.topic+".*", "--groups", group)
	if code != 1 {
		t.Errorf("verify exits %d with planted faults, want 1", code)
	}
	p0 := topicReport(t, got, w.topic).Partitions[0]
	if p0.Missing != 5 || !hasFinding(p0, verify.Finding{Kind: verify.Missing, Source: 0, Target: 0}) || !hasFinding(p0, verify.Finding{Kind: verify.Missing, Source: 4, Target: 4}) {
		t.Errorf("deleted records: %+v", p0)
	}
	if p1 := topicReport(t, got, w.topic).Partitions[1]; !p1.OK() || p1.Matched != 200 {
		t.Errorf("untouched partition: %+v", p1)
	}
	h := topicReport(t, got, hand).Partitions[0]
	for _, want := range []verify.Finding{
		{Kind: verify.Changed, Source: 3, Target: 3},
		{Kind: verify.Reordered, Source: 6, Target: 6},
		{Kind: verify.Reordered, Source: 7, Target: 7},
		{Kind: verify.Extra, Source: -1, Target: 9},
	} {
		if !hasFinding(h, want) {
			t.Errorf("no finding %v in %+v", want, h)
		}
	}
	if h.Matched != 7 || h.Changed != 1 || h.Reordered != 2 || h.Extra != 1 || h.Missing != 0 {
		t.Errorf("hand copy: %+v", h)
	}
	for _, gc := range groupReport(t, got, group).Partitions {
		want := verify.CheckpointExact
		if gc.Partition == 1 {
			want = verify.CheckpointMissing
		}
		if gc.State != want {
			t.Errorf("checkpoint of partition %d: %+v, want %s", gc.Partition, gc, want)
		}
	}

	table := startStrait(t, "verify", cfg, "--topics", hand, "--progress")
	if err := table.wait(t, time.Minute); table.cmd.ProcessState.ExitCode() != 1 || !strings.Contains(table.out.String(), "changed: source offset 3, target offset 3: the copy differs in headers") {
		t.Errorf("verify's table: %v\n%s", err, table.out.String())
	}
	t.Logf("verify's table:\n%s", table.out.String())

	// Wrong use changes nothing and exits 2.
	q := startStrait(t, "verify", cfg, "--flow", "A->C")
	if err := q.wait(t, time.Minute); q.cmd.ProcessState.ExitCode() != 2 || !strings.Contains(q.out.String(), "no enabled flow A->C") {
		t.Errorf("verify --flow A->C: %v\n%s", err, q.out.String())
	}
}

// commitOffsets commits offsets of group on c.
func commitOffsets(t *testing.T, c *kafkatest.Cluster, group, topic string, at map[int32]int64) {
	t.Helper()
	offs := kadm.Offsets{}
	for p, o := range at {
		offs.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	resps, err := c.Admin(t).CommitOffsets(t.Context(), group, offs)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// groupOffsets reads the committed offsets of group on c for topic.
func groupOffsets(t *testing.T, c *kafkatest.Cluster, group, topic string) map[int32]int64 {
	t.Helper()
	resps, err := c.Admin(t).FetchOffsets(t.Context(), group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	resps.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil {
			out[o.Partition] = o.At
		}
	})
	return out
}

// TestFailoverMovesGroupsAndStopsTheFlow fails a running flow over: the
// dry run changes nothing, a group active on the target is refused by
// name, then --execute stops the flow on the running node (which lives
// on), commits the group's exact offsets on the target and records the
// failover, so that a second failover and a restarted node refuse.
func TestFailoverMovesGroupsAndStopsTheFlow(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	w := &workload{topic: kafkatest.Name(t, "failover"), partitions: 2}
	remote := "A." + w.topic
	a.CreateTopic(t, w.topic, 2, nil)
	w.produce(t, producer(t, a), 300)
	group := w.topic + "-g"
	commitOffsets(t, a, group, w.topic, map[int32]int64{0: 100, 1: 120})
	cfg := writeConfig(t, "topics = "+w.topic+"\ngroups = "+group)
	p := startStrait(t, "run", cfg)
	waitCaughtUp(t, w.topic, remote, time.Minute)

	dry := startStrait(t, "failover", cfg, "--flow", "A->B")
	if err := dry.wait(t, time.Minute); err != nil || !strings.Contains(dry.out.String(), "Dry run: nothing changed") {
		t.Fatalf("dry run: %v\n%s", err, dry.out.String())
	}
	if got := groupOffsets(t, b, group, remote); len(got) != 0 {
		t.Fatalf("the dry run committed %v on B", got)
	}

	// A consumer of the group on B: refused by name, nothing changed.
	active := b.Client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(remote))
	kafkatest.Eventually(t, time.Minute, func() error {
		active.PollRecords(t.Context(), 1)
		d, err := b.Admin(t).DescribeGroups(t.Context(), group)
		if err != nil {
			return err
		}
		if len(d[group].Members) == 0 {
			return fmt.Errorf("the consumer has not joined %s yet", group)
		}
		return nil
	})
	refused := startStrait(t, "failover", cfg, "--flow", "A->B", "--execute")
	err := refused.wait(t, time.Minute)
	if refused.cmd.ProcessState.ExitCode() != 2 || !strings.Contains(refused.out.String(), "groups active on B: "+group+" (1 members") {
		t.Fatalf("failover with an active group: %v\n%s", err, refused.out.String())
	}
	active.Close()
	if got := groupOffsets(t, b, group, remote); len(got) != 0 {
		t.Fatalf("the refused failover committed %v on B", got)
	}

	report := t.TempDir() + "/failover.json"
	exec := startStrait(t, "failover", cfg, "--flow", "A->B", "--execute", "--report", report)
	if err := exec.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("failover: %v\n%s", err, exec.out.String())
	}
	t.Logf("failover:\n%s", exec.out.String())
	// One writer and no gaps: the translated offsets equal the source's.
	if got := groupOffsets(t, b, group, remote); got[0] != 100 || got[1] != 120 {
		t.Errorf("group offsets on B after the failover: %v, want 100 and 120", got)
	}
	var rep failoverDoc
	readJSON(t, report, &rep)
	if len(rep.Groups) != 2 || rep.Groups[0].After != 100 || rep.Groups[1].After != 120 || !rep.SourceReachable {
		t.Errorf("report: %+v", rep)
	}
	// The node stopped the flow and lives on.
	if !strings.Contains(p.out.String(), "stopping the flow: strait failover moved its consumers") {
		t.Errorf("the running node did not stop the flow:\n%s", p.out.String())
	}
	select {
	case <-p.done:
		t.Fatalf("the node exited after the failover: %v", p.err)
	default:
	}
	if err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
		t.Fatal(err)
	}

	again := startStrait(t, "failover", cfg, "--flow", "A->B", "--execute")
	if err := again.wait(t, time.Minute); again.cmd.ProcessState.ExitCode() != 2 || !strings.Contains(again.out.String(), "was already failed over") {
		t.Errorf("a second failover: %v\n%s", err, again.out.String())
	}
	nowhere := startStrait(t, "failover", cfg, "--flow", "A->C", "--execute")
	if err := nowhere.wait(t, time.Minute); nowhere.cmd.ProcessState.ExitCode() != 2 || !strings.Contains(nowhere.out.String(), "no enabled flow A->C") {
		t.Errorf("failover of a flow that does not exist: %v\n%s", err, nowhere.out.String())
	}
	restart := startStrait(t, "run", cfg)
	if err := restart.wait(t, time.Minute); err == nil || !strings.Contains(restart.out.String(), "every enabled flow was failed over") {
		t.Errorf("a node started after the failover: %v\n%s", err, restart.out.String())
	}
	clearFailover(t, "A->B")
}

// failoverDoc is failover's JSON report.
type failoverDoc struct {
	SourceReachable bool `json:"source_reachable"`
	Groups          []struct {
		Group     string `json:"group"`
		Partition int32  `json:"partition"`
		Committed int64  `json:"source_committed"`
		Before    int64  `json:"target_before"`
		After     int64  `json:"target_after"`
	} `json:"groups"`
}

func readJSON(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
}

// clearFailover clears a flow's failover state on B, for the tests after.
func clearFailover(t *testing.T, flow string) {
	t.Helper()
	cl := env.Clusters[1].Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := dr.Clear(t.Context(), cl, flow); err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatal(err)
	}
}
