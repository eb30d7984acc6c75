// Package mirror is the data plane of one flow: it reads the assigned source
// partitions directly (no consumer group), writes every record to the same
// partition of the remote topic with an idempotent producer, and commits
// progress to the target only after the target acknowledged the records.
//
// Order of events for one record: the poll goroutine attaches the record's
// partition and source offset to it (recordCtx) and hands it to the
// producer; when the target acknowledges it, the promise advances the
// partition's progress past that source offset, which is now durable. A
// record that failed stops its partition's progress there. The committer
// writes progress as consumer-group offsets of Config.Group on the target.
package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/batch"
	"strait/internal/index"
	"strait/internal/offsets"
)

// Config is what one flow's data plane needs beyond its clients.
type Config struct {
	Flow   string // "A->B", for logs and status
	Source string // source alias
	Group  string // progress group on the target cluster
	// FlushInterval is how often acknowledged progress is committed.
	FlushInterval time.Duration
	// AutoOffsetReset applies to partitions without stored progress that
	// exist when the flow starts: "earliest", "latest" or "none". Topics and
	// partitions that appear later are always copied from their start.
	AutoOffsetReset string
	// ReadCommitted makes lag use the last stable offset.
	ReadCommitted bool
	// ShutdownTimeout bounds the flush of in-flight records on stop.
	ShutdownTimeout time.Duration

	// IndexTopic is the offset index topic on the target (index.TopicName).
	IndexTopic string
	// SyncTopic receives MM2 offset syncs; empty when
	// emit.offset-syncs.enabled=false. SyncClient writes it.
	SyncTopic string
	// OffsetLagMax is offset.lag.max for MM2's sync emission rules.
	OffsetLagMax int64
	// TakeoverTopic is a Java MM2's Connect offsets topic on the target
	// (mm2-offsets.<source>.internal); partitions without Strait progress
	// resume where MM2 stopped. Empty turns the takeover off.
	TakeoverTopic string

	// FastPath forwards raw batches where no record needs changing (see
	// forward.go); false copies every record through the record path.
	FastPath bool
	// Compression is the target producer's compression.type ("" when the
	// file does not set it). The fast path keeps each batch's codec, so a
	// batch in another codec than a configured one takes the record path.
	Compression string
	// CompressionLevel is the level of Compression's codec, Kafka's number
	// (kafkaclient.Settings.CompressionLevel; 0 is the codec's default),
	// for the batches the fast path recompresses or rebuilds.
	CompressionLevel int
	// Idempotent and Acks are the target producer's settings.
	Idempotent bool
	Acks       int16
	// PartitionFetchSize and FetchMaxBytes bound fast-path fetches
	// (max.partition.fetch.bytes, fetch.max.bytes); 0 = Kafka's defaults.
	PartitionFetchSize int32
	FetchMaxBytes      int32
	// MaxBuffered bounds fetched, unacknowledged bytes on both paths
	// (buffer.memory); 0 = unset: 32 MiB, and on the fast path 32 MiB more
	// over a long link (forwarder.budget).
	MaxBuffered int64
	// IndexMaxSegments bounds each partition's offset map
	// (strait.index.max.segments); 0 = offsets.DefaultMaxSegments.
	IndexMaxSegments int
	// ThrottleBytesPerSecond caps the flow's bandwidth; 0 = unlimited.
	ThrottleBytesPerSecond int64
	// Latency, when set, gives the observer of a source partition's
	// replication latency in seconds (a histogram), called once per record
	// acknowledged.
	Latency func(topic string, partition int32) func(seconds float64)
	// Provenance keeps an active-active pair from looping (see Provenance).
	Provenance Provenance
	// Share is this node's part of the flow when several nodes share it
	// (package coord); the zero value copies every partition alone.
	Share Share
	// Transactions turns on exactly-once mode (txn.go); nil copies at
	// least once.
	Transactions *Transactions
	// Beginning is where the flow began, shared by every mirror the
	// daemon runs for it, which records the control plane's first listing
	// in it; nil: the mirror's first topic set is the flow's beginning.
	Beginning *Beginning
	// Counters are the flow's counts on this node, shared by every mirror
	// the daemon runs for it; nil: the mirror's own.
	Counters *Counters
}

