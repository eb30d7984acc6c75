//go:build integration

package checkpoint_test

import (
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

const partitions = 2

// scenario writes source data into topic and says when groups commit.
type scenario struct {
	name  string
	setup func(t *testing.T, topic string) // creates and fills the topic on A
	// early: groups commit before replication starts (a group far behind).
	early bool
}

func plainTopic(t *testing.T, topic string) {
	a := env.Clusters[0]
	a.CreateTopic(t, topic, partitions, nil)
	cl := a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for i := 0; i < 12_000; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % partitions), Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf("plain-%d", i))})
	}
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// compactedTopic writes keys over and over into a compacted topic and waits
// until the log cleaner left holes in the offsets.
func compactedTopic(t *testing.T, topic string) {
	a := env.Clusters[0]
	s := func(v string) *string { return &v }
	a.CreateTopic(t, topic, partitions, map[string]*string{
		"cleanup.policy": s("compact"), "segment.ms": s("100"), "min.cleanable.dirty.ratio": s("0.01"),
		"delete.retention.ms": s("100"), "min.compaction.lag.ms": s("0"),
	})
	cl := a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for round := 0; round < 12; round++ {
		var recs []*kgo.Record
		for k := 0; k < 1000; k++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(k % partitions), Key: []byte("k" + strconv.Itoa(k)), Value: []byte(fmt.Sprintf("compact-%d-%d", round, k))})
		}
		if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	kafkatest.Eventually(t, 90*time.Second, func() error {
		// one more record rolls the segment so the cleaner can run
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Partition: 0, Key: []byte("roll"), Value: []byte("roll")}, &kgo.Record{Topic: topic, Partition: 1, Key: []byte("roll"), Value: []byte("roll")}).FirstErr(); err != nil {
			return err
		}
		recs := env.Clusters[0].ReadAll(t, topic, kgo.ReadCommitted())
		for p, rs := range recs {
			if int64(len(rs)) > rs[len(rs)-1].Offset/2 {
				return fmt.Errorf("partition %d: %d records up to offset %d, not compacted yet", p, len(rs), rs[len(rs)-1].Offset)
			}
		}
		return nil
	})
}

