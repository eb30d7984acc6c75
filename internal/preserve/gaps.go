package preserve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/mirror/fastpath"
)

// Gaps is the fast path's GapFiller: one Filler per remote partition, on a client of
// the target with fastpath.TransactionOpts, whose transactional id is the partition's
// (FillerID). Whoever fills a partition, on any node, uses the same id, so that a new
// owner fences (Fence) the previous owner's filler before it reads where the partition
// ends: a filler transaction, even one that wrote no record, leaves a marker in every
// partition it added whenever it ends, and one left open by a node that died or froze
// would otherwise end later, inside the new owner's copy. Calls on different partitions
// run concurrently, from one call or several; a partition must not be in two calls at
// once (a Filler is not safe for concurrent use).
type Gaps struct {
	cl      *kgo.Client
	prefix  string
	timeout time.Duration

	mu      sync.Mutex
	fillers map[fastpath.Gap]*Filler // by topic and partition (From and To zero)
}

var _ fastpath.GapFiller = (*Gaps)(nil)

// NewGaps returns a GapFiller writing on cl, which it does not close, with transactional
// ids from prefix (FillerID) and transaction timeout timeout.
func NewGaps(cl *kgo.Client, prefix string, timeout time.Duration) *Gaps {
	return &Gaps{cl: cl, prefix: prefix, timeout: timeout, fillers: map[fastpath.Gap]*Filler{}}
}

// FillerID is the transactional id of the filler of topic[partition] under prefix.
func FillerID(prefix, topic string, partition int32) string {
	return fmt.Sprintf("%s-%s-%d", prefix, topic, partition)
}

// parallel bounds the partitions filled or fenced at once.
const parallel = 16

// Fence makes a new producer epoch for the filler of each partition, which aborts the
// transaction an earlier filler of it (this node's or another's) left open and fences
// that filler: once it returns nil for a partition, nothing of an earlier filler lands
// there any more.
func (g *Gaps) Fence(ctx context.Context, partitions []fastpath.Gap) []error {
	return g.each(partitions, func(key fastpath.Gap) error {
		_, err := g.renew(ctx, key)
		return err
	})
}

// Fill is Filler.Fill, each gap with its partition's filler.
func (g *Gaps) Fill(ctx context.Context, gaps []fastpath.Gap) []error {
	return g.each(gaps, func(gap fastpath.Gap) error {
		f, err := g.filler(ctx, gap)
		if err != nil {
			return err
		}
		return f.Fill(ctx, gap)
	})
}

// StartAt is Filler.StartAt, each start with its partition's filler.
func (g *Gaps) StartAt(ctx context.Context, starts []Start) []error {
	keys := make([]fastpath.Gap, len(starts))
	for i, s := range starts {
		keys[i] = fastpath.Gap{Topic: s.Topic, Partition: s.Partition}
	}
	return g.each(keys, func(key fastpath.Gap) error {
		f, err := g.filler(ctx, key)
		if err != nil {
			return err
		}
		for _, s := range starts {
			if s.Topic == key.Topic && s.Partition == key.Partition {
				return f.StartAt(ctx, s)
			}
		}
		return nil
	})
}

// each runs do for every item, up to parallel at once; items of one partition must not
// repeat (a Filler is not safe for concurrent use).
func (g *Gaps) each(items []fastpath.Gap, do func(fastpath.Gap) error) []error {
	errs := make([]error, len(items))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, item := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = do(item)
		})
	}
	wg.Wait()
	return errs
}

// filler returns the partition's filler, making one with a new epoch when it has none
// or its last one failed.
func (g *Gaps) filler(ctx context.Context, gap fastpath.Gap) (*Filler, error) {
	key := fastpath.Gap{Topic: gap.Topic, Partition: gap.Partition}
	g.mu.Lock()
	f := g.fillers[key]
	g.mu.Unlock()
	if f != nil && f.failed == nil {
		return f, nil
	}
	return g.renew(ctx, key)
}

// renew makes the partition's filler with a new producer epoch.
func (g *Gaps) renew(ctx context.Context, key fastpath.Gap) (*Filler, error) {
	txn := fastpath.Transactions{ID: FillerID(g.prefix, key.Topic, key.Partition), Timeout: g.timeout}
	var p fastpath.Producer
	var err error
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		// InitProducerID answers CONCURRENT_TRANSACTIONS while it aborts the
		// transaction the last epoch left open.
		if p, err = fastpath.NewProducer(ctx, g.cl, txn); err == nil || !errors.Is(err, kerr.ConcurrentTransactions) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("fencing the filler of %s[%d]: %w (gave up: %w)", key.Topic, key.Partition, err, context.Cause(ctx))
		case <-time.After(wait):
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the filler of %s[%d]: %w", key.Topic, key.Partition, err)
	}
	f := NewFiller(p)
	g.mu.Lock()
	g.fillers[key] = f
	g.mu.Unlock()
	return f, nil
}
