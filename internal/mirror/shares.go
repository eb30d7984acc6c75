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
// partition stalls behind them. A partition whose broker used its share
// stops fetching until the broker drains to half of it.
type recordShares struct {
	limit int64 // buffer.memory

	mu   sync.Mutex
	used map[int32]int64 // by target leader at send time; -1 = no leader
}

func newRecordShares(limit int64) *recordShares {
	if limit <= 0 {
		limit = 32 << 20
	}
	return &recordShares{limit: limit, used: map[int32]int64{}}
}

// share is each broker's part of buffer.memory: the brokers of the target
// and one more for partitions without a leader.
func (s *recordShares) share(dst *kgo.Client) int64 {
	return s.limit / int64(len(dst.DiscoveredBrokers())+1)
}

func (s *recordShares) charge(leader int32, n int64) {
	s.mu.Lock()
	s.used[leader] += n
	s.mu.Unlock()
}

func (s *recordShares) release(leader int32, n int64) {
	s.mu.Lock()
	s.used[leader] -= n
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
