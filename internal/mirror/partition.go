package mirror

import (
	"context"
	"sync"
	"sync/atomic"

	"strait/internal/offsets"
)

// partition is the replication state of one source partition. The poll
// goroutine appends the source offsets of the records it hands to the
// producer; the producer's promise goroutine pops them in the same order
// (franz-go completes records of one partition in order and calls promises
// serially), so each acknowledgement pairs a source offset with the target
// offset the broker assigned.
type partition struct {
	topic   *topicState
	num     int32
	initial bool // present when the flow started: auto.offset.reset applies

	// ctx is attached to every record produced for this partition, so the
	// promise finds its partition without a map lookup or an allocation.
	ctx context.Context

	mu      sync.Mutex
	pending offsetQueue // source offsets handed to the producer, not yet acknowledged
	acked   int64       // next source offset after the last acknowledged record; -1 before any
	skipTo  int64       // offset past the last skipped control record; applied once pending drains
	err     error       // set when the partition stopped; it is never resumed in this run

	idx   *offsets.Partition   // exact offset map, fed by acknowledgements
	syncs *offsets.SyncEmitter // MM2 offset-sync emission state

	removed   atomic.Bool  // its topic was deleted on the source
	fast      atomic.Bool  // on the fast path (forwarder) rather than the record path
	committed int64        // last progress committed to the target; -1 before any
	end       atomic.Int64 // source end offset (LSO when read_committed) seen in the last fetch
	records   atomic.Int64 // records acknowledged by the target
	bytes     atomic.Int64 // key+value+header bytes acknowledged
}

type partKey struct{}

func partitionOf(ctx context.Context) *partition {
	p, _ := ctx.Value(partKey{}).(*partition)
	return p
}

// skipPast records that offset needs no copy (a transaction marker). The
// caller holds p.mu.
func (p *partition) skipPast(offset int64) {
	if p.pending.len() == 0 {
		p.acked = max(p.acked, offset+1)
		p.idx.Cover(p.acked)
		return
	}
	p.skipTo = max(p.skipTo, offset+1)
}

// fail stops the partition with err unless it already stopped.
func (p *partition) fail(err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return false
	}
	p.err = err
	return true
}

func (p *partition) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// offsetQueue is a FIFO of int64 backed by a ring that grows as needed; it
// does not allocate once it reached its working size.
type offsetQueue struct {
	buf        []int64
	head, size int
}

func (q *offsetQueue) push(v int64) {
	if q.size == len(q.buf) {
		n := max(64, 2*len(q.buf))
		nb := make([]int64, n)
		for i := 0; i < q.size; i++ {
			nb[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.size)%len(q.buf)] = v
	q.size++
}

func (q *offsetQueue) pop() (int64, bool) {
	if q.size == 0 {
		return 0, false
	}
	v := q.buf[q.head]
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return v, true
}

func (q *offsetQueue) len() int { return q.size }
