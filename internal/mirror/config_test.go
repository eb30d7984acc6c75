package mirror

import (
	"testing"

	"strait/internal/batch"
)

// TestFastPathGetsTheLevel: the target producer's compression and level
// reach the fast path's configuration (Config.CompressionLevel,
// forwardConfig); fastpath's TestFastPathCompressionLevel checks that the
// forwarder recodes at it.
func TestFastPathGetsTheLevel(t *testing.T) {
	m := testMirror()
	m.cfg.FastPath, m.cfg.Compression, m.cfg.CompressionLevel = true, "gzip", 9
	if c := m.forwardConfig(); c.Codec != batch.Gzip || c.Level != 9 {
		t.Fatalf("the fast path is configured with codec %s level %d, want gzip level 9", c.Codec, c.Level)
	}
}
