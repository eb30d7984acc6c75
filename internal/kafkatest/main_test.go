//go:build !integration

package kafkatest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the fast tests leave no kgo or kfake goroutine behind. The
// integration build has its own TestMain, which starts Kafka.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
