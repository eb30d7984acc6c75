package config

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that parsing leaves no goroutine behind: the properties
// library lexes on a goroutine of its own for every line.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
