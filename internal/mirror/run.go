package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"strait/internal/index"
	"strait/internal/mirror/fastpath"
)

// Run replicates until ctx is done, then stops fetching, waits for in-flight
// records (up to ShutdownTimeout), commits final progress and returns. It
// returns an error only when the flow as a whole cannot run.
//
// In exactly-once mode an attempt that had to abort its transaction
// (fastpath/txn.go) is followed by another, which starts again from the progress,
// offset index and takeover state the committed transactions stored: the
// same road as a restart after a crash. An attempt that could not read the
// stored state for a passing reason (loadError) is tried again too.
func (m *Mirror) Run(ctx context.Context) error {
	backoff := attemptBackoffMin
	for {
		commits := m.txnCommits.Load()
		err := m.attempt(ctx)
		var (
			aborted *abortedError
			load    *loadError
		)
		switch {
		case ctx.Err() != nil:
			return err
		case errors.As(err, &aborted):
			m.txnAborts.Add(1)
			if m.txnCommits.Load() > commits {
				backoff = attemptBackoffMin // it made progress: not a loop of failures
			}
			m.log.Warn("exactly-once mode: aborted the transaction; starting again from the last committed one", "err", aborted.err, "retry_in", backoff)
		case errors.As(err, &load) && !errFinal(load.err):
			backoff = min(backoff, loadBackoffMax)
			m.log.Warn("reading what the target stores for the flow failed; trying again", "err", load.err, "retry_in", backoff)
		default:
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, attemptBackoffMax)
		m.resetAttempt()
	}
}

// The wait before another attempt after an aborted transaction or a failed
// read of the stored state (loadError), doubling while attempts commit
// nothing.
const (
	attemptBackoffMin = 500 * time.Millisecond
	attemptBackoffMax = 30 * time.Second
	// loadBackoffMax is lower: reading the stored state is cheap, and a
	// flow should start soon after its target is back.
	loadBackoffMax = 4 * time.Second
)

// abortedError is the end of an attempt whose transaction was aborted.
type abortedError struct{ err error }

func (e *abortedError) Error() string {
	return "exactly-once mode aborted the transaction: " + e.err.Error()
}

func (e *abortedError) Unwrap() error { return e.err }

// loadError is the end of an attempt that could not read what the target
// stores for the flow (progress, MM2's offsets, the offset index): nothing
// was written, so Run tries again unless asking again cannot help
// (errFinal). A target that drops connections during a rebalance must
// delay the start, not stop the node.
type loadError struct{ err error }

func (e *loadError) Error() string { return e.err.Error() }

func (e *loadError) Unwrap() error { return e.err }

