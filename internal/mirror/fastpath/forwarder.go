package fastpath

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
	"strait/internal/mirror/flow"
)

// LongLinkBuffer is what the fast path may hold beyond buffer.memory's
// default when the source is a long link away and buffer.memory is unset
// (budget); the soft memory limit counts it too.
const LongLinkBuffer = 32 << 20

const (
	fetchMaxWait        = 500 * time.Millisecond
	fetchResponseBytes  = 16 << 20 // cap of one fetch response: bounds memory churn
	longLinkRTT         = 50 * time.Millisecond
	RetryBackoff        = 250 * time.Millisecond
	metadataMinInterval = 500 * time.Millisecond
	sharesMaxAge        = 20 * time.Millisecond // shares walk every partition: not at every event
	PIDBackoffMin       = 100 * time.Millisecond
	PIDBackoffMax       = 10 * time.Second
)

// Config tunes the fast path.
type Config struct {
	Codec              batch.Codec // required codec of forwarded batches; -1 = any
	Level              int         // Codec's compression level, Kafka's number (batch.Compression)
	ReadCommitted      bool
	Idempotent         bool
	Acks               int16 // -1 (all) unless the producer settings say otherwise
	PartitionFetchSize int32 // max.partition.fetch.bytes: a partition's first ask
	MaxAsk             int32 // what a partition's ask may grow to (grow)
	FetchMaxBytes      int32 // fetch.max.bytes
	MaxBuffered        int64 // fetched and not yet acknowledged, all partitions
	// LinkBuffer is what a long link adds to MaxBuffered (budget):
	// LongLinkBuffer when buffer.memory is unset, else 0.
	LinkBuffer int64
	// Txn turns on exactly-once mode (forward_txn.go); nil copies at least
	// once. IndexTopic is the offset index topic, which joins every
	// transaction.
	Txn        *Transactions
	IndexTopic string
}

// Part is the forwarder's state of one partition.
type Part struct {
	p     Ledger
	state fastState // what it may do (lifecycle.go)
	// leaveReason is why it is leaving for the record path.
	leaveReason string
	next        int64 // next source offset to fetch
	queue       []*qbatch
	queueBytes  int       // queued and sent, until acknowledged (qbatch.held)
	sent        []*qbatch // in flight, in sequence order (produce.go)
	sentOn      laneKey   // the target broker and connection of sent
	conn        int       // its produce connection (lanes) when it has a backlog
	sendIDs     uint64    // numbers each send, to match its answer
	seq         int32     // next producer sequence
	notBefore   time.Time
	// confirmed: confirmedBy acknowledged the latest answered batch, sent
	// under confirmedPid, at confirmedAt; only then, and for pipelineIdle,
	// may several batches be in flight (sendLimit).
	confirmed    bool
	confirmedBy  int32
	confirmedPid int64
	confirmedAt  time.Time
	// writtenBehind is a batch the target acknowledged behind a head of
	// open fate, until the head is acknowledged (failedSend).
	writtenBehind *qbatch
	oooRetried    bool  // an out-of-sequence head batch was sent once more
	fetching      bool  // a fetch of this partition is outstanding
	ask           int32 // what one fetch asks for it; 0 until set (askOf)
	resolving     bool  // listing the log start after an out-of-range
	crcRetried    bool  // the batch at next had a bad CRC once: one refetch
	// fetchedEpoch is the leader epoch of the last batch fetched, -1
	// before any: the fetch's LastFetchedEpoch, so that the source leader
	// says where its log diverged from what was fetched (KIP-320).
	fetchedEpoch int32
	active       bool // its last fetch returned data (see startFetches)
	stuck        bool // its target refused or did not answer its last batch (see detach)
	// keep: the partition keeps the source's offsets (preserve.go);
	// written is then where its remote partition ends, as far as it
	// acknowledged or filled, and filling says a Fill of it is out.
	keep, refuseGaps, filling bool
	written                   int64
	fillCutShort              bool          // a Fill of its gap was cut short: see Gap.Retry
	fillBackoff               time.Duration // before its next Fill, after failed ones
	// resync: its head batch, of open fate, would go again under another
	// producer id, where the broker cannot tell it is a duplicate; where
	// the remote partition ends is read first (startResyncs).
	resync, resyncing bool
}

