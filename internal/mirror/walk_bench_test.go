package mirror

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// manyPartitions gives f topics×partitions fast-path partitions, every
// leader broker 1 on both sides.
func manyPartitions(f *forwarder, topics int, partitions int32) {
	for i := range topics {
		name := fmt.Sprintf("t%05d", i)
		leaders := make([]int32, partitions)
		for j := range leaders {
			leaders[j] = 1
		}
		f.srcMeta[name] = topicMeta{leaders: leaders}
		f.dstMeta["A."+name] = topicMeta{leaders: leaders}
		ts := &topicState{Topic: Topic{Source: name, Remote: "A." + name, Partitions: partitions}}
		for j := range partitions {
			p := testPartition()
			p.topic, p.num = ts, j
			f.parts[tp{name, j}] = newFastPart(p, 0)
		}
	}
}

// The owner loop walks the partitions at each event it handles; at 10,000
// partitions startFetches, shares and startProduces were 45 % of Strait's
// CPU (bench/results/scale/profile). One walk of startFetches with every
// fetch connection busy, as while responses are on their way.
func BenchmarkStartFetchesTenThousandPartitions(b *testing.B) {
	m := testMirror()
	f := newForwarder(forwardConfig{Codec: -1}, forwardDeps{Totals: &m.totals, Log: m.log})
	manyPartitions(f, 5000, 2)
	busy := make([]fetchConn, fetchConnsPerBroker)
	for i := range busy {
		busy[i].busy = true
	}
	f.fetchConns = &fetchConns{clients: make([]*kgo.Client, fetchConnsPerBroker), brokers: map[int32][]fetchConn{1: busy}}
	now := time.Now()
	for b.Loop() {
		f.sharesAt = time.Time{} // shares are counted again after every fetch response
		f.startFetches(b.Context(), now)
	}
}