// attempt is one run of the data plane, from the progress and offset index
// stored on the target.
func (m *Mirror) attempt(ctx context.Context) error {
	var (
		pid   int64
		epoch int16
		err   error
	)
	if m.cfg.Transactions != nil {
		// First fence: the progress and index that an earlier attempt (or
		// process) of this node left in an open transaction are read only
		// once that transaction is aborted.
		pid, epoch, err = m.transactionalProducer(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
	}
	stored, err := m.loadProgress(ctx)
	if ctx.Err() != nil {
		return nil // stopped while starting: nothing to flush
	}
	if err != nil {
		return &loadError{err}
	}
	mm2, err := m.loadTakeover(ctx)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return &loadError{fmt.Errorf("flow %s: %w", m.cfg.Flow, err)}
	}
	idx, err := index.Load(ctx, m.cl.IndexReader, m.cfg.IndexTopic)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return &loadError{fmt.Errorf("flow %s: loading the offset index: %w", m.cfg.Flow, err)}
	}
	m.badRecords.Add(int64(idx.Skipped))
	if idx.Skipped > 0 {
		m.log.Warn("skipped undecodable offset index records", "topic", m.cfg.IndexTopic, "count", idx.Skipped)
	}
	gaps, closeGaps, err := m.newGaps()
	if err != nil {
		return err
	}
	defer closeGaps()
	m.mu.Lock()
	m.stored = stored
	m.mm2 = mm2
	m.index = idx
	m.gaps = gaps
	m.fwd = m.newForwarder()
	if m.cfg.Transactions != nil {
		m.fwd.UsePID(pid, epoch)
	}
	m.mu.Unlock()

	// Records carry a context that outlives ctx: a graceful stop flushes
	// them; only the shutdown deadline, ShutdownTimeout after ctx ends,
	// cancels them.
	produceCtx, cancelProduce := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelProduce()
	m.setAbandon(cancelProduce)
	deadline := time.AfterFunc(time.Duration(math.MaxInt64), cancelProduce) // armed when ctx ends
	arm := context.AfterFunc(ctx, func() { deadline.Reset(m.cfg.ShutdownTimeout) })
	defer func() {
		arm()
		deadline.Stop()
	}()

	if m.cfg.Transactions != nil {
		return m.attemptTransactional(ctx, produceCtx)
	}
	m.registerRecordProducer(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { m.poll(ctx) })
	wg.Go(func() { m.applyUpdates(ctx, produceCtx) })
	wg.Go(func() { m.commitLoop(ctx) })
	wg.Go(func() { m.refreshEnds(ctx) })
	if m.deps.Provenance.Register != nil {
		wg.Go(func() { m.registerRenewed(ctx) })
	}
	if m.fwd != nil {
		// The forwarder stops fetching with ctx and returns once its
		// produce requests in flight are answered.
		wg.Go(func() { _ = m.fwd.Run(ctx, produceCtx) })
	}
	wg.Wait()
	m.releaseSource()

	// Phase two of shutdown: flush what the target has not acknowledged yet.
	err = m.dst.Flush(produceCtx)
	if err != nil {
		m.log.Warn("shutdown deadline passed before the target acknowledged every record; they will be copied again on restart",
			"timeout", m.cfg.ShutdownTimeout, "buffered_records", m.dst.BufferedProduceRecords())
		purgeCtx, cancelPurge := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = m.dst.Flush(purgeCtx)
		cancelPurge()
	}
	commitCtx, cancelCommit := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancelCommit()
	if err := m.commit(commitCtx); err != nil {
		return fmt.Errorf("flow %s: committing final progress: %w", m.cfg.Flow, err)
	}
	return nil
}

// Abandon gives up, at once, every record and batch the mirror has not
// written: nothing more is sent, what is in flight is not waited for, and
// Run returns after committing the progress of what the target
// acknowledged (if the share still allows it). The daemon calls it when a
// mirror that gives partitions up must stop before another node takes
// them, and when the node lost its membership.
func (m *Mirror) Abandon() {
	m.abandonMu.Lock()
	defer m.abandonMu.Unlock()
	m.abandoned = true
	if m.abandon != nil {
		m.abandon()
	}
}

// setAbandon registers the produce context's cancel of the attempt that
// starts, cancelling it at once if the mirror was abandoned.
func (m *Mirror) setAbandon(cancel context.CancelFunc) {
	m.abandonMu.Lock()
	defer m.abandonMu.Unlock()
	m.abandon = cancel
	if m.abandoned {
		cancel()
	}
}

// attemptTransactional runs the data plane in exactly-once mode: only the
// fast path, which commits its own transactions (the last one when ctx
// ends). When it aborts, the attempt's other goroutines stop too.
func (m *Mirror) attemptTransactional(ctx, produceCtx context.Context) error {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { m.applyUpdates(actx, produceCtx) })
	wg.Go(func() { m.refreshEnds(actx) })
	err := m.fwd.Run(actx, produceCtx)
	cancel()
	wg.Wait()
	if err != nil {
		// Abort at once rather than leave the transaction open until the
		// coordinator times it out: until it ends, read_committed readers
		// of its partitions wait, and so does the node that takes them
		// over. InitProducerID aborts it and bumps the epoch, which also
		// fences a produce request of ours still on its way (EndTxn would
		// keep the epoch, and such a late append would open a transaction
		// nobody ends on brokers that do not verify it). Best effort: the
		// next attempt's InitProducerID does the same.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if _, _, aerr := fastpath.NewProducerID(actx, m.dst, m.cfg.Transactions, nil); aerr != nil && !errors.Is(aerr, kerr.ConcurrentTransactions) {
			m.log.Debug("exactly-once mode: aborting the transaction failed; the coordinator aborts it on its timeout", "err", aerr)
		}
		cancel()
	}
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("flow %s: the last transaction was not committed; its records are copied again on restart: %w", m.cfg.Flow, err)
	}
	return &abortedError{err: fmt.Errorf("flow %s: %w", m.cfg.Flow, err)}
}