// behind reports whether the partition's last fetch returned data and left
// more on the source: its next fetch will likely fill its room.
func (fp *Part) behind() bool { return fp.active && fp.next < fp.p.End() }

// NewPart returns the fast path's state of p, fetching from next.
func NewPart(p Ledger, next int64) *Part {
	return &Part{p: p, next: next, fetchedEpoch: -1}
}

// qbatch is a fetched batch waiting to be produced, or a skip: offsets that
// hold nothing to copy (markers, aborted data) and only move progress.
type qbatch struct {
	data []byte
	h    batch.Header
	skip bool
	seq  int32 // -1 until sent
	pid  int64 // producer id the sequence belongs to
	// runs are the source offsets of its records when it was rebuilt or
	// merged; nil for a batch forwarded as fetched, whose records are at
	// h's offsets. next is the source offset after it (enqueue).
	runs []batch.Run
	next int64

	sendID uint64 // of its latest send
	result sendResult
}

type fetchDone struct {
	broker  int32
	conn    int           // its fetch connection (fetchConns)
	session *fetchSession // the connection's session, nil in tests
	shaped  sessionFetch  // what the session made of the fetch
	parts   map[tp]*Part
	at      map[tp]int64 // the fetch offset asked for each partition
	// reserved is what the fetch may add to each target broker's share.
	reserved map[int32]int64
	resp     *kmsg.FetchResponse
	rebuilt  map[*kmsg.FetchResponseTopicPartition]rebuiltBatches // recode.go
	err      error
}

type metaDone struct {
	source bool
	meta   map[string]topicMeta
	rtt    time.Duration // of a small request to the source (roundTrip); 0 when it failed
	err    error
}

// truncDone is the log start listed after an out-of-range fetch at next.
type truncDone struct {
	fp       *Part
	next     int64
	logStart int64
	listErr  error
	cause    error
}

type tp struct {
	topic     string
	partition int32
}

// Deps is what the forwarder uses of its flow.
type Deps struct {
	Source, Target *kgo.Client
	NewTarget      NewClient      // the lanes' clients (lanes.go)
	NewSource      NewClient      // the fetch clients (fetchconns.go)
	Throttle       *flow.Throttle // nil when unlimited
	Totals         *flow.Totals   // the flow's copied records and bytes
	// ToRecordPath continues a partition on the record path at offset.
	ToRecordPath func(p Ledger, offset int64, reason string)
	Log          *slog.Logger
	Errors       *flow.ErrorCounts // nil counts nothing
	Provenance   flow.Provenance
	Share        flow.Share
	// CommitTxn ends a transaction in exactly-once mode.
	CommitTxn CommitTxn
	// Gaps fills the gaps of partitions that keep the source's offsets
	// (preserve.go); nil when none does.
	Gaps GapFiller
}

type Forwarder struct {
	cfg  Config
	deps Deps
	src  *kgo.Client
	dst  *kgo.Client
	log  *slog.Logger

	inbox  chan []*Part
	events chan any

	parts        map[tp]*Part
	waiting      map[tp]*Part // to install once the entry of the same key in parts is answered (install)
	srcMeta      map[string]topicMeta
	dstMeta      map[string]topicMeta
	srcNames     map[[16]byte]string // topic names by ID, for responses that carry IDs only
	dstNames     map[[16]byte]string
	srcStale     bool
	dstStale     bool
	metaInflight int
	lastMeta     time.Time
	fetchConns   *fetchConns      // the fetch connections and which are busy, by source broker
	fetchRound   uint64           // rotates the order of partitions in fetches
	fetchCands   []fetchCandidate // fetchRequest's scratch, kept between calls: 10,000 partitions are 480 KB a fetch
	producing    map[laneKey]int  // produce requests outstanding by lane
	conns        int              // connection index for the next partition added
	lanes        *lanes
	buffered     int64
	pid          int64
	epoch        int16
	pidWanted    bool
	pidInflight  bool
	pidBackoff   time.Duration // after a failed InitProducerID; 0 after a success
	pidNotBefore time.Time
	running      int // network goroutines outstanding
	stopFetching bool
	share        int64           // per target broker, as of sharesAt (see shares)
	used         map[int32]int64 // queued bytes by target broker, as of sharesAt
	sharesAt     time.Time
	reserved     map[int32]int64 // by target broker: what fetches in flight may add
	linkRTT      time.Duration   // the shortest round trip of a small request to the source; 0 before one
	// txn is the open transaction in exactly-once mode, nil otherwise;
	// failed ends the attempt (abortAttempt).
	txn    *txnState
	failed error
}

