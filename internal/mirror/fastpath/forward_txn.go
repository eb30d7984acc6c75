package fastpath

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"strait/internal/mirror/flow"
)

// txnState is the fast path's open transaction in exactly-once mode (see
// txn.go). Only the forwarder's goroutine touches it; the network calls run
// in goroutines of their own and report back as addDone and commitDone.
type txnState struct {
	cfg        Transactions
	indexTopic string

	// added: the remote partitions in the open transaction; a batch is
	// sent only to one of them. The offset index partition joins with the
	// first data partitions of each transaction.
	added  map[tp]bool
	adding bool // an AddPartitionsToTxn is in flight
	// since is when the last transaction ended (or the producer id came):
	// the next ends Interval later.
	since time.Time
	phase txnPhase  // lifecycle.go
	ended time.Time // when the phase became ending
	// indexSeq is the next sequence of the offset index partition.
	indexSeq int32
}

func newTxnState(cfg Transactions, indexTopic string) *txnState {
	return &txnState{cfg: cfg, indexTopic: indexTopic, added: map[tp]bool{}}
}

// indexKey is the offset index partition as a member of the transaction.
func (t *txnState) indexKey() tp { return tp{t.indexTopic, 0} }

// begin starts afresh with a new producer id: nothing is in a transaction.
func (t *txnState) begin(now time.Time) {
	t.added, t.since, t.indexSeq = map[tp]bool{}, now, 0
	t.to(txnOpen)
}

// CommitTxn is how the mirror ends a transaction (Mirror.CommitTxn): it
// writes the offset index records and progress of everything acknowledged
// into the transaction and commits it. open says partitions were added,
// indexAdded that the index partition is one of them; indexSeq is the index
// partition's next sequence, and the one after the records written is
// returned.
type CommitTxn func(ctx context.Context, p Producer, open, indexAdded bool, indexSeq int32) (int32, error)

type addDone struct {
	parts []tp
	err   error
}

type commitDone struct {
	indexSeq int32
	err      error
}

// producer is the forwarder's transactional producer as it stands.
func (f *Forwarder) producer() Producer {
	return Producer{Client: f.dst, ID: f.txn.cfg.ID, PID: f.pid, Epoch: f.epoch}
}

// stepTxn moves the transaction on: partitions with batches to send join
// it; after Interval (or when the flow stops) it ends, and once every batch
// sent in it is acknowledged it commits. Batches unacknowledged for half
// the transaction timeout end the attempt instead.
func (f *Forwarder) stepTxn(ctx context.Context, now time.Time) {
	t := f.txn
	if f.failed != nil || t.phase == txnFinished {
		return
	}
	if ctx.Err() != nil {
		// The shutdown deadline passed (ctx is the produce context): the
		// transaction cannot commit now; its records are copied again.
		f.abortAttempt(errors.New("the shutdown deadline passed before the last transaction could commit"))
		return
	}
	if f.pid < 0 || f.pidWanted {
		if f.stopFetching && !f.pidInflight {
			t.to(txnFinished) // no producer id: nothing was written
		}
		return
	}
	if t.phase == txnOpen && (now.Sub(t.since) >= t.cfg.Interval || f.stopFetching) {
		t.to(txnEnding)
		t.ended = now
	}
	if t.phase == txnOpen {
		f.addToTxn(ctx, now)
		return
	}
	if t.phase == txnCommitting || t.adding {
		return
	}
	if !f.settled() {
		if wait := t.cfg.Timeout / 2; now.Sub(t.ended) > wait {
			f.abortAttempt(fmt.Errorf("the target did not acknowledge every batch of the transaction within %v (half of transaction.timeout.ms)", wait))
		}
		return
	}
	t.to(txnCommitting)
	p, open, indexAdded, seq, timeout := f.producer(), len(t.added) > 0, t.added[t.indexKey()], t.indexSeq, t.cfg.Timeout/2
	f.spawn(func() any {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		next, err := f.deps.CommitTxn(cctx, p, open, indexAdded, seq)
		return commitDone{indexSeq: next, err: err}
	})
}