// transactionalProducer gets the producer id of exactly-once mode, trying
// again (with a capped backoff) until it succeeds or ctx ends. A refusal
// that trying again cannot change is an error that names the fix.
func (m *Mirror) transactionalProducer(ctx context.Context) (int64, int16, error) {
	backoff := fastpath.PIDBackoffMin
	id := m.cfg.Transactions.ID
	for {
		pid, epoch, err := fastpath.NewProducerID(ctx, m.dst, m.cfg.Transactions, m.deps.Provenance.Register)
		switch {
		case err == nil || ctx.Err() != nil:
			return pid, epoch, nil
		case errors.Is(err, kerr.InvalidTransactionTimeout):
			return -1, -1, fmt.Errorf("flow %s: the target refused the transaction timeout %v of exactly-once mode: %w; set the target producer's transaction.timeout.ms below the brokers' transaction.max.timeout.ms",
				m.cfg.Flow, m.cfg.Transactions.Timeout, err)
		case errors.Is(err, kerr.TransactionalIDAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed):
			return -1, -1, fmt.Errorf("flow %s: the target refused exactly-once mode's transactional id %q: %w; grant Strait's target principal WRITE and DESCRIBE on the TransactionalId %q (a prefixed ACL on %q covers every node) and IDEMPOTENT_WRITE on the cluster",
				m.cfg.Flow, id, err, id, m.cfg.Group+"-")
		}
		level := slog.LevelWarn
		if errors.Is(err, kerr.ConcurrentTransactions) {
			level = slog.LevelDebug // the coordinator still aborts the transaction fenced
		}
		m.log.Log(ctx, level, "exactly-once mode: getting the transactional producer id failed; retrying", "transactional_id", m.cfg.Transactions.ID, "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return -1, -1, nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, fastpath.PIDBackoffMax)
	}
}

// resetAttempt prepares the next attempt: every partition starts anew from
// what the next attempt reads from the target, the topics the control plane
// handed over are applied again, and auto.offset.reset applies to the same
// partitions as at the flow's start.
func (m *Mirror) resetAttempt() {
	m.mu.Lock()
	topics := make([]Topic, 0, len(m.topics))
	for _, ts := range m.topics {
		t := ts.Topic
		t.Partitions = int32(len(ts.parts))
		topics = append(topics, t)
		for _, p := range ownedParts(ts.parts) {
			// A stopped partition is not resumed in this run: the next
			// attempt starts it stopped, with its error.
			if err := p.Failed(); err != nil {
				if m.stopped == nil {
					m.stopped = map[index.TP]error{}
				}
				m.stopped[index.TP{Topic: t.Source, Partition: p.num}] = err
			}
		}
	}
	m.topics = make(map[string]*topicState)
	m.startLater = nil // the next attempt starts every partition anew
	m.remoteIDs = nil
	m.mu.Unlock()

	m.pendingMu.Lock()
	if m.pendingAdd == nil {
		m.pendingAdd, m.pendingGone = map[string]Topic{}, map[string]bool{}
	}
	for _, t := range topics {
		if !m.pendingGone[t.Source] {
			m.addPendingLocked(t)
		}
	}
	m.pendingMu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// releaseSource hands the record path's consumer back as it found it: no
// partition consumed or paused. A shared flow runs a new mirror on the
// same clients when the node's share changes, and franz-go would keep an
// old partition's offset, or its pause, for the new one.
func (m *Mirror) releaseSource() {
	m.mu.RLock()
	parts := map[string][]int32{}
	for _, t := range m.topics {
		for _, p := range t.parts {
			parts[t.Source] = append(parts[t.Source], p.num)
		}
	}
	m.mu.RUnlock()
	if len(parts) > 0 {
		m.src.RemoveConsumePartitions(parts)
		m.src.ResumeFetchPartitions(parts)
	}
}
