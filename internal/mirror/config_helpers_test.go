package mirror

import (
	"log/slog"
	"testing"
	"time"

	"strait/internal/offsets"
)

// newTestMirror is New for tests: the zero fields of cfg get what the daemon
// would resolve them to (daemon.mirrorConfig), so that a test names only
// what it is about; a nil logger discards.
func newTestMirror(t *testing.T, cfg Config, deps Deps) *Mirror {
	t.Helper()
	if cfg.Flow == "" {
		cfg.Flow = "A->B"
	}
	if cfg.Source == "" {
		cfg.Source = "A"
	}
	if cfg.Group == "" {
		cfg.Group = "strait-" + cfg.Source
	}
	if cfg.IndexTopic == "" {
		cfg.IndexTopic = "strait-index." + cfg.Source + ".internal"
	}
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = time.Second
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 30 * time.Second
	}
	if cfg.AutoOffsetReset == "" {
		cfg.AutoOffsetReset = "earliest"
	}
	if cfg.MaxBuffered == 0 {
		cfg.MaxBuffered, cfg.LinkBuffer = Budget(32<<20, false)
	}
	if cfg.IndexMaxSegments == 0 {
		cfg.IndexMaxSegments = offsets.DefaultMaxSegments
	}
	if cfg.FetchMaxBytes == 0 {
		cfg.FetchMaxBytes = 50 << 20
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	m, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
