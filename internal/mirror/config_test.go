package mirror

import (
	"log/slog"
	"strings"
	"testing"
	"time"

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

// TestNewRefusesUnresolvedConfig: every default is resolved before a
// mirror is made (daemon.mirrorConfig); a zero buffer size, or any other
// field left at its zero value, is refused by name, never repaired.
func TestNewRefusesUnresolvedConfig(t *testing.T) {
	valid := Config{
		Flow: "A->B", Source: "A", Group: "strait-A", IndexTopic: "strait-index.A.internal",
		FlushInterval: time.Second, ShutdownTimeout: 30 * time.Second, AutoOffsetReset: "earliest",
		MaxBuffered: 32 << 20, IndexMaxSegments: 10000, FetchMaxBytes: 50 << 20,
	}
	if err := valid.Validate(); err != nil {
		t.Fatalf("a resolved config: %v", err)
	}
	for _, tt := range []struct {
		field string
		zero  func(*Config)
	}{
		{"MaxBuffered", func(c *Config) { c.MaxBuffered = 0 }},
		{"FlushInterval", func(c *Config) { c.FlushInterval = 0 }},
		{"ShutdownTimeout", func(c *Config) { c.ShutdownTimeout = 0 }},
		{"IndexMaxSegments", func(c *Config) { c.IndexMaxSegments = 0 }},
		{"FetchMaxBytes", func(c *Config) { c.FetchMaxBytes = 0 }},
		{"AutoOffsetReset", func(c *Config) { c.AutoOffsetReset = "" }},
		{"IndexTopic", func(c *Config) { c.IndexTopic = "" }},
		{"LinkBuffer", func(c *Config) { c.LinkBuffer = -1 }},
	} {
		cfg := valid
		tt.zero(&cfg)
		m, err := New(cfg, Deps{Log: slog.New(slog.DiscardHandler)})
		if err == nil || m != nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("New with %s unset: mirror %v, error %v; want a refusal naming %s", tt.field, m != nil, err, tt.field)
		}
	}
}

// TestBudget: buffer.memory unset lets the fast path hold LongLinkBuffer
// more over a long link; a value the user set is the bound. FlowMemory,
// the soft memory limit's term, counts both.
func TestBudget(t *testing.T) {
	if b, l := Budget(32<<20, false); b != 32<<20 || l != LongLinkBuffer {
		t.Errorf("unset: %d, %d", b, l)
	}
	if b, l := Budget(8<<20, true); b != 8<<20 || l != 0 {
		t.Errorf("set: %d, %d", b, l)
	}
	if got, want := FlowMemory(Budget(32<<20, false)), int64(2*32<<20+LongLinkBuffer+2*16<<20); got != want {
		t.Errorf("FlowMemory = %d, want %d", got, want)
	}
}
