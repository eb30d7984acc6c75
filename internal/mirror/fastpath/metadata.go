package fastpath

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/mirror/flow"
)

type topicMeta struct {
	id      [16]byte
	leaders []int32
	epochs  []int32 // each partition's leader epoch; nil when not known
}

// epochOf returns a partition's leader epoch in meta, -1 when unknown.
func epochOf(meta map[string]topicMeta, topic string, partition int32) int32 {
	tm, ok := meta[topic]
	if !ok || int(partition) >= len(tm.epochs) {
		return -1
	}
	return tm.epochs[partition]
}

// roundTrip times a Metadata request for no topic (brokers and cluster id
// only: the broker answers at once) to any broker of cl; 0 when it fails.
func roundTrip(ctx context.Context, cl *kgo.Client) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // none (nil would be all)
	start := time.Now()
	if _, err := req.RequestWith(ctx, cl); err != nil {
		return 0
	}
	return time.Since(start)
}

func (f *Forwarder) refreshMeta(ctx context.Context) {
	f.lastMeta = time.Now()
	var srcTopics, dstTopics []string
	seenS, seenD := map[string]bool{}, map[string]bool{}
	for _, fp := range f.parts {
		if s := fp.p.Source(); !seenS[s] {
			seenS[s] = true
			srcTopics = append(srcTopics, s)
		}
		if r := fp.p.Remote(); !seenD[r] {
			seenD[r] = true
			dstTopics = append(dstTopics, r)
		}
	}
	if f.srcStale && len(srcTopics) > 0 {
		f.srcStale = false
		f.metaInflight++
		f.spawn(func() any {
			// Beside the load, not before it: over a long link a round
			// trip first would delay the first fetch by as much.
			rtt := make(chan time.Duration, 1)
			go func() { rtt <- roundTrip(ctx, f.src) }()
			md := loadMeta(ctx, f.src, srcTopics, true)
			md.rtt = <-rtt
			return md
		})
	}
	if f.dstStale && len(dstTopics) > 0 {
		f.dstStale = false
		f.metaInflight++
		f.spawn(func() any { return loadMeta(ctx, f.dst, dstTopics, false) })
	}
}

func loadMeta(ctx context.Context, cl *kgo.Client, topics []string, source bool) metaDone {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).Metadata(ctx, topics...)
	out := metaDone{source: source, meta: map[string]topicMeta{}, err: err}
	if err != nil {
		return out
	}
	for name, t := range md.Topics {
		if t.Err != nil {
			continue
		}
		tm := topicMeta{id: t.ID, leaders: make([]int32, len(t.Partitions)), epochs: make([]int32, len(t.Partitions))}
		for _, p := range t.Partitions {
			if int(p.Partition) < len(tm.leaders) {
				tm.leaders[p.Partition], tm.epochs[p.Partition] = p.Leader, p.LeaderEpoch
				if p.Err != nil {
					tm.leaders[p.Partition] = -1
				}
			}
		}
		out.meta[name] = tm
	}
	return out
}

func (f *Forwarder) initProducerID(ctx context.Context) {
	f.pidInflight = true
	f.spawn(func() any {
		pid, epoch, err := NewProducerID(ctx, f.dst, f.cfg.Txn, f.deps.Provenance.Register)
		return pidDone{pid: pid, epoch: epoch, err: err}
	})
}

// NewProducerID asks the target for a producer id, within 30 s: for the
// transactional id in exactly-once mode (txn), which fences every earlier
// producer with that id and aborts its open transaction. In an
// active-active pair it registers the id (register) before any batch
// carries it: the reverse flow must know it when it reads the batch.
func NewProducerID(ctx context.Context, cl *kgo.Client, txn *Transactions, register func(context.Context, int64) error) (int64, int16, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionTimeoutMillis = -1
	req.ProducerID, req.ProducerEpoch = -1, -1
	if txn != nil {
		req.TransactionalID = &txn.ID
		req.TransactionTimeoutMillis = int32(txn.Timeout.Milliseconds())
	}
	resp, err := cl.Request(ctx, req)
	if err != nil {
		return -1, -1, err
	}
	r := resp.(*kmsg.InitProducerIDResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return -1, -1, err
	}
	if register != nil {
		if err := register(ctx, r.ProducerID); err != nil {
			return -1, -1, err
		}
	}
	return r.ProducerID, r.ProducerEpoch, nil
}

// usePID gives the forwarder the producer id it writes with before it
// runs: exactly-once mode gets its own before it reads what is committed.
func (f *Forwarder) UsePID(pid int64, epoch int16) {
	f.pid, f.epoch, f.pidWanted = pid, epoch, false
	if f.txn != nil {
		f.txn.begin(time.Now())
	}
}

type pidDone struct {
	pid   int64
	epoch int16
	err   error
}

// namesByID indexes metadata by topic ID. Kafka answers fetches and
// produces by topic ID alone from the versions that carry IDs, so every
// response needs it; it changes only with metadata.
func namesByID(meta map[string]topicMeta) map[[16]byte]string {
	names := make(map[[16]byte]string, len(meta))
	for name, tm := range meta {
		names[tm.id] = name
	}
	return names
}

// topicName is a response topic's name: as given, or found by its ID.
func topicName(names map[[16]byte]string, name string, id [16]byte) string {
	if name == "" {
		return names[id]
	}
	return name
}

// leader returns the leader of a partition, or -1.
func leaderOf(meta map[string]topicMeta, topic string, partition int32) (int32, [16]byte) {
	tm, ok := meta[topic]
	if !ok || int(partition) >= len(tm.leaders) {
		return -1, [16]byte{}
	}
	return tm.leaders[partition], tm.id
}

// checkIncarnations stops the partitions of every source topic whose ID
// changed in fresh metadata: the topic was deleted and recreated, and its
// new incarnation must not be fetched at the old one's offsets.
func (f *Forwarder) checkIncarnations(meta map[string]topicMeta) {
	for _, fp := range f.parts {
		id := fp.p.TopicID()
		tm, ok := meta[fp.p.Source()]
		if !ok || tm.id == ([16]byte{}) || id == ([16]byte{}) || tm.id == id || fp.state == gone {
			continue
		}
		f.fail(fp, flow.RecreatedError(fp.p.Source(), fp.p.Remote(), fp.p.Partition(), fp.p.Position()))
	}
}
