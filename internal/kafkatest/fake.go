package kafkatest

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// NewFakePair starts two in-process kfake clusters of one broker each, a source and a
// target for fast tests, closed when the test ends. opts apply to both.
func NewFakePair(t testing.TB, opts ...kfake.Opt) (a, b *kfake.Cluster) {
	t.Helper()
	return newFake(t, opts), newFake(t, opts)
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