// transactionalTopic writes in transactions and aborts every third one.
func transactionalTopic(t *testing.T, topic string) {
	a := env.Clusters[0]
	a.CreateTopic(t, topic, partitions, nil)
	cl := a.Client(t, kgo.TransactionalID(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < 120; i++ {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for j := 0; j < 100; j++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(j % partitions), Value: []byte(fmt.Sprintf("txn-%d-%d", i, j))})
		}
		if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(t.Context(), kgo.TransactionEndTry(i%3 != 1)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTranslationIsExact: groups commit at every 1,000th offset; for each,
// a target consumer starting at the checkpoint's downstream offset reads
// first exactly the record the group would read next on the source. Java's
// RemoteClusterUtils reads the same offsets from Strait's checkpoints.
func TestTranslationIsExact(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	prefix := kafkatest.Name(t, "exact")
	scenarios := []scenario{
		{name: "plain", setup: plainTopic},
		{name: "compacted", setup: compactedTopic},
		{name: "transactional", setup: transactionalTopic},
		{name: "behind", setup: plainTopic, early: true},
	}
	type commitAt struct {
		group, topic string
		at           int64
	}
	var commits []commitAt
	commitEvery := func(sc scenario) {
		topic := prefix + "-" + sc.name
		end := endOffsets(t, a, topic, kgo.ReadUncommitted())[0]
		for at := int64(0); at <= end; at += 1000 {
			g := fmt.Sprintf("%s-%s-%d", prefix, sc.name, at)
			commit(t, a, g, topic, partitions, at)
			commits = append(commits, commitAt{g, topic, at})
		}
	}
	for _, sc := range scenarios {
		sc.setup(t, prefix+"-"+sc.name)
		if sc.early {
			commitEvery(sc)
		}
	}
	startDaemon(t, baseConfig(fmt.Sprintf("topics = %s.*\ngroups = %s.*", prefix, prefix)))
	// Groups of the other scenarios commit once the data was copied.
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		for _, sc := range scenarios {
			topic := prefix + "-" + sc.name
			src, dst := endOffsets(t, a, topic, kgo.ReadCommitted()), endOffsets(t, b, "A."+topic, kgo.ReadCommitted())
			for p := int32(0); p < partitions; p++ {
				if dst[p] == 0 || src[p] == 0 {
					return fmt.Errorf("%s not copied yet", topic)
				}
			}
		}
		return nil
	})
	for _, sc := range scenarios {
		if !sc.early {
			commitEvery(sc)
		}
	}

	cpTopic := "A.checkpoints.internal"
	var got map[string]int64
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		cps := checkpoints(t, b, cpTopic)
		got = map[string]int64{}
		missing := 0
		for _, c := range commits {
			for p := int32(0); p < partitions; p++ {
				cp, ok := cps[fmt.Sprintf("%s/A.%s/%d", c.group, c.topic, p)]
				if !ok || cp.UpstreamOffset != c.at {
					missing++
					continue
				}
				got[fmt.Sprintf("%s/%d", c.group, p)] = cp.DownstreamOffset
			}
		}
		if missing > 0 {
			return fmt.Errorf("%d of %d checkpoints missing", missing, len(commits)*partitions)
		}
		return nil
	})

	checked := map[string]int{}
	for _, c := range commits {
		for p := int32(0); p < partitions; p++ {
			down := got[fmt.Sprintf("%s/%d", c.group, p)]
			want := firstFrom(t, a, c.topic, p, c.at)
			have := firstFrom(t, b, "A."+c.topic, p, down)
			if value(want) != value(have) {
				t.Errorf("%s: group at source %s[%d]@%d reads %q next; the target consumer at %d reads %q", c.group, c.topic, p, c.at, value(want), down, value(have))
			}
			checked[c.topic]++
		}
	}
	t.Logf("checked %v translations per topic", checked)

	// Java's RemoteClusterUtils sees the same translations and Strait's
	// heartbeats (A's heartbeats, written by the pair B->A, replicated).
	sort.Slice(commits, func(i, j int) bool { return commits[i].group < commits[j].group })
	var ask []kafkatest.Translation
	for _, c := range commits[:min(6, len(commits))] {
		ask = append(ask, kafkatest.Translation{RemoteAlias: "A", Group: c.group})
	}
	kafkatest.Eventually(t, time.Minute, func() error {
		if len(endOffsets(t, b, "A.heartbeats", kgo.ReadUncommitted())) == 0 {
			return fmt.Errorf("A.heartbeats not on B yet")
		}
		return nil
	})
	view := env.MirrorClient(t, b, kafkatest.MirrorClientOpts{Translate: ask, Hops: []string{"A"}})
	for _, q := range ask {
		tr := view.Translated("A", q.Group)
		for p := int32(0); p < partitions; p++ {
			var topic string
			for _, c := range commits {
				if c.group == q.Group {
					topic = "A." + c.topic
				}
			}
			want := got[fmt.Sprintf("%s/%d", q.Group, p)]
			if have, ok := tr[fmt.Sprintf("%s-%d", topic, p)]; !ok || have != want {
				t.Errorf("RemoteClusterUtils.translateOffsets(%s) %s-%d = %d (present %v), Strait computed %d", q.Group, topic, p, have, ok, want)
			}
		}
	}
	if len(view.UpstreamClusters) != 1 || view.UpstreamClusters[0] != "A" {
		t.Errorf("upstreamClusters = %v, want [A]", view.UpstreamClusters)
	}
	if view.ReplicationHops["A"] != 1 {
		t.Errorf("replicationHops(A) = %d, want 1", view.ReplicationHops["A"])
	}
}