// Counters are what a flow's data plane counted on this node: records and
// bytes copied, Kafka errors met, bad internal records skipped,
// transactions committed and aborted. The daemon gives every mirror of a
// flow the same, so that they go on across the mirrors a node runs (one
// per rebalance): the metrics they feed are counters.
type Counters struct {
	totals     totals
	badRecords atomic.Int64 // undecodable records skipped in internal topics
	errors     errorCounts  // Kafka errors met, by side and class (Status)
	// Exactly-once mode: transactions committed, and attempts aborted.
	txnCommits, txnAborts atomic.Int64
}

// Share is the part of a flow one node copies while it shares the flow
// with others through a group on the target (package coord). A mirror's
// share is fixed for its life: the daemon runs a new mirror when the
// node's assignment changes, after the old one flushed and committed.
type Share struct {
	// Owns reports whether this node copies a source partition; it is
	// asked once per partition, when the partition appears. Nil: every
	// partition.
	Owns func(topic string, partition int32) bool
	// LeaseUntil is when the node's right to write ends: its group
	// membership may have lapsed from then on, so that a node that was
	// stopped past its session timeout writes nothing when it resumes. The
	// zero time: no lease now. Nil: always.
	LeaseUntil func() time.Time
	// Generation gives the group generation and member id that every
	// progress commit carries: the broker rejects the commits of a node
	// fenced out of the group. ok false commits nothing. Nil: commits
	// carry no generation (the group has no members).
	Generation func() (generation int32, member string, ok bool)
}

// owns reports whether the share holds a source partition.
func (s Share) owns(topic string, partition int32) bool {
	return s.Owns == nil || s.Owns(topic, partition)
}

// leased reports whether the node may write data now.
func (s Share) leased() bool { return s.LeaseUntil == nil || time.Now().Before(s.LeaseUntil()) }

// Provenance is how a flow takes part in active-active replication
// (internal/provenance): it registers every producer id it writes with on
// the target before writing with it, and skips the source batches that
// the reverse flow wrote, as it skips transaction markers. The zero value
// does neither.
type Provenance struct {
	Register func(ctx context.Context, pid int64) error
	Returned ReturnedFilter
}

// ReturnedFilter recognises the producer ids of the reverse flow.
type ReturnedFilter interface {
	// Resolve makes every id known; it may read the source's registry.
	Resolve(ctx context.Context, pids []int64) error
	// Returned reports whether a resolved id is the reverse flow's.
	Returned(pid int64) bool
}

// Clients are the Kafka clients of one flow's data plane.
type Clients struct {
	Source *kgo.Client // consumer without consume options; see SourceOpts
	Target *kgo.Client // data producer; see TargetOpts
	// Meta writes the offset index on the target, IndexReader reads it
	// back at start (a client without consume options), and SyncWriter
	// writes offset syncs on the cluster offset-syncs.topic.location names.
	Meta        *kgo.Client
	IndexReader *kgo.Client
	SyncWriter  *kgo.Client
	// NewTarget makes the fast path's produce clients, with Target's
	// settings and SASL logins of their own; nil makes them from Target's
	// options unless it logs in with SASL.
	NewTarget NewClient
	// NewSource makes the fast path's fetch clients, with Source's
	// settings and SASL logins of their own; nil makes them from Source's
	// options unless it logs in with SASL.
	NewSource NewClient
}

// Topic is a source topic whose remote topic the control plane has made
// ready on the target (it exists with at least Partitions partitions).
type Topic struct {
	Source     string   // source topic name
	Remote     string   // target topic name
	ID         [16]byte // source topic ID, stored with progress
	Partitions int32    // partitions 0..Partitions-1 are replicated
}

type topicState struct {
	Topic
	parts []*partition
	// maxMessageBytes is the remote topic's max.message.bytes as described
	// when the topic was added; 0 when unknown.
	maxMessageBytes atomic.Int64
}

// limitText describes the remote topic's size limit for error messages.
func (t *topicState) limitText() string {
	if n := t.maxMessageBytes.Load(); n > 0 {
		return fmt.Sprintf("max.message.bytes=%d", n)
	}
	return "its max.message.bytes"
}

// totals counts what a flow copied.
type totals struct {
	records atomic.Int64
	bytes   atomic.Int64
}

