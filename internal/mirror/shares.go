package mirror

import (
	"sync"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordShares bounds, per target broker, the bytes the record path has
// handed to the producer and not seen answered. The producer's buffer
// (buffer.memory) is shared by every partition: without shares, records
// for a dead or leaderless broker fill it, Produce blocks, and every other
// partition stalls behind them. The poll loop hands a partition's records
// to the producer only while their broker's share has room (room); the
// rest of the fetch waits, with the partition's fetching paused, until
// acknowledgements drain the broker to half its share: the release that
// does so wakes the poll loop (wait).
type recordShares struct {
	limit int64 // buffer.memory

	mu      sync.Mutex
	used    map[int32]int64 // by target leader at send time; -1 = no leader
	bytes   int64           // payload handed to the producer, as franz-go counts it
	records int64           // records handed to the producer

	// While the poll loop waits for room: wake ends its wait (at most
	// once), when a broker in brokers drains to the bytes given for it,
	// or the producer's buffer to bufBytes and bufRecords (bufBytes < 0:
	// not waited on).
	wake                 func()
	brokers              map[int32]int64
	bufBytes, bufRecords int64
}

func newRecordShares(limit int64) *recordShares {
	return &recordShares{limit: limit, used: map[int32]int64{}}
}

// share is each broker's part of buffer.memory: the brokers of the target
// (at least one, before the client has discovered them) and one more for
// partitions without a leader.
func (s *recordShares) share(dst *kgo.Client) int64 {
	return s.limit / int64(max(len(dst.DiscoveredBrokers()), 1)+1)
}

// charge counts a record of size bytes (recordSize) handed to the producer
// for leader.
func (s *recordShares) charge(leader int32, size int64) {
	s.mu.Lock()
	s.used[leader] += size + recordOverhead
	s.bytes += size
	s.records++
	s.mu.Unlock()
}

// release counts a record the producer answered, and wakes the poll loop
// if that made the room it waits for.
func (s *recordShares) release(leader int32, size int64) {
	s.mu.Lock()
	s.used[leader] -= size + recordOverhead
	s.bytes -= size
	s.records--
	low, ok := s.brokers[leader]
	wake := s.takeWake(ok && s.used[leader] <= low)
	s.mu.Unlock()
	if wake != nil {
		wake()
	}
}

// takeWake returns the armed wake function, disarmed, when broker is true
// or the producer's buffer drained to what the poll loop waits for. The
// caller holds mu.
func (s *recordShares) takeWake(broker bool) func() {
	if s.wake == nil {
		return nil
	}
	if !broker && (s.bufBytes < 0 || s.bytes > s.bufBytes || s.records > s.bufRecords) {
		return nil
	}
	w := s.wake
	s.wake = nil
	return w
}

// wait arms wake for the poll loop's next wait: it is called (once) when
// a broker of brokers drains to the bytes given for it, or, with bufBytes
// >= 0, when the record path's records in the producer drain to bufBytes
// and bufRecords. If that is already so, wake is called now. unwait
// disarms it.
func (s *recordShares) wait(brokers map[int32]int64, bufBytes, bufRecords int64, wake func()) {
	s.mu.Lock()
	s.wake, s.brokers, s.bufBytes, s.bufRecords = wake, brokers, bufBytes, bufRecords
	now := false
	for b, low := range brokers {
		now = now || s.used[b] <= low
	}
	w := s.takeWake(now)
	s.mu.Unlock()
	if w != nil {
		w()
	}
}

func (s *recordShares) unwait() {
	s.mu.Lock()
	s.wake, s.brokers = nil, nil
	s.mu.Unlock()
}

func (s *recordShares) usedBy(leader int32) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used[leader]
}

// recordOverhead is what a record in flight costs beyond its bytes: its
// kgo.Record and its recordCtx. Small records are mostly overhead (a
// compacted changelog of short keys: 30 bytes of payload against 208), so
// the shares count it; franz-go's buffer.memory counts only the payload.
const recordOverhead = int64(unsafe.Sizeof(kgo.Record{}) + unsafe.Sizeof(recordCtx{}))

// recordSize is a record's key, value and header bytes, as franz-go counts
// them in its buffer.
func recordSize(r *kgo.Record) int64 {
	n := int64(len(r.Key) + len(r.Value))
	for _, h := range r.Headers {
		n += int64(len(h.Key) + len(h.Value))
	}
	return n
}
