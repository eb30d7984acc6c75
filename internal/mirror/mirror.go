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
//
// Files: mirror.go holds the Mirror, its configuration and topic updates;
// run.go the attempts and shutdown; recordpath.go the record path (poll,
// promise); partition.go and ledger.go the partition state both paths
// share; start.go, progress.go and status.go the start, the commits and
// the status. The fast path, which forwards raw batches, is package
// fastpath: it sees a partition only as a fastpath.Ledger, which
// partition implements, and the rest of the flow through fastpath.Deps.
// Package flow holds the small types both paths use (error classes,
// throttle, totals, Share, Provenance).
package mirror

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/batch"
	"strait/internal/index"
	"strait/internal/mirror/fastpath"
	"strait/internal/mirror/flow"
	"strait/internal/preserve"
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
	// package fastpath); false copies every record through the record path.
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
	// (buffer.memory, resolved: Budget); never 0.
	MaxBuffered int64
	// LinkBuffer is what the fast path may hold beyond MaxBuffered when
	// the source is a long link away: LongLinkBuffer while buffer.memory is
	// unset, 0 when the user set it (Budget).
	LinkBuffer int64
	// IndexMaxSegments bounds each partition's offset map
	// (strait.index.max.segments, resolved by the config).
	IndexMaxSegments int
	// ThrottleBytesPerSecond caps the flow's bandwidth; 0 = unlimited.
	ThrottleBytesPerSecond int64
	// Transactions turns on exactly-once mode (fastpath/txn.go); nil copies at
	// least once.
	Transactions *Transactions
	// Preserve keeps the source's offsets for the topics it names; nil
	// keeps none. It needs the fast path, read_committed and no
	// Transactions.
	Preserve *Preserve
}

// Deps are what a mirror uses and does not own: its clients, its logger,
// and what the daemon shares between the mirrors it runs for a flow.
type Deps struct {
	Clients Clients
	Log     *slog.Logger
	// Latency, when set, gives the observer of a source partition's
	// replication latency in seconds (a histogram), called once per record
	// acknowledged.
	Latency func(topic string, partition int32) func(seconds float64)
	// Provenance keeps an active-active pair from looping (see Provenance).
	Provenance Provenance
	// Share is this node's part of the flow when several nodes share it
	// (package coord); the zero value copies every partition alone.
	Share Share
	// Beginning is where the flow began, shared by every mirror the
	// daemon runs for it, which records the control plane's first listing
	// in it; nil: the mirror's first topic set is the flow's beginning.
	Beginning *Beginning
	// Counters are the flow's counts on this node, shared by every mirror
	// the daemon runs for it; nil: the mirror's own.
	Counters *Counters
}

// Validate says what is wrong with a Config the daemon built: every
// default is resolved before a mirror is made (daemon.mirrorConfig), and a
// zero here is a bug upstream, not a value to repair.
func (c Config) Validate() error {
	var bad []string
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"Flow", c.Flow != ""},
		{"Source", c.Source != ""},
		{"Group", c.Group != ""},
		{"IndexTopic", c.IndexTopic != ""},
		{"FlushInterval", c.FlushInterval > 0},
		{"ShutdownTimeout", c.ShutdownTimeout > 0},
		{"MaxBuffered", c.MaxBuffered > 0},
		{"LinkBuffer", c.LinkBuffer >= 0},
		{"IndexMaxSegments", c.IndexMaxSegments > 0},
		{"FetchMaxBytes", c.FetchMaxBytes > 0},
		{"PartitionFetchSize", c.PartitionFetchSize >= 0},
		{"AutoOffsetReset", c.AutoOffsetReset == "earliest" || c.AutoOffsetReset == "latest" || c.AutoOffsetReset == "none"},
	} {
		if !f.ok {
			bad = append(bad, f.name)
		}
	}
	if p := c.Preserve; p != nil && (!c.FastPath || !c.ReadCommitted || !c.Idempotent || c.Transactions != nil || p.Timeout <= 0) {
		bad = append(bad, "Preserve (needs FastPath, ReadCommitted, Idempotent, no Transactions and a Timeout)")
	}
	if len(bad) > 0 {
		return fmt.Errorf("mirror config of flow %q: %s unset or out of range (resolve defaults before mirror.New)", c.Flow, strings.Join(bad, ", "))
	}
	return nil
}

// Counters are what a flow's data plane counted on this node: records and
// bytes copied, Kafka errors met, bad internal records skipped,
// transactions committed and aborted. The daemon gives every mirror of a
// flow the same, so that they go on across the mirrors a node runs (one
// per rebalance): the metrics they feed are counters.
type Counters struct {
	totals     flow.Totals
	badRecords atomic.Int64     // undecodable records skipped in internal topics
	errors     flow.ErrorCounts // Kafka errors met, by side and class (Status)
	// Exactly-once mode: transactions committed, and attempts aborted.
	txnCommits, txnAborts atomic.Int64
}