func (t *totals) add(records, bytes int64) {
	t.records.Add(records)
	t.bytes.Add(bytes)
}

// Mirror replicates the topics it is given from src to dst.
type Mirror struct {
	cfg    Config
	src    *kgo.Client // consumer, direct partition assignment
	dst    *kgo.Client // idempotent producer, manual partitioner
	cl     Clients
	srcAdm *kadm.Client
	dstAdm *kadm.Client
	log    *slog.Logger

	fwd       *forwarder   // the fast path of the attempt running; nil when off
	recordPID atomic.Int64 // the record path's registered producer id (Provenance)
	// Renewed record-path producer ids waiting for registerRenewed.
	renewMu   sync.Mutex
	renewed   []int64
	renewWake chan struct{}
	throttle  *throttle           // nil when unlimited
	shares    *recordShares       // the record path's bytes in the producer, by target broker
	remoteIDs map[string][16]byte // remote topic IDs for commits with a generation (commitOffsets)
	index     index.Map           // loaded at start; seeds each partition's map
	unsent    []index.Update      // index changes whose write failed, sent first next time
	// indexBatchBytes bounds a batch of index records in exactly-once mode
	// (writeIndexTxn; only the commit goroutine, one at a time, uses it).
	indexBatchBytes int
	lastPrune       time.Time

	// Topic changes not yet applied; wake signals applyUpdates.
	pendingMu   sync.Mutex
	pendingAdd  map[string]Topic
	pendingGone map[string]bool
	wake        chan struct{}
	failed      chan *partition

	// stopped holds the errors of partitions an earlier attempt stopped,
	// which later attempts start stopped (only applyUpdates and
	// resetAttempt, between attempts, use it).
	stopped map[index.TP]error

	// begin is where the flow began (Config.Beginning, or the mirror's own).
	begin           *Beginning
	sharedBeginning bool

	mu     sync.RWMutex
	topics map[string]*topicState // by source topic name
	// startLater holds owned partitions whose start waits for a listing
	// of the source (retryStart); the next applyUpdates starts them.
	startLater []*partition
	// stored is the progress to resume from, by remote topic: loaded at
	// start, and the last position of topics deleted on the source, so a
	// topic that comes back as a new incarnation is recognised.
	stored map[string]map[int32]storedOffset
	mm2    map[string]map[int32]int64 // MM2's last replicated offsets, by source topic

	*Counters // Config.Counters, or the mirror's own

	// abandon cancels the produce context of the attempt running (Abandon);
	// abandoned makes later attempts start with it cancelled.
	abandonMu sync.Mutex
	abandon   context.CancelFunc
	abandoned bool
}

// New returns a Mirror; it starts nothing.
func New(cfg Config, cl Clients, log *slog.Logger) *Mirror {
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = time.Second
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 30 * time.Second
	}
	if cfg.IndexMaxSegments <= 0 {
		cfg.IndexMaxSegments = offsets.DefaultMaxSegments
	}
	m := &Mirror{
		cfg:       cfg,
		src:       cl.Source,
		dst:       cl.Target,
		cl:        cl,
		srcAdm:    kadm.NewClient(cl.Source),
		dstAdm:    kadm.NewClient(cl.Target),
		log:       log.With("component", "mirror", "flow", cfg.Flow),
		wake:      make(chan struct{}, 1),
		renewWake: make(chan struct{}, 1),
		failed:    make(chan *partition, 64),
		topics:    make(map[string]*topicState),
		throttle:  newThrottle(cfg.ThrottleBytesPerSecond),
		shares:    newRecordShares(cfg.MaxBuffered),
		begin:     cfg.Beginning,
		Counters:  cfg.Counters,
	}
	if m.Counters == nil {
		m.Counters = &Counters{}
	}
	if m.begin == nil {
		m.begin = &Beginning{}
	} else {
		m.sharedBeginning = true
	}
	return m
}

