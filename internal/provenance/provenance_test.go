package provenance

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

// cluster is a client of a new kfake cluster holding the seed topics.
func cluster(t *testing.T, seed ...string) *kgo.Client {
	t.Helper()
	var opts []kfake.Opt
	if len(seed) > 0 {
		opts = append(opts, kfake.SeedTopics(1, seed...))
	}
	return kafkatest.FakeClient(t, kafkatest.NewFake(t, opts...))
}

// The filter of flow A->B knows, on cluster B, the producer ids flow B->A
// registered there, including one registered after an earlier read.
func TestFilterKnowsTheReverseFlowsProducerIDs(t *testing.T) {
	ctx := t.Context()
	b := cluster(t, Topic)
	if err := Register(ctx, b, "B->A", 42); err != nil {
		t.Fatal(err)
	}
	if err := Register(ctx, b, "C->A", 43); err != nil { // another flow into the same cluster: not the reverse
		t.Fatal(err)
	}
	f := NewFilter(b, "B->A")
	if err := f.Resolve(ctx, []int64{42, 43, 7, -1}); err != nil {
		t.Fatal(err)
	}
	for pid, want := range map[int64]bool{42: true, 43: false, 7: false, -1: false} {
		if got := f.Returned(pid); got != want {
			t.Errorf("Returned(%d) = %v, want %v", pid, got, want)
		}
	}
	// B->A restarts with a new producer id: registered before its first
	// batch, so a batch with it finds it on the next read.
	if err := Register(ctx, b, "B->A", 44); err != nil {
		t.Fatal(err)
	}
	if f.Returned(44) {
		t.Fatal("an id never resolved reports returned")
	}
	if err := f.Resolve(ctx, []int64{44}); err != nil {
		t.Fatal(err)
	}
	if !f.Returned(44) || !f.Returned(42) {
		t.Fatalf("after the second read: Returned(44) %v, Returned(42) %v; want both", f.Returned(44), f.Returned(42))
	}
}

// A source cluster with no registry has no Strait writes to skip.
func TestFilterWithoutRegistryTopic(t *testing.T) {
	f := NewFilter(cluster(t), "B->A")
	if err := f.Resolve(t.Context(), []int64{1, 2}); err != nil {
		t.Fatalf("Resolve with no registry topic: %v", err)
	}
	if f.Returned(1) {
		t.Fatal("an id reports returned with no registry")
	}
}

func TestRegisterRefusesANonIdempotentID(t *testing.T) {
	if err := Register(t.Context(), cluster(t, Topic), "B->A", -1); err == nil {
		t.Fatal("registering producer id -1 gave no error")
	}
}
