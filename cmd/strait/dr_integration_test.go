//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

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