// newForwarder makes the fast path of one attempt, nil when it is off.
func (m *Mirror) newForwarder() *forwarder {
	if !m.cfg.FastPath {
		return nil
	}
	codec := batch.Codec(-1)
	if m.cfg.Compression != "" {
		codec = batch.CodecNamed(m.cfg.Compression)
	}
	return newForwarder(forwardConfig{
		Codec:              codec,
		Level:              m.cfg.CompressionLevel,
		ReadCommitted:      m.cfg.ReadCommitted,
		Idempotent:         m.cfg.Idempotent,
		Acks:               m.cfg.Acks,
		PartitionFetchSize: m.cfg.PartitionFetchSize,
		FetchMaxBytes:      m.cfg.FetchMaxBytes,
		MaxBuffered:        m.cfg.MaxBuffered,
		Txn:                m.cfg.Transactions,
		IndexTopic:         m.cfg.IndexTopic,
	}, forwardDeps{
		Source: m.src, Target: m.dst, NewTarget: m.cl.NewTarget, NewSource: m.cl.NewSource, Throttle: m.throttle, Totals: &m.totals,
		ToRecordPath: m.toRecordPath, Log: m.log.With("path", "fast"), Errors: &m.errors,
		Provenance: m.cfg.Provenance, Share: m.cfg.Share, CommitTxn: m.commitTxn,
	})
}

// recordFetchBytes caps a record-path fetch (compressed bytes).
const recordFetchBytes = 8 << 20

// SourceOpts are the options the source client needs; they apply after the
// user's settings. fetchMaxBytes is the user's fetch.max.bytes (0 unset).
func SourceOpts(readCommitted bool, fetchMaxBytes int32) []kgo.Opt {
	iso := kgo.ReadUncommitted()
	if readCommitted {
		iso = kgo.ReadCommitted()
	}
	if fetchMaxBytes <= 0 || fetchMaxBytes > recordFetchBytes {
		// The record path holds a fetch decompressed while the next one
		// is buffered: capping fetches bounds memory with little effect
		// on throughput.
		fetchMaxBytes = recordFetchBytes
	}
	return []kgo.Opt{
		kgo.FetchMaxBytes(fetchMaxBytes),
		kgo.FetchIsolationLevel(iso),
		// Never reset silently: an out-of-range offset means records were
		// deleted before they were copied, and that must be loud.
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		// Transaction markers are not copied, but they move progress so a
		// caught-up partition commits the source's end offset.
		kgo.KeepControlRecords(),
	}
}

// TargetOpts are the options the target producer needs; they apply after
// the user's settings. bufferBytes is buffer.memory (0 unset).
func TargetOpts(bufferBytes int64) []kgo.Opt {
	if bufferBytes <= 0 {
		bufferBytes = 32 << 20
	}
	return []kgo.Opt{
		// The record path keeps buffer.memory itself, per target broker
		// (recordShares): franz-go's own limit only backs it up, above
		// what one fetch can add, so that Produce never blocks the poll
		// loop on records a dead broker holds.
		kgo.MaxBufferedBytes(int(bufferBytes + 2*recordFetchBytes)),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		// Never drop records: retry until acknowledged or shutdown.
		kgo.RecordRetries(1 << 30),
		kgo.UnknownTopicRetries(-1),
	}
}

