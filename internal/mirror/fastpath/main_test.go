//go:build !integration

package fastpath

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the unit tests leave no goroutine behind; the
// integration build has its own TestMain, which starts real brokers.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// kfake clusters close their own goroutines asynchronously.
		goleak.IgnoreAnyFunction("github.com/twmb/franz-go/pkg/kfake.(*Cluster).run"),
	)
}