// Share is the part of a flow one node copies (flow.Share).
type Share = flow.Share

// Provenance is how a flow takes part in active-active replication
// (flow.Provenance).
type Provenance = flow.Provenance

// ReturnedFilter recognises the producer ids of the reverse flow
// (flow.ReturnedFilter).
type ReturnedFilter = flow.ReturnedFilter

// Transactions configures exactly-once mode (fastpath.Transactions).
type Transactions = fastpath.Transactions

// NewClient makes a client with the settings of the one it stands in for
// (fastpath.NewClient).
type NewClient = fastpath.NewClient

// LongLinkBuffer is what the fast path may hold beyond buffer.memory's
// default when the source is a long link away and buffer.memory is unset;
// the soft memory limit counts it too (fastpath.LongLinkBuffer).
const LongLinkBuffer = fastpath.LongLinkBuffer

// TransactionOpts are the target client's options in exactly-once mode
// (fastpath.TransactionOpts).
func TransactionOpts() []kgo.Opt { return fastpath.TransactionOpts() }

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

// Mirror replicates the topics it is given from src to dst.
type Mirror struct {
	cfg    Config
	src    *kgo.Client // consumer, direct partition assignment
	dst    *kgo.Client // idempotent producer, manual partitioner
	cl     Clients
	deps   Deps // Provenance, Share, Latency: the daemon's, shared by its mirrors
	srcAdm *kadm.Client
	dstAdm *kadm.Client
	log    *slog.Logger

	fwd       *fastpath.Forwarder // the fast path of the attempt running; nil when off
	gaps      *preserve.Gaps      // the fillers of the attempt running; nil when no topic keeps offsets
	recordPID atomic.Int64        // the record path's registered producer id (Provenance)
	// Renewed record-path producer ids waiting for registerRenewed.
	renewMu   sync.Mutex
	renewed   []int64
	renewWake chan struct{}
	throttle  *flow.Throttle      // nil when unlimited
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

// New returns a Mirror; it starts nothing. A Config that does not
// Validate is refused.
func New(cfg Config, deps Deps) (*Mirror, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cl, log := deps.Clients, deps.Log
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
		throttle:  flow.NewThrottle(cfg.ThrottleBytesPerSecond),
		shares:    newRecordShares(cfg.MaxBuffered),
		deps:      deps,
		begin:     deps.Beginning,
		Counters:  deps.Counters,
	}
	if m.Counters == nil {
		m.Counters = &Counters{}
	}
	if m.begin == nil {
		m.begin = &Beginning{}
	} else {
		m.sharedBeginning = true
	}
	return m, nil
}

// newForwarder makes the fast path of one attempt, nil when it is off.
func (m *Mirror) newForwarder() *fastpath.Forwarder {
	if !m.cfg.FastPath {
		return nil
	}
	deps := fastpath.Deps{
		Source: m.src, Target: m.dst, NewTarget: m.cl.NewTarget, NewSource: m.cl.NewSource, Throttle: m.throttle, Totals: &m.totals,
		ToRecordPath: m.leaveFastPath, Log: m.log.With("path", "fast"), Errors: &m.errors,
		Provenance: m.deps.Provenance, Share: m.deps.Share, CommitTxn: m.commitTxn,
	}
	if m.gaps != nil {
		deps.Gaps = m.gaps
	}
	return fastpath.New(m.forwardConfig(), deps)
}

// forwardConfig is the fast path's configuration from the flow's.
func (m *Mirror) forwardConfig() fastpath.Config {
	codec := batch.Codec(-1)
	if m.cfg.Compression != "" {
		codec = batch.CodecNamed(m.cfg.Compression)
	}
	return fastpath.Config{
		Codec:              codec,
		Level:              m.cfg.CompressionLevel,
		ReadCommitted:      m.cfg.ReadCommitted,
		Idempotent:         m.cfg.Idempotent,
		Acks:               m.cfg.Acks,
		PartitionFetchSize: m.cfg.PartitionFetchSize,
		FetchMaxBytes:      m.cfg.FetchMaxBytes,
		MaxBuffered:        m.cfg.MaxBuffered,
		LinkBuffer:         m.cfg.LinkBuffer,
		Txn:                m.cfg.Transactions,
		IndexTopic:         m.cfg.IndexTopic,
	}
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
// the user's settings. bufferBytes is buffer.memory, resolved (Budget).
func TargetOpts(bufferBytes int64) []kgo.Opt {
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