func New(cfg Config, deps Deps) *Forwarder {
	if cfg.MaxBuffered <= 0 || cfg.FetchMaxBytes <= 0 {
		// The mirror resolves and validates both (mirror.Config.Validate).
		panic(fmt.Sprintf("fastpath.New: MaxBuffered %d and FetchMaxBytes %d must be positive", cfg.MaxBuffered, cfg.FetchMaxBytes))
	}
	if cfg.PartitionFetchSize <= 0 {
		// Unset: start at Kafka's default and let the ask follow the link
		// (grow), up to a quarter of buffer.memory and one response.
		cfg.PartitionFetchSize = 1 << 20
		cfg.MaxAsk = int32(min(cfg.MaxBuffered/4, fetchResponseBytes))
	}
	// A max.partition.fetch.bytes the user set is every ask.
	cfg.MaxAsk = max(cfg.MaxAsk, cfg.PartitionFetchSize)
	f := &Forwarder{
		cfg: cfg, deps: deps, src: deps.Source, dst: deps.Target, log: deps.Log,
		inbox:      make(chan []*Part, 16),
		events:     make(chan any, 64),
		parts:      map[tp]*Part{},
		waiting:    map[tp]*Part{},
		srcMeta:    map[string]topicMeta{},
		dstMeta:    map[string]topicMeta{},
		fetchConns: &fetchConns{brokers: map[int32][]fetchConn{}},
		reserved:   map[int32]int64{},
		producing:  map[laneKey]int{},
		pid:        -1,
		epoch:      -1,
		pidWanted:  cfg.Idempotent,
	}
	if cfg.Txn != nil {
		f.txn = newTxnState(*cfg.Txn, cfg.IndexTopic)
	}
	return f
}

// add hands partitions to the fast path; they start fetching at fp.next.
func (f *Forwarder) Add(ctx context.Context, parts []*Part) {
	select {
	case f.inbox <- parts:
	case <-ctx.Done():
	}
}

// run forwards until ctx is done, then stops fetching and waits for the
// produce requests in flight (bounded by produceCtx, which the mirror
// cancels at the shutdown deadline); in exactly-once mode it then commits
// the last transaction. It returns an error only when exactly-once mode
// aborted the attempt (abortAttempt).
func (f *Forwarder) Run(ctx, produceCtx context.Context) error {
	f.lanes = newLanes(f.dst, f.deps.NewTarget, f.log)
	defer f.lanes.close()
	f.fetchConns = newFetchConns(f.src, f.deps.NewSource, f.log)
	defer f.fetchConns.close()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	done := ctx.Done()
	for {
		if f.stopFetching && f.running == 0 && (f.txn == nil || f.txn.phase == txnFinished || f.txn.phase == txnAborted) {
			return f.failed
		}
		f.dispatch(ctx, produceCtx)
		select {
		case <-done:
			done = nil
			f.stopFetching = true
		case parts := <-f.inbox:
			f.install(parts)
		case ev := <-f.events:
			f.running--
			f.handle(ctx, ev)
		case <-tick.C:
		}
	}
}

