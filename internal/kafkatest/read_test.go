package kafkatest

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produce writes values to partition p of topic, in one transaction ended with commit
// when txn is non-nil.
func produce(t *testing.T, seeds []string, topic string, p int32, txn *bool, values ...string) {
	t.Helper()
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.RecordPartitioner(kgo.ManualPartitioner())}
	if txn != nil {
		opts = append(opts, kgo.TransactionalID(Name(t, "txn-")))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("creating a producer: %v", err)
	}
	defer cl.Close()
	ctx := t.Context()
	if txn != nil {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatalf("beginning a transaction: %v", err)
		}
	}
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing to %s[%d]: %v", topic, p, err)
	}
	if txn != nil {
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(*txn)); err != nil {
			t.Fatalf("ending a transaction: %v", err)
		}
	}
}

func values(parts [][]*kgo.Record) [][]string {
	out := make([][]string, len(parts))
	for p, recs := range parts {
		out[p] = []string{}
		for i, r := range recs {
			if r.Partition != int32(p) || (i > 0 && r.Offset <= recs[i-1].Offset) {
				return [][]string{{"bad partition or order"}}
			}
			out[p] = append(out[p], string(r.Value))
		}
	}
	return out
}

func TestReadAll(t *testing.T) {
	src, _ := NewFakePair(t, kfake.SeedTopics(3, "events"))
	seeds := src.ListenAddrs()
	commit, abort := true, false
	// Partition 0 stays empty; 1 mixes plain and transactional records; 2 ends in an
	// aborted transaction, so its end offset is an abort marker, never a data record.
	produce(t, seeds, "events", 1, nil, "p1-a", "p1-b")
	produce(t, seeds, "events", 1, &commit, "p1-c", "p1-d")
	produce(t, seeds, "events", 1, nil, "p1-e")
	produce(t, seeds, "events", 2, &commit, "p2-a")
	produce(t, seeds, "events", 2, &abort, "p2-x", "p2-y")

	tests := []struct {
		name      string
		topic     string
		isolation kgo.IsolationLevel
		want      [][]string
		wantFatal string
	}{
		{
			name:      "read committed",
			topic:     "events",
			isolation: kgo.ReadCommitted(),
			want:      [][]string{{}, {"p1-a", "p1-b", "p1-c", "p1-d", "p1-e"}, {"p2-a"}},
		},
		{
			name:      "read uncommitted",
			topic:     "events",
			isolation: kgo.ReadUncommitted(),
			want:      [][]string{{}, {"p1-a", "p1-b", "p1-c", "p1-d", "p1-e"}, {"p2-a", "p2-x", "p2-y"}},
		},
		{
			name:      "unknown topic",
			topic:     "nope",
			isolation: kgo.ReadUncommitted(),
			wantFatal: "UNKNOWN_TOPIC_OR_PARTITION",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := &fatalTB{TB: t}
			got := ReadAll(tb, seeds, tc.topic, tc.isolation)
			if tc.wantFatal != "" {
				if !strings.Contains(tb.fatal, tc.wantFatal) {
					t.Errorf("failure = %q, want it to contain %q", tb.fatal, tc.wantFatal)
				}
				return
			}
			if tb.fatal != "" {
				t.Fatalf("unexpected failure: %s", tb.fatal)
			}
			if gotValues := values(got); !slices.EqualFunc(gotValues, tc.want, slices.Equal) {
				t.Errorf("ReadAll = %q, want %q", gotValues, tc.want)
			}
		})
	}
}

func TestNewFakePair(t *testing.T) {
	a, b := NewFakePair(t)
	if slices.Equal(a.ListenAddrs(), b.ListenAddrs()) {
		t.Fatalf("both clusters listen on %v", a.ListenAddrs())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(a.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Ping(t.Context()); err != nil {
		t.Fatalf("pinging cluster a: %v", err)
	}
}
