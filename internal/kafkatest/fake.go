package kafkatest

import (
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// NewFakePair starts two in-process kfake clusters of one broker each, a source and a
// target for fast tests, closed when the test ends. opts apply to both.
func NewFakePair(t testing.TB, opts ...kfake.Opt) (a, b *kfake.Cluster) {
	t.Helper()
	return newFake(t, opts), newFake(t, opts)
}

// NewFake starts one in-process kfake cluster of one broker, closed when
// the test ends.
func NewFake(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	return newFake(t, opts)
}

func newFake(t testing.TB, opts []kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatalf("starting a kfake cluster: %v", err)
		return nil
	}
	t.Cleanup(c.Close)
	return c
}

// FakeClient returns a client of a kfake cluster with opts added, closed
// when the test ends.
func FakeClient(t testing.TB, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}, opts...)...)
	if err != nil {
		t.Fatalf("creating a client of a kfake cluster: %v", err)
		return nil
	}
	t.Cleanup(cl.Close)
	return cl
}

// ProduceN writes n records with values "0".."n-1" to topic, one at a time,
// failing the test on the first error.
func ProduceN(t testing.TB, cl *kgo.Client, topic string, n int) {
	t.Helper()
	for i := range n {
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}
