package mirror

import (
	"time"

	"strait/internal/mirror/fastpath"
)

// partition is the fast path's Ledger: the forwarder reaches it only
// through these methods and those of partition.go it names.
var _ fastpath.Ledger = (*partition)(nil)

func (p *partition) Source() string         { return p.topic.Source }
func (p *partition) Remote() string         { return p.topic.Remote }
func (p *partition) Partition() int32       { return p.num }
func (p *partition) TopicID() [16]byte      { return p.topic.ID }
func (p *partition) MaxMessageBytes() int64 { return p.topic.maxMessageBytes.Load() }
func (p *partition) Removed() bool          { return p.removed.Load() }
func (p *partition) End() int64             { return p.end.Load() }
func (p *partition) SetEnd(end int64)       { p.end.Store(end) }

// Fetched feeds records the fast path fetched to timing.
func (p *partition) Fetched(oldestMs, newestMs int64, n int, now time.Time) {
	p.timing.fetched(oldestMs, newestMs, n, now)
}

// Copied counts a batch the target acknowledged.
func (p *partition) Copied(records int, bytes int64, newestMs, pendingMs int64, now time.Time) {
	p.records.Add(int64(records))
	p.bytes.Add(bytes)
	p.timing.copied(newestMs, records, pendingMs, now)
}
