package mirror

import (
	"sync"

	"strait/internal/index"
)

// Beginning is where a flow began on this node: the topics the source had
// at the control plane's first listing, whose partitions auto.offset.reset
// applies to (partitions and topics that appear later are copied from
// their start), and where auto.offset.reset=latest began each of them. A
// node runs a new mirror of the flow at each rebalance and each
// exactly-once attempt restarts its partitions, and every one of them must
// start a partition without stored progress as the flow's first did: so
// the daemon keeps one Beginning per flow and gives it to every mirror
// (Config.Beginning). Its methods may be called from any goroutine.
type Beginning struct {
	mu     sync.Mutex
	topics map[string]int32 // nil until the first listing
	latest map[index.TP]int64
}

// Listed records the first listing of the flow's topics (ready); later
// listings change nothing. An empty first listing means the source had
// none of the flow's topics when it began.
func (b *Beginning) Listed(ready []Topic) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.topics != nil {
		return
	}
	b.topics = make(map[string]int32, len(ready))
	for _, t := range ready {
		b.topics[t.Source] = max(b.topics[t.Source], t.Partitions)
	}
}

// initial reports whether partition n of topic existed when the flow
// began (auto.offset.reset applies to it). Before the first listing none
// did.
func (b *Beginning) initial(topic string, n int32) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return n < b.topics[topic]
}

// latestOf returns where auto.offset.reset=latest began a partition, if it
// did.
func (b *Beginning) latestOf(tp index.TP) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.latest[tp]
	return o, ok
}

// beganLatest records where auto.offset.reset=latest began a partition.
func (b *Beginning) beganLatest(tp index.TP, offset int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.latest == nil {
		b.latest = map[index.TP]int64{}
	}
	b.latest[tp] = offset
}
