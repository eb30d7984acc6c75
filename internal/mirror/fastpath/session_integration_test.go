//go:build integration

package fastpath_test

import (
	"os"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
	"strait/internal/mirror/fastpath"
)

var env *kafkatest.Env

func TestMain(m *testing.M) { os.Exit(kafkatest.Run(m, 1, &env)) }

// TestFetchSessionsOnKafka: Kafka gives the fast path's fetches a session
// (KIP-227), and with it a fetch of 20 partitions, one of them busy, lists
// only that one, whose offset moved; its records are all fetched.
func TestFetchSessionsOnKafka(t *testing.T) {
	a := env.Clusters[0]
	topic := kafkatest.Name(t, "sessions")
	a.CreateTopic(t, topic, 20, nil)
	fastpath.FetchesOnlyWhatChanged(t, a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner())), topic)
}