// Update adds topics (or partitions of known topics) to replicate, and
// removes topics that are gone from the source. It never blocks. Topics are
// only ever removed through gone: a control-plane hiccup must not restart a
// partition.
func (m *Mirror) Update(ready []Topic, gone []string) {
	m.pendingMu.Lock()
	if m.pendingAdd == nil {
		m.pendingAdd, m.pendingGone = map[string]Topic{}, map[string]bool{}
	}
	for _, t := range ready {
		m.addPendingLocked(t)
		delete(m.pendingGone, t.Source)
	}
	for _, name := range gone {
		delete(m.pendingAdd, name)
		m.pendingGone[name] = true
	}
	m.pendingMu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// addPendingLocked queues topic t for applyUpdates, keeping the larger
// partition count of what is queued already. The caller holds pendingMu.
func (m *Mirror) addPendingLocked(t Topic) {
	if prev, ok := m.pendingAdd[t.Source]; !ok || t.Partitions > prev.Partitions {
		m.pendingAdd[t.Source] = t
	}
}

// Adopt starts the partitions this node did not copy and now does
// (Share.Owns says so now): a node's share only grows while a mirror runs;
// it shrinks by running a new mirror. It never blocks.
func (m *Mirror) Adopt() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Run replicates until ctx is done, then stops fetching, waits for in-flight
// records (up to ShutdownTimeout), commits final progress and returns. It
// returns an error only when the flow as a whole cannot run.
//
// In exactly-once mode an attempt that had to abort its transaction
// (txn.go) is followed by another, which starts again from the progress,
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
	m.mu.Lock()
	m.stored = stored
	m.mm2 = mm2
	m.index = idx
	m.fwd = m.newForwarder()
	if m.cfg.Transactions != nil {
		m.fwd.usePID(pid, epoch)
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
	if m.cfg.Provenance.Register != nil {
		wg.Go(func() { m.registerRenewed(ctx) })
	}
	if m.fwd != nil {
		// The forwarder stops fetching with ctx and returns once its
		// produce requests in flight are answered.
		wg.Go(func() { _ = m.fwd.run(ctx, produceCtx) })
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
	err := m.fwd.run(actx, produceCtx)
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
		if _, _, aerr := newProducerID(actx, m.dst, m.cfg.Transactions, nil); aerr != nil && !errors.Is(aerr, kerr.ConcurrentTransactions) {
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
	backoff := pidBackoffMin
	id := m.cfg.Transactions.ID
	for {
		pid, epoch, err := newProducerID(ctx, m.dst, m.cfg.Transactions, m.cfg.Provenance.Register)
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
		backoff = min(2*backoff, pidBackoffMax)
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
			if err := p.failed(); err != nil {
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

// poll moves fetched records to the producer until ctx is done. It never
// blocks in Produce and never hands the producer more than a target
// broker's share: a partition's fetch goes to the producer only as far as
// its broker's share and franz-go's buffer have room, and the rest waits in
// the partition's backlog, its fetching paused, until acknowledgements make
// room. The promise that makes it wakes the poll loop out of PollFetches
// (recordShares.wait), so a waiting partition goes on at once, not after a
// poll timeout (only partitions waiting in the share of those without a
// known leader look again every leaderRecheck).
func (m *Mirror) poll(ctx context.Context) {
	rp := newRecordPoll(m)
	for {
		m.pauseFailed()
		rp.share = m.shares.share(m.dst)
		rp.feedAll()
		rp.resume()
		pollCtx, cancel := context.WithCancel(ctx)
		if _, ok := rp.waitBrokers[-1]; ok || rp.leaseWait {
			// Partitions waiting in the share of those without a known
			// leader: no acknowledgement says when the producer learns
			// their leader (a new remote topic is loaded at its first
			// record), so look again soon; so too for backlogs waiting
			// for the node's lease.
			pollCtx, cancel = context.WithTimeout(ctx, leaderRecheck)
		}
		rp.wait(cancel)
		fetches := m.src.PollFetches(pollCtx)
		m.shares.unwait()
		cancel()
		if ctx.Err() != nil || fetches.IsClientClosed() {
			return // the backlogs were not handed over: fetched again after a restart
		}
		fetches.EachPartition(func(ftp kgo.FetchTopicPartition) {
			p := m.partition(ftp.Topic, ftp.Partition)
			if p == nil || p.failed() != nil {
				return
			}
			if ftp.Err != nil {
				m.fetchError(ctx, p, ftp.Err)
				return
			}
			end := ftp.HighWatermark
			if m.cfg.ReadCommitted && ftp.LastStableOffset >= 0 {
				end = ftp.LastStableOffset
			}
			p.end.Store(end)
			if len(ftp.Records) == 0 {
				return
			}
			if m.throttle != nil {
				n := 0
				for _, r := range ftp.Records {
					n += len(r.Key) + len(r.Value)
				}
				if m.throttle.wait(ctx, n) != nil {
					return // stopping: these records are fetched again after restart
				}
			}
			if m.resolveReturned(ctx, ftp.Records) != nil {
				return // stopping: these records are fetched again after restart
			}
			// After what is left of earlier fetches: a fetch buffered
			// before the partition was paused still comes in order.
			rp.backlog[p] = append(rp.backlog[p], ftp.Records...)
			rp.feed(p)
		})
	}
}

// leaderRecheck is how often the poll loop looks again at partitions that
// wait in the share of partitions without a known target leader.
const leaderRecheck = 100 * time.Millisecond

// recordPoll is the poll loop's own state; only the poll goroutine uses it.
type recordPoll struct {
	m     *Mirror
	share int64 // each target broker's part of buffer.memory, this round
	// franz-go's MaxBufferedBytes and MaxBufferedRecords: Produce blocks
	// beyond them.
	bufCap, recCap int64

	backlog map[*partition][]*kgo.Record // fetched, not handed to the producer yet, in order
	paused  map[*partition]bool          // fetching paused: a backlog, or their broker over its share
	// What the paused partitions wait for, found by the last feedAll and
	// resume: these brokers draining to the bytes given for each, and
	// franz-go's buffer draining to waitBytes (-1: not waited for).
	waitBrokers map[int32]int64
	waitBytes   int64
	// leaseWait: a backlog waits for the node's lease (Share.LeaseUntil).
	leaseWait bool
}

func newRecordPoll(m *Mirror) *recordPoll {
	rp := &recordPoll{
		m: m, bufCap: math.MaxInt64, recCap: math.MaxInt64,
		backlog: map[*partition][]*kgo.Record{}, paused: map[*partition]bool{},
	}
	if n, _ := m.dst.OptValue(kgo.MaxBufferedBytes).(int64); n > 0 {
		rp.bufCap = n
	}
	if n, _ := m.dst.OptValue(kgo.MaxBufferedRecords).(int64); n > 0 {
		rp.recCap = n
	}
	return rp
}

// feedAll hands every backlog to the producer as far as there is room.
func (rp *recordPoll) feedAll() {
	rp.waitBrokers, rp.waitBytes, rp.leaseWait = map[int32]int64{}, -1, false
	for p := range rp.backlog {
		rp.feed(p)
	}
}

// feed hands the head of p's backlog to the producer, as many records as
// its broker's share and franz-go's buffer have room for (at least one when
// the share or the buffer is empty, so a record larger than either still
// goes), and pauses p's fetching while a backlog is left or its broker is
// over its share. Only the poll goroutine produces to the target client, so
// the room seen here only grows until Produce: Produce never blocks.
func (rp *recordPoll) feed(p *partition) {
	m := rp.m
	recs := rp.backlog[p]
	if len(recs) == 0 {
		delete(rp.backlog, p)
		return
	}
	if p.failed() != nil || p.removed.Load() {
		rp.drop(p)
		return
	}
	if !m.cfg.Share.leased() {
		// Not a sure member of the flow's group now: write nothing, keep
		// the backlog, and look again soon (poll).
		rp.leaseWait = true
		if !rp.paused[p] {
			rp.paused[p] = true
			m.src.PauseFetchPartitions(map[string][]int32{p.topic.Source: {p.num}})
		}
		return
	}
	leader, _, _ := m.dst.PartitionLeader(p.topic.Remote, p.num)
	room := rp.share - m.shares.usedBy(leader)
	bufRoom := rp.bufCap - m.dst.BufferedProduceBytes()
	recRoom := rp.recCap - m.dst.BufferedProduceRecords()
	var n int
	var cost, bytes, count int64
	for ; n < len(recs); n++ {
		r := recs[n]
		if m.notCopied(r) {
			continue // not produced: it only moves progress
		}
		size := recordSize(r)
		first := count == 0
		if cost+size+recordOverhead > room && !(first && room >= rp.share) {
			// Woken at half the share, or once the next record fits.
			rp.waitFor(leader, min(rp.share/2, rp.share-size-recordOverhead))
			break
		}
		if (bytes+size > bufRoom || count+1 > recRoom) && !(first && bufRoom >= rp.bufCap && recRoom >= rp.recCap) {
			rp.waitBytes = max(rp.waitBytes, min(rp.bufCap/2, rp.bufCap-size))
			break
		}
		cost += size + recordOverhead
		bytes += size
		count++
	}
	if n > 0 {
		var limit int64
		if m.cfg.Compression == "" || m.cfg.Compression == "none" {
			limit = p.topic.maxMessageBytes.Load()
		}
		send, tooBig := p.sendRecords(recs[:n], leader, limit, m.notCopied)
		for _, r := range send {
			rc := r.Context.(*recordCtx)
			m.shares.charge(leader, rc.size)
			m.dst.Produce(rc, r, m.promise)
		}
		if tooBig != nil {
			err := m.produceError(p, tooBig.Offset, tooBig, kerr.MessageTooLarge)
			if p.stop(err) {
				m.log.Error("partition stopped", "topic", p.topic.Source, "partition", p.num, "err", err)
				m.pause(p)
			}
			rp.drop(p)
			return
		}
		if send == nil {
			// Stopped or halted (sendRecords returns a non-nil slice
			// otherwise): nothing more of it is sent in this run.
			rp.drop(p)
			return
		}
		clear(recs[:n]) // handed over: the backlog does not keep them
		recs = recs[n:]
	}
	if len(recs) == 0 {
		delete(rp.backlog, p)
	} else {
		rp.backlog[p] = recs
	}
	if (len(recs) > 0 || m.shares.usedBy(leader) >= rp.share) && !rp.paused[p] {
		rp.paused[p] = true
		m.src.PauseFetchPartitions(map[string][]int32{p.topic.Source: {p.num}})
	}
}

// drop forgets p's backlog: p sends nothing more in this run (stopped,
// halted, or its topic is gone). Its fetching is resumed unless the
// partition now in its place is paused, so a recreated topic is fetched.
func (rp *recordPoll) drop(p *partition) {
	delete(rp.backlog, p)
	if !rp.paused[p] {
		return
	}
	delete(rp.paused, p)
	if q := rp.m.partition(p.topic.Source, p.num); q == nil || q == p || !rp.paused[q] {
		rp.m.src.ResumeFetchPartitions(map[string][]int32{p.topic.Source: {p.num}})
	}
}

// resume resumes fetching of paused partitions without a backlog whose
// broker drained to half its share; the others' brokers are waited for.
func (rp *recordPoll) resume() {
	m := rp.m
	for p := range rp.paused {
		if len(rp.backlog[p]) > 0 {
			continue
		}
		// The leader as known now: at the first fetch the producer may
		// not know the remote topic yet (-1).
		leader, _, _ := m.dst.PartitionLeader(p.topic.Remote, p.num)
		if m.shares.usedBy(leader) <= rp.share/2 {
			delete(rp.paused, p)
			m.src.ResumeFetchPartitions(map[string][]int32{p.topic.Source: {p.num}})
			continue
		}
		rp.waitFor(leader, rp.share/2)
	}
}

// waitFor notes that a paused partition waits for leader to drain to low
// bytes (0 at least: an empty share takes any record).
func (rp *recordPoll) waitFor(leader int32, low int64) {
	low = max(low, 0)
	if prev, ok := rp.waitBrokers[leader]; !ok || low > prev {
		rp.waitBrokers[leader] = low
	}
}

// wait arms wake for the coming PollFetches when partitions wait for room:
// it is called when a broker they wait for drains to half its share (or
// enough for the next record), or franz-go's buffer to half of it.
func (rp *recordPoll) wait(wake context.CancelFunc) {
	if len(rp.waitBrokers) == 0 && rp.waitBytes < 0 {
		return
	}
	bufRecords := int64(-1)
	if rp.waitBytes >= 0 {
		bufRecords = rp.recCap / 2
	}
	rp.m.shares.wait(rp.waitBrokers, rp.waitBytes, bufRecords, wake)
}

// promise is called by the producer for every record, serially; each
// record carries its partition and source offset in its recordCtx.
func (m *Mirror) promise(r *kgo.Record, err error) {
	rc, ok := r.Context.(*recordCtx)
	if !ok {
		return
	}
	p := rc.p
	m.shares.release(rc.leader, rc.size)
	if err != nil {
		m.errors.count(sideProduce, err)
		if p.failRecord(rc.src, m.produceError(p, rc.src, r, err)) {
			m.log.Error("partition stopped", "topic", p.topic.Source, "partition", p.num, "err", p.failed())
			select {
			case m.failed <- p:
			default: // the poll loop also skips failed partitions
			}
		}
		return
	}
	m.checkRecordProducer(r.ProducerID)
	copied, more := p.ackRecord(rc.src, r.Offset)
	if !copied {
		return
	}
	p.records.Add(1)
	p.bytes.Add(rc.size)
	ts := r.Timestamp.UnixMilli()
	pending := int64(0)
	if more {
		pending = ts // the next in flight is no older: lag in seconds errs long
	}
	p.timing.copied(ts, 1, pending, time.Now())
	m.totals.add(1, rc.size)
}

// produceError explains why the record at source offset src was not
// written. A record the target refuses for its size is never skipped: the
// error names its offset, its size, the limit and the fix.
func (m *Mirror) produceError(p *partition, src int64, r *kgo.Record, err error) error {
	if classify(err) == errShutdown {
		return err // the flow is stopping: copied again after a restart
	}
	if tooLarge(err) {
		size := recordSize(r)
		if limit := p.topic.maxMessageBytes.Load(); limit > 0 && batchSizeAlone(r) <= limit {
			// The record fits; the batch the producer built around it
			// does not.
			return fmt.Errorf("writing %s[%d] offset %d (%d bytes) to %s: the target refused the producer's batch as larger than its max.message.bytes=%d: set the target producer's max.request.size at most %d, or raise max.message.bytes of %s; Strait stopped the partition rather than skip records: %w",
				p.topic.Source, p.num, src, size, p.topic.Remote, limit, limit, p.topic.Remote, err)
		}
		return fmt.Errorf("record %s[%d] offset %d (%d bytes of key, value and headers) is larger than %s accepts (%s): raise max.message.bytes of %s on the target, and the target producer's max.request.size, above it; Strait stopped the partition rather than skip the record: %w",
			p.topic.Source, p.num, src, size, p.topic.Remote, p.topic.limitText(), p.topic.Remote, err)
	}
	return fmt.Errorf("writing %s[%d] offset %d to %s: %w", p.topic.Source, p.num, src, p.topic.Remote, err)
}

func (m *Mirror) fetchError(ctx context.Context, p *partition, err error) {
	m.errors.count(sideFetch, err)
	switch classify(err) {
	case errShutdown:
		return
	case errRetry:
		return // the consumer retries by itself
	case errTruncated:
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		logStart, lerr := m.logStart(lctx, p.topic.Source, p.num)
		cancel()
		err = truncationError(p, p.uncopied(), logStart, lerr, err)
	default:
		err = fmt.Errorf("reading %s[%d]: %w", p.topic.Source, p.num, err)
	}
	if p.stop(err) {
		m.log.Error("partition stopped", "topic", p.topic.Source, "partition", p.num, "err", err)
		m.pause(p)
	}
}

// logStart lists the source log start offset of one partition.
func (m *Mirror) logStart(ctx context.Context, topic string, num int32) (int64, error) {
	starts, err := m.srcAdm.ListStartOffsets(ctx, topic)
	if err != nil {
		return -1, err
	}
	o, ok := starts.Lookup(topic, num)
	if !ok {
		return -1, fmt.Errorf("no start offset listed for %s[%d]", topic, num)
	}
	return o.Offset, o.Err
}

// truncationError explains an OffsetOutOfRange at source offset next:
// records the flow had not copied yet were deleted on the source
// (retention, DeleteRecords), or the topic was truncated. Strait never
// skips them silently.
func truncationError(p *partition, next, logStart int64, listErr, err error) error {
	if listErr == nil && next >= 0 && next < logStart {
		return fmt.Errorf("source %s[%d]: records %d..%d were deleted before they were replicated (log start is now %d); the partition is stopped to avoid a silent gap",
			p.topic.Source, p.num, next, logStart-1, logStart)
	}
	return fmt.Errorf("source %s[%d]: offset out of range at %d (the topic was truncated or recreated); the partition is stopped to avoid a silent gap: %w", p.topic.Source, p.num, next, err)
}

func (m *Mirror) pauseFailed() {
	for {
		select {
		case p := <-m.failed:
			m.pause(p)
		default:
			return
		}
	}
}

func (m *Mirror) pause(p *partition) {
	m.src.RemoveConsumePartitions(map[string][]int32{p.topic.Source: {p.num}})
}

// partition returns the state of a source partition, or nil.
func (m *Mirror) partition(topic string, num int32) *partition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t := m.topics[topic]
	if t == nil || int(num) >= len(t.parts) {
		return nil
	}
	return t.parts[num]
}
