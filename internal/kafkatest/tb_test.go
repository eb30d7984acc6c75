package kafkatest

import (
	"fmt"
	"testing"
)

// fatalTB records a Fatalf instead of ending the test, to test helpers that fail tests.
// The helpers under test return right after Fatalf, so no Goexit is needed.
type fatalTB struct {
	testing.TB
	fatal string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	if f.fatal == "" {
		f.fatal = fmt.Sprintf(format, args...)
	}
}
