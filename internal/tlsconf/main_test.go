package tlsconf

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the handshake tests' servers leave no goroutine
// behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