// addToTxn adds to the open transaction, in one request, the remote
// partitions that have a batch to send and are not in it yet.
func (f *Forwarder) addToTxn(ctx context.Context, now time.Time) {
	t := f.txn
	if t.adding {
		return
	}
	var keys []tp
	for key, fp := range f.parts {
		remote := tp{fp.p.Remote(), key.partition}
		if t.added[remote] || len(fp.queue) == 0 || fp.queue[0].skip || now.Before(fp.notBefore) ||
			!fp.sending() || f.targetLeader(fp) < 0 {
			continue
		}
		keys = append(keys, remote)
	}
	if len(keys) == 0 {
		return
	}
	if !t.added[t.indexKey()] {
		keys = append(keys, t.indexKey()) // almost every commit writes index records
	}
	parts := map[string][]int32{}
	for _, k := range keys {
		parts[k.topic] = append(parts[k.topic], k.partition)
	}
	t.adding = true
	p, timeout := f.producer(), t.cfg.Timeout/2
	f.spawn(func() any {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return addDone{parts: keys, err: p.AddPartitions(cctx, parts)}
	})
}

// settled reports whether every batch sent in the open transaction is
// acknowledged: none in flight, and none sent before and put back after a
// failure (it may be written; only its acknowledgement says where).
func (f *Forwarder) settled() bool {
	for _, fp := range f.parts {
		if f.holdsUnacked(fp) {
			return false
		}
	}
	return true
}

// holdsUnacked reports whether a partition holds batches it sent under the
// current producer id that are not acknowledged: in flight, or put back
// after a failure (they are at the head of its queue; the failed head
// first, so a batch further on was sent too only if the head was).
func (f *Forwarder) holdsUnacked(fp *Part) bool {
	if len(fp.sent) > 0 {
		return true
	}
	for _, q := range fp.queue {
		if q.seq >= 0 && q.pid == f.pid {
			return true
		}
		if !q.skip {
			return false
		}
	}
	return false
}

// notWritten marks the queued batches fp sent under producer id pid as not
// written, when the target's answer says so: they hold no open fate in the
// transaction (holdsUnacked).
func (fp *Part) notWritten(pid int64) {
	for _, q := range fp.queue {
		if q.seq >= 0 && q.pid == pid {
			q.seq = -1
		}
	}
}

// stoppedInTxn ends the attempt when a partition that stops holds batches
// of the open transaction that are not acknowledged: they may be written,
// and committing the transaction would commit records its progress does not
// cover. The next attempt starts the partition again from what is
// committed (and stops it again if the cause is still there).
func (f *Forwarder) stoppedInTxn(fp *Part, err error) {
	if f.txn != nil && f.holdsUnacked(fp) {
		f.abortAttempt(fmt.Errorf("%s[%d] stopped with batches of the transaction unacknowledged: %w", fp.p.Source(), fp.p.Partition(), err))
	}
}

// txnAllows reports whether batch q of fp may be sent now: its partition
// is in the open transaction, and the transaction is not ending unless q
// was sent in it before (the commit waits for its answer).
func (f *Forwarder) txnAllows(fp *Part, q *qbatch) bool {
	t := f.txn
	if t == nil {
		return true
	}
	if !t.added[tp{fp.p.Remote(), fp.p.Partition()}] {
		return false
	}
	return t.phase == txnOpen || q.seq >= 0 && q.pid == f.pid
}

// handleTxn applies the answer of a transaction request.
func (f *Forwarder) handleTxn(ev any) {
	t := f.txn
	switch ev := ev.(type) {
	case addDone:
		t.adding = false
		if ev.err != nil {
			f.abortAttempt(ev.err)
			return
		}
		for _, k := range ev.parts {
			t.added[k] = true
		}
	case commitDone:
		if ev.err != nil {
			f.abortAttempt(ev.err)
			return
		}
		t.indexSeq, t.added, t.since = ev.indexSeq, map[tp]bool{}, time.Now()
		if f.stopFetching {
			t.to(txnFinished)
		} else {
			t.to(txnOpen)
		}
	}
}

// abortAttempt ends the forwarder's attempt in exactly-once mode: nothing
// more is fetched, sent or committed, and run returns err once every
// request in flight is answered. The open transaction is aborted by the
// coordinator when the next attempt's InitProducerID fences this producer.
func (f *Forwarder) abortAttempt(err error) {
	if f.failed == nil {
		f.failed = err
	}
	f.stopFetching = true
	if f.txn != nil && f.txn.phase != txnAborted {
		f.txn.to(txnAborted)
	}
}

// breaksTxn reports whether a produce error in exactly-once mode leaves
// the transaction unable to commit: the producer's state is gone or
// fenced, or the partition is not in the transaction as the broker sees
// it.
func breaksTxn(err error) bool {
	return flow.Classify(err) == flow.RenewProducer || errors.Is(err, kerr.InvalidTxnState) ||
		errors.Is(err, kerr.TransactionAbortable) || errors.Is(err, kerr.TransactionalIDAuthorizationFailed)
}
