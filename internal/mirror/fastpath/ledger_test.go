package fastpath

import (
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"strait/internal/batch"
	"strait/internal/mirror/flow"
	"strait/internal/offsets"
)

// testTopic is what a testLedger knows of its topic.
type testTopic struct {
	Source, Remote  string
	ID              [16]byte
	maxMessageBytes atomic.Int64
}

// testLedger is a Ledger for the forwarder's tests: the progress rules of
// package mirror's partition (progress only grows and never passes a
// record that failed; a stopped partition stays stopped) over an offset
// map, without the record path.
type testLedger struct {
	topic *testTopic
	num   int32

	mu    sync.Mutex
	acked int64
	halt  int64
	err   error
	idx   *offsets.Partition

	removed atomic.Bool
	end     atomic.Int64
	records atomic.Int64
	bytes   atomic.Int64
	fetched atomic.Int64 // records Fetched
	filled  int64        // offsets Filled
}

var _ Ledger = (*testLedger)(nil)

// testPartition is partition 0 of topic t, copied to A.t.
func testPartition() *testLedger {
	l := &testLedger{topic: &testTopic{Source: "t", Remote: "A.t"}, acked: -1, halt: math.MaxInt64, idx: offsets.NewPartition()}
	l.end.Store(-1)
	return l
}

func (l *testLedger) Source() string         { return l.topic.Source }
func (l *testLedger) Remote() string         { return l.topic.Remote }
func (l *testLedger) Partition() int32       { return l.num }
func (l *testLedger) TopicID() [16]byte      { return l.topic.ID }
func (l *testLedger) MaxMessageBytes() int64 { return l.topic.maxMessageBytes.Load() }
func (l *testLedger) Removed() bool          { return l.removed.Load() }
func (l *testLedger) End() int64             { return l.end.Load() }
func (l *testLedger) SetEnd(end int64)       { l.end.Store(end) }

// advance moves progress to next, never past a failed record; the caller
// holds mu.
func (l *testLedger) advance(next int64) {
	next = min(next, l.halt)
	if next > l.acked {
		l.acked = next
		l.idx.Cover(next)
	}
}

func (l *testLedger) AckBatch(src, tgt, n, next int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if next > l.halt {
		return
	}
	l.idx.AckRange(src, tgt, n)
	l.advance(next)
}

func (l *testLedger) AckRebuilt(runs []batch.Run, tgt, next int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if next > l.halt {
		return
	}
	for _, r := range runs {
		l.idx.AckRange(r.Offset, tgt, r.Count)
		tgt += r.Count
	}
	l.advance(next)
}

func (l *testLedger) Filled(from, to int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.filled += to - from
	if l.err == nil {
		l.idx.AckRange(from, from, to-from)
		l.advance(to)
	}
}

func (l *testLedger) SkipBefore(next int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.advance(next)
	}
}

func (l *testLedger) Position() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acked
}

func (l *testLedger) ResumeOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.acked >= 0 {
		return l.acked
	}
	return l.idx.Start()
}

// startAt sets where the partition resumes.
func (l *testLedger) startAt(next int64, _ bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acked = next
	l.idx.SetStart(next)
}

func (l *testLedger) Fetched(_, _ int64, n int, _ time.Time) { l.fetched.Add(int64(n)) }

func (l *testLedger) Copied(records int, bytes int64, _, _ int64, _ time.Time) {
	l.records.Add(int64(records))
	l.bytes.Add(bytes)
}

func (l *testLedger) Stop(err error) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return false
	}
	l.err = err
	return true
}

func (l *testLedger) Failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// acked is l's progress.
func acked(l *testLedger) int64 { return l.Position() }

// flowFixture is what the forwarder's tests give it of a flow.
type flowFixture struct {
	log    *slog.Logger
	totals flow.Totals
}

func testFlow() *flowFixture { return &flowFixture{log: slog.New(slog.DiscardHandler)} }
