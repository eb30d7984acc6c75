//go:build !integration

package saslconf

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: token fetches
// run on their callers' goroutines, the token endpoint's connections are
// not kept alive, and a Kerberos keytab client's renewal ends with Close.
// The integration build has its own TestMain (gssapi_integration_test.go),
// which starts a KDC and a broker and makes the same check.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
