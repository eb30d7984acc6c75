package kafkatest

import (
	"net"
	"testing"
)

// FreeAddr returns a loopback address nothing listens on now, for a
// process under test to bind (another may take it first; tests that use
// it start their process right away).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