// dispatch starts whatever network work can start now.
func (f *Forwarder) dispatch(ctx, produceCtx context.Context) {
	now := time.Now()
	if (f.srcStale || f.dstStale) && f.metaInflight == 0 && now.Sub(f.lastMeta) >= metadataMinInterval && !f.stopFetching {
		f.refreshMeta(ctx)
	}
	if f.pidWanted && !f.pidInflight && !f.stopFetching && !now.Before(f.pidNotBefore) {
		f.initProducerID(produceCtx)
	}
	f.finishLeaving()
	f.dropRemoved()
	if !f.stopFetching {
		f.startFetches(ctx, now)
	}
	if f.txn != nil {
		f.stepTxn(produceCtx, now)
	}
	// Without the lease (Share.LeaseUntil) nothing is sent: the node may have
	// been fenced out of the flow's group while it stood still. A stopping
	// transaction still sends again what it sent before, so it can commit.
	sending := !f.stopFetching || f.txn != nil && (f.txn.phase == txnEnding || f.txn.phase == txnCommitting)
	if sending && (!f.pidWanted || !f.cfg.Idempotent) && f.deps.Share.Leased() {
		f.startResyncs(produceCtx, now)
		f.startFills(produceCtx, now)
		f.startProduces(produceCtx, now)
	}
}

func (f *Forwarder) spawn(fn func() any) {
	f.running++
	go func() { f.events <- fn() }()
}

func (f *Forwarder) handle(ctx context.Context, ev any) {
	switch ev := ev.(type) {
	case metaDone:
		f.metaInflight--
		if ev.err != nil {
			if ctx.Err() == nil {
				f.log.Warn("fast path: loading metadata failed; retrying", "source", ev.source, "err", ev.err)
			}
			f.srcStale = f.srcStale || ev.source
			f.dstStale = f.dstStale || !ev.source
			return
		}
		target, names := f.dstMeta, &f.dstNames
		if ev.source {
			target, names = f.srcMeta, &f.srcNames
			f.checkIncarnations(ev.meta)
			if ev.rtt > 0 {
				f.sourceAnswered(ev.rtt)
			}
		}
		for name, tm := range ev.meta {
			target[name] = tm
		}
		*names = namesByID(target)
	case pidDone:
		f.pidInflight = false
		if ev.err != nil {
			// Capped exponential backoff with jitter: a target that cannot
			// hand out producer ids is not asked 20 times a second.
			f.pidBackoff = min(max(2*f.pidBackoff, PIDBackoffMin), PIDBackoffMax)
			wait := f.pidBackoff/2 + rand.N(f.pidBackoff/2+1)
			f.pidNotBefore = time.Now().Add(wait)
			if !errors.Is(ev.err, context.Canceled) {
				f.log.Warn("fast path: getting a producer id failed; retrying", "err", ev.err, "retry_in", wait)
			}
			return
		}
		f.pidBackoff = 0
		f.UsePID(ev.pid, ev.epoch)
		for _, fp := range f.parts {
			fp.seq = 0
			for i := range fp.queue {
				fp.queue[i].seq = -1
			}
		}
	case fetchDone:
		f.fetchConns.release(ev.broker, ev.conn)
		if ev.session != nil {
			if err := ev.session.answered(ev.shaped, ev.resp, ev.err); err != nil {
				// The broker lost the session or refused its epoch: the
				// response has no partitions, and the next fetch, a full
				// one, asks for them again at once.
				f.log.Debug("fast path: fetch session reset", "broker", ev.broker, "err", err)
			}
		}
		f.handleFetch(ctx, ev)
	case produceDone:
		f.producing[ev.lane]--
		f.handleProduce(ev)
	case truncDone:
		ev.fp.resolving = false
		f.fail(ev.fp, flow.TruncationError(ev.fp.p.Source(), ev.fp.p.Partition(), ev.next, ev.logStart, ev.listErr, ev.cause))
	case addDone, commitDone:
		f.handleTxn(ev)
	case fillDone:
		f.handleFill(ev)
	case resyncDone:
		f.handleResync(ev)
	}
}
