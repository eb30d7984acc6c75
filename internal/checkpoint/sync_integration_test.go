//go:build integration

package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
	"strait/internal/verify"
)

// TestGroupOffsetSync: an inactive target group receives the translated
// offsets; a group with active members is left alone; nothing is rewound.
func TestGroupOffsetSync(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "gsync")
	remote := "A." + topic
	plainTopic(t, topic)
	idle, active, ahead := topic+"-idle", topic+"-active", topic+"-ahead"
	for _, g := range []string{idle, active, ahead} {
		commit(t, a, g, topic, partitions, 3000)
	}
	// The "ahead" group already sits further on the target.
	b.CreateTopic(t, remote, partitions, nil)
	// An active member of "active" on the target, consuming the remote topic.
	member := b.Client(t, kgo.ConsumerGroup(active), kgo.ConsumeTopics(remote), kgo.DisableAutoCommit())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			member.PollFetches(ctx)
		}
	}()
	kafkatest.Eventually(t, 30*time.Second, func() error {
		d, err := b.Admin(t).DescribeGroups(t.Context(), active)
		if err != nil {
			return err
		}
		if st := d[active].State; st != "Stable" {
			return fmt.Errorf("group %s is %s", active, st)
		}
		return nil
	})

	startDaemon(t, baseConfig(fmt.Sprintf("topics = %s\ngroups = %s.*\nsync.group.offsets.enabled = true\nsync.group.offsets.interval.seconds = 1", topic, topic)))
	// Wait for the data, then set "ahead" beyond what the sync would write.
	kafkatest.Eventually(t, time.Minute, func() error {
		if e := endOffsets(t, b, remote, kgo.ReadCommitted()); e[0] < 6000 || e[1] < 6000 {
			return fmt.Errorf("remote topic at %v", e)
		}
		return nil
	})
	commit(t, b, ahead, remote, partitions, 5000)

	kafkatest.Eventually(t, time.Minute, func() error {
		offs, err := b.Admin(t).FetchOffsets(t.Context(), idle)
		if err != nil {
			return err
		}
		for p := int32(0); p < partitions; p++ {
			o, ok := offs.Lookup(remote, p)
			if !ok || o.At != 3000 {
				return fmt.Errorf("idle group on target at %v (present %v), want 3000", o.At, ok)
			}
			if o.Metadata != "m-3000" {
				return fmt.Errorf("metadata %q not copied", o.Metadata)
			}
		}
		return nil
	})
	// The sync that wrote the idle group has considered the others too.
	for _, g := range []string{active, ahead} {
		offs, err := b.Admin(t).FetchOffsets(t.Context(), g)
		if err != nil {
			t.Fatal(err)
		}
		for p := int32(0); p < partitions; p++ {
			o, ok := offs.Lookup(remote, p)
			switch g {
			case active:
				if ok && o.At >= 0 {
					t.Errorf("active group %s was written: partition %d at %d", g, p, o.At)
				}
			case ahead:
				if !ok || o.At != 5000 {
					t.Errorf("group %s was rewound: partition %d at %d, want 5000", g, p, o.At)
				}
			}
		}
	}
}

// TestTakeoverFromMM2: Apache MM2 replicates part of a topic and is
// stopped; Strait starts on the same config and copies only what MM2 had
// not stored as done.
func TestTakeoverFromMM2(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "takeover")
	remote := "A." + topic
	a.CreateTopic(t, topic, partitions, nil)
	cl := a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(from, n int) {
		var recs []*kgo.Record
		for i := from; i < from+n; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % partitions), Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("r-%d", i))})
		}
		if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(0, 20_000)
	props := baseConfig("topics = " + topic + "\ngroups = none\ntasks.max = 1\nemit.heartbeats.enabled = false\nB.offset.flush.interval.ms = 1000\n" +
		"offset.storage.replication.factor = 1\nconfig.storage.replication.factor = 1\nstatus.storage.replication.factor = 1")
	path := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(path, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	mm2 := env.StartMM2(t, path)
	kafkatest.Eventually(t, 3*time.Minute, func() error {
		if n := sum(endOffsets(t, b, remote, kgo.ReadCommitted())); n < 10_000 {
			return fmt.Errorf("MM2 copied %d records", n)
		}
		return nil
	})
	mm2.Stop(t)
	byMM2 := sum(endOffsets(t, b, remote, kgo.ReadCommitted()))
	produce(20_000, 10_000)

	startDaemon(t, props)
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		got, err := b.Admin(t).FetchOffsets(t.Context(), "strait-A")
		if err != nil {
			return err
		}
		for p := int32(0); p < partitions; p++ {
			if o, ok := got.Lookup(remote, p); !ok || o.At < 15_000 {
				return fmt.Errorf("Strait progress for partition %d: %v", p, o.At)
			}
		}
		return nil
	})
	src := a.ReadAll(t, topic, kgo.ReadCommitted())
	dst := b.ReadAll(t, remote, kgo.ReadCommitted())
	dups := 0
	for p := range src {
		rep := verify.Compare(int32(p), src[p], dst[p])
		if !rep.OK() {
			t.Errorf("%v", rep)
		}
		dups += rep.Duplicates
	}
	t.Logf("MM2 copied %d records before it stopped; Strait then copied the rest with %d records copied twice", byMM2, dups)
	if dups > 2*1000 {
		t.Errorf("%d records copied twice: Strait did not resume from MM2's progress", dups)
	}
}

func sum(m map[int32]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// TestGarbageInInternalTopicsIsSkipped writes records that are not what
// the internal topics hold; Strait skips them with a warning and keeps
// replicating and checkpointing.
func TestGarbageInInternalTopicsIsSkipped(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "garbage")
	plainTopic(t, topic)
	group := topic + "-g"
	commit(t, a, group, topic, partitions, 1000)
	garbage := []*kgo.Record{
		{Topic: "strait-index.A.internal", Key: []byte("junk"), Value: []byte("not a segment")},
		{Topic: "strait-index.A.internal", Key: []byte{0, 1, 'x', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, Value: []byte{1, 2, 3}},
		{Topic: "A.checkpoints.internal", Key: []byte{0, 99}, Value: []byte("garbage")},
		{Topic: "A.checkpoints.internal", Key: []byte("k"), Value: nil},
		{Topic: "mm2-offsets.A.internal", Key: []byte(`["MirrorSourceConnector",{"cluster":`), Value: []byte(`{"offset":`)},
	}
	for _, name := range []string{"strait-index.A.internal", "A.checkpoints.internal", "mm2-offsets.A.internal"} {
		if _, err := b.Admin(t).CreateTopic(t.Context(), 1, 1, map[string]*string{"cleanup.policy": ptr("compact")}, name); err != nil && !strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
			t.Fatal(err)
		}
	}
	pcl := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := pcl.ProduceSync(t.Context(), garbage...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, baseConfig(fmt.Sprintf("topics = %s\ngroups = %s", topic, group)))
	kafkatest.Eventually(t, time.Minute, func() error {
		cps := checkpoints(t, b, "A.checkpoints.internal")
		if _, ok := cps[fmt.Sprintf("%s/A.%s/0", group, topic)]; !ok {
			return fmt.Errorf("no checkpoint for %s yet", group)
		}
		return nil
	})
	st := d.Status()
	if len(st.Flows) != 1 || st.Flows[0].Checkpoints == nil || st.Flows[0].Checkpoints.Skipped < 1 || st.Flows[0].BadInternalRecords < 1 {
		t.Fatalf("bad records not counted: %+v", st.Flows)
	}
}

func ptr(s string) *string { return &s }
