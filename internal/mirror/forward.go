package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
)

// The fast path. The forwarder fetches raw record batches from the source
// leaders and produces them, unchanged but for the producer fields and the
// CRC, to the same partitions on the target: no per-record work. A batch in
// another codec than the target's compression.type is recompressed whole
// (recode.go). A partition keeps up to five batches in flight (produce.go);
// the produce response's base offset gives the exact target offsets of
// every record (the target keeps the batch's offset deltas).
//
// A batch a broker would not take as it is, one with offset holes left by
// compaction, one stamped LogAppendTime, or the first one when the
// partition resumes in its middle, is rebuilt (recode.go): its records
// renumbered and stamped CreateTime, still without record objects. A
// partition leaves the fast path for the record path, once and for good,
// only when one of its batches cannot be forwarded or rebuilt: a message
// format older than v2, a target that rejects the batch (too large,
// invalid), or records that do not decode. The record path then resumes at
// the first source offset not yet acknowledged.
//
// Ownership: one goroutine (run) owns all forwarder state. Fetches, produce
// requests and every other network call run in their own goroutines and
// report back through f.events, so the loop never blocks on the network; at
// most fetchConnsPerBroker fetches per source broker, each on its own
// connection with its own fetch session (fetchconns.go, session.go), one
// per partition, and maxProduceInflight
// produce requests per lane are outstanding. Recompression runs in the
// fetch goroutines, off the loop, so fetches in flight recompress in
// parallel.
//
// Long links: a partition fetches again while up to one ask of it is still
// queued, so its next response crosses the link while the last is written,
// and its ask doubles while its responses come back full with more behind
// (fetchRoom, grow): a partition moves up to two asks per round trip (at
// most cfg.MaxAsk, which a max.partition.fetch.bytes the user set is), and
// the ask follows the bandwidth-delay product up to cfg.MaxAsk. Partitions
// behind spread over the fetch connections, at most behindPerFetch of asks
// in one fetch, so that a fetch on every connection fits in the budget at
// once (fetchRequest). The budget is buffer.memory, and with buffer.memory
// unset, LongLinkBuffer more when a small request to the source takes a
// long link's round trip (budget).
//
// A fetch response is used for a partition only if it was fetched at the
// partition's next offset (as Java's consumer does): after a leader change
// two fetches of one partition can overlap, and a repeated part must not
// reach the transaction filter out of order. Every batch's CRC is checked
// before it is forwarded, since the rewrite computes a new one.
//
// Memory: a queued batch points into its fetch response, which it frees
// once it is acknowledged; only a partition whose target refused or did not
// answer its last batch copies its batches out (detach). Each target broker
// gets an equal share of buffer.memory, so a dead or leaderless broker
// stalls only its own partitions.

// LongLinkBuffer is what the fast path may hold beyond buffer.memory's
// default when the source is a long link away and buffer.memory is unset
// (budget); the soft memory limit counts it too.
const LongLinkBuffer = 32 << 20

const (
	fetchMaxWait        = 500 * time.Millisecond
	fetchResponseBytes  = 16 << 20 // cap of one fetch response: bounds memory churn
	longLinkRTT         = 50 * time.Millisecond
	retryBackoff        = 250 * time.Millisecond
	metadataMinInterval = 500 * time.Millisecond
	sharesMaxAge        = 20 * time.Millisecond // shares walk every partition: not at every event
	pidBackoffMin       = 100 * time.Millisecond
	pidBackoffMax       = 10 * time.Second
)

// forwardConfig tunes the fast path.
type forwardConfig struct {
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

// fastPart is the forwarder's state of one partition.
type fastPart struct {
	p     *partition
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
}

// behind reports whether the partition's last fetch returned data and left
// more on the source: its next fetch will likely fill its room.
func (fp *fastPart) behind() bool { return fp.active && fp.next < fp.p.end.Load() }

// newFastPart returns the fast path's state of p, fetching from next.
func newFastPart(p *partition, next int64) *fastPart {
	return &fastPart{p: p, next: next, fetchedEpoch: -1}
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

type fetchDone struct {
	broker  int32
	conn    int           // its fetch connection (fetchConns)
	session *fetchSession // the connection's session, nil in tests
	shaped  sessionFetch  // what the session made of the fetch
	parts   map[tp]*fastPart
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

// truncDone is the log start listed after an out-of-range fetch at next.
type truncDone struct {
	fp       *fastPart
	next     int64
	logStart int64
	listErr  error
	cause    error
}

type tp struct {
	topic     string
	partition int32
}

// forwardDeps is what the forwarder uses of its flow.
type forwardDeps struct {
	Source, Target *kgo.Client
	NewTarget      NewClient // the lanes' clients (lanes.go)
	NewSource      NewClient // the fetch clients (fetchconns.go)
	Throttle       *throttle // nil when unlimited
	Totals         *totals   // the flow's copied records and bytes
	// ToRecordPath continues a partition on the record path at offset.
	ToRecordPath func(p *partition, offset int64, reason string)
	Log          *slog.Logger
	Errors       *errorCounts // nil counts nothing
	Provenance   Provenance
	Share        Share
	// CommitTxn ends a transaction in exactly-once mode.
	CommitTxn commitTxn
}

type forwarder struct {
	cfg  forwardConfig
	deps forwardDeps
	src  *kgo.Client
	dst  *kgo.Client
	log  *slog.Logger

	inbox  chan []*fastPart
	events chan any

	parts        map[tp]*fastPart
	waiting      map[tp]*fastPart // to install once the entry of the same key in parts is answered (install)
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

func newForwarder(cfg forwardConfig, deps forwardDeps) *forwarder {
	if cfg.MaxBuffered <= 0 {
		cfg.MaxBuffered = 32 << 20
		cfg.LinkBuffer = LongLinkBuffer
	}
	if cfg.PartitionFetchSize <= 0 {
		// Unset: start at Kafka's default and let the ask follow the link
		// (grow), up to a quarter of buffer.memory and one response.
		cfg.PartitionFetchSize = 1 << 20
		cfg.MaxAsk = int32(min(cfg.MaxBuffered/4, fetchResponseBytes))
	}
	// A max.partition.fetch.bytes the user set is every ask.
	cfg.MaxAsk = max(cfg.MaxAsk, cfg.PartitionFetchSize)
	if cfg.FetchMaxBytes <= 0 {
		cfg.FetchMaxBytes = 50 << 20
	}
	f := &forwarder{
		cfg: cfg, deps: deps, src: deps.Source, dst: deps.Target, log: deps.Log,
		inbox:      make(chan []*fastPart, 16),
		events:     make(chan any, 64),
		parts:      map[tp]*fastPart{},
		waiting:    map[tp]*fastPart{},
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
func (f *forwarder) add(ctx context.Context, parts []*fastPart) {
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
func (f *forwarder) run(ctx, produceCtx context.Context) error {
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
func (f *forwarder) dispatch(ctx, produceCtx context.Context) {
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
	if sending && (!f.pidWanted || !f.cfg.Idempotent) && f.deps.Share.leased() {
		f.startProduces(produceCtx, now)
	}
}

func (f *forwarder) spawn(fn func() any) {
	f.running++
	go func() { f.events <- fn() }()
}

func (f *forwarder) refreshMeta(ctx context.Context) {
	f.lastMeta = time.Now()
	var srcTopics, dstTopics []string
	seenS, seenD := map[string]bool{}, map[string]bool{}
	for _, fp := range f.parts {
		if s := fp.p.topic.Source; !seenS[s] {
			seenS[s] = true
			srcTopics = append(srcTopics, s)
		}
		if r := fp.p.topic.Remote; !seenD[r] {
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

func (f *forwarder) initProducerID(ctx context.Context) {
	f.pidInflight = true
	f.spawn(func() any {
		pid, epoch, err := newProducerID(ctx, f.dst, f.cfg.Txn, f.deps.Provenance.Register)
		return pidDone{pid: pid, epoch: epoch, err: err}
	})
}

// newProducerID asks the target for a producer id, within 30 s: for the
// transactional id in exactly-once mode (txn), which fences every earlier
// producer with that id and aborts its open transaction. In an
// active-active pair it registers the id (register) before any batch
// carries it: the reverse flow must know it when it reads the batch.
func newProducerID(ctx context.Context, cl *kgo.Client, txn *Transactions, register func(context.Context, int64) error) (int64, int16, error) {
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
func (f *forwarder) usePID(pid int64, epoch int16) {
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

// startFetches issues a fetch to each source broker with a fetch
// connection free, of its partitions that are in no fetch, have room in
// their own buffers and whose target broker's share of buffer.memory has
// some left. Each partition asks for all its room; the fetch as a whole
// asks for at most what those shares have left, and reserves it until the
// response is handled (fetchRequest). A broker fills a response partition
// by partition in request order, so partitions whose last fetch returned a
// whole batch go first and idle ones follow, each group in an order that
// rotates from fetch to fetch. (Splitting a share between idle partitions
// instead gave each of 5,000 partitions less than one batch: the broker
// then returned cut-off batches, and the copy crawled.) That order holds
// for full fetches; in a fetch session (session.go) the broker keeps its
// own, moving the partitions that returned data to the end.
func (f *forwarder) startFetches(ctx context.Context, now time.Time) {
	if now.Sub(f.sharesAt) >= sharesMaxAge {
		f.share, f.used = f.shares()
		f.sharesAt = now
	}
	type brokerParts struct{ busy, idle []tp }
	bySource := map[int32]*brokerParts{}
	for key, fp := range f.parts {
		if _, _, ok := f.fetchable(fp, now); !ok {
			continue
		}
		src, _ := leaderOf(f.srcMeta, key.topic, key.partition)
		if src < 0 {
			f.srcStale = true
			continue
		}
		if !f.fetchConns.idle(src) {
			continue
		}
		bp := bySource[src]
		if bp == nil {
			bp = &brokerParts{}
			bySource[src] = bp
		}
		if fp.active {
			bp.busy = append(bp.busy, key)
		} else {
			bp.idle = append(bp.idle, key)
		}
	}
	f.fetchRound++
	for src, bp := range bySource {
		keys := append(rotated(bp.busy, f.fetchRound), rotated(bp.idle, f.fetchRound)...)
		// A fetch leaves out the partitions behind that its response
		// cannot carry too (fetchRequest): they go in the next fetch, on
		// another connection, now.
		for len(keys) > 0 && f.fetchConns.idle(src) && f.fetch(ctx, src, keys, now) {
			keys = slices.DeleteFunc(keys, func(key tp) bool { return f.parts[key].fetching })
		}
	}
}

// rotated sorts keys (map order is random) and rotates them by round.
func rotated(keys []tp, round uint64) []tp {
	slices.SortFunc(keys, compareTP)
	if n := len(keys); n > 1 {
		r := int(round % uint64(n))
		keys = append(keys[r:], keys[:r]...)
	}
	return keys
}

func compareTP(a, b tp) int {
	if c := strings.Compare(a.topic, b.topic); c != 0 {
		return c
	}
	return int(a.partition) - int(b.partition)
}

// fetch sends one fetch of keys, in this order, to source broker src, on
// a free fetch connection, and reports whether it sent one. While another
// fetch to src is in flight, it sends one only if it may ask for at least
// concurrentFetchMin: a second fetch pays off when one response is too
// small for the link, and fetches of a partition or two each, sent as
// their queues drained, would take every connection and hold
// buffer.memory in reservations for crumbs.
func (f *forwarder) fetch(ctx context.Context, src int32, keys []tp, now time.Time) (sent bool) {
	slots := fetchSlots{idle: f.fetchConns.idleCount(src), inFlight: f.fetchConns.inFlight(src)}
	req, parts, at, rooms := f.fetchRequest(keys, now, slots)
	if len(parts) == 0 {
		return false
	}
	conn := f.fetchConns.take(src)
	if conn < 0 {
		// startFetches sends one fetch per broker with a connection idle,
		// so this is a bug; the partitions are fetched in a later round.
		f.log.Error("fast path: no idle fetch connection for a fetch (a bug in Strait)", "broker", src)
		for _, fp := range parts {
			fp.fetching = false
		}
		return false
	}
	reserved := rooms
	for dst, n := range rooms {
		f.reserved[dst] += n
	}
	cl := f.fetchConns.client(conn)
	idNames := make(map[[16]byte]string, len(req.Topics))
	for _, t := range req.Topics {
		idNames[t.TopicID] = t.Topic
	}
	session := f.fetchConns.session(src, conn)
	shaped := session.shape(req) // after idNames: the request now lists only what changed
	f.spawn(func() any {
		resp, err := cl.Broker(int(src)).Request(ctx, req)
		fd := fetchDone{broker: src, conn: conn, session: session, shaped: shaped, parts: parts, at: at, reserved: reserved, err: err}
		if err == nil {
			fd.resp = resp.(*kmsg.FetchResponse)
			if n := responseBytes(fd.resp); n > 0 && f.deps.Throttle != nil {
				if werr := f.deps.Throttle.wait(ctx, n); werr != nil {
					fd.err = werr
				}
			}
			if ret := f.deps.Provenance.Returned; ret != nil && fd.err == nil {
				// Off the loop: a producer id seen for the first time
				// is looked up in the source's registry.
				if rerr := ret.Resolve(ctx, producerIDs(fd.resp)); rerr != nil {
					fd.err = rerr
				}
			}
			if fd.err == nil {
				fd.rebuilt = prepareResponse(fd.resp, idNames, at, f.cfg.compression()) // recode.go
			}
		}
		return fd
	})
	return true
}

// concurrentFetchMin is the least a fetch must be able to ask for while
// another to the same broker is in flight: half of what the partitions
// behind in one fetch may ask for.
func (f *forwarder) concurrentFetchMin() int64 { return f.behindPerFetch() / 2 }

// behindPerFetch is what the partitions behind in one fetch may ask for
// together: a share of the budget such that a fetch on every connection to
// a broker fits in it at once, at most one response.
func (f *forwarder) behindPerFetch() int64 {
	return max(min(f.budget()/fetchConnsPerBroker, fetchResponseBytes), 1)
}

// fetchSlots is the state of a source broker's fetch connections that a
// fetch to it is planned for: how many are idle, this fetch's included, and
// whether a fetch is in flight on another.
type fetchSlots struct {
	idle     int
	inFlight bool
}

// behindLimit is what the partitions behind in one fetch may ask for when
// they ask for total together, the largest of them for largest: total
// split evenly over as many fetches as there are idle connections, but
// into parts of at least concurrentFetchMin (a smaller one would not go out
// beside the first), each at least the largest ask and at most
// behindPerFetch. Cut at behindPerFetch alone, eight partitions asking
// 4 MiB each over a long link went out in two fetches of four and left two
// of the four connections idle.
func (f *forwarder) behindLimit(total, largest int64, slots fetchSlots) int64 {
	fetches := max(min(int64(slots.idle), total/max(f.concurrentFetchMin(), 1)), 1)
	even := (total + fetches - 1) / fetches
	return min(f.behindPerFetch(), max(even, largest))
}

// budget is what the fast path may hold fetched and not yet acknowledged,
// reservations of fetches in flight included: buffer.memory, and
// cfg.LinkBuffer more when the source is a long link away (a round trip of
// at least longLinkRTT). Over a long link the fetches in flight hold their
// reservations for a round trip before a byte arrives, so buffer.memory
// alone bounds the copy near budget / round trip; a near source keeps
// buffer.memory, and so the memory of a near copy.
func (f *forwarder) budget() int64 {
	if f.cfg.LinkBuffer > 0 && f.linkRTT >= longLinkRTT {
		return f.cfg.MaxBuffered + f.cfg.LinkBuffer
	}
	return f.cfg.MaxBuffered
}

// sourceAnswered records the round trip of a small request to the source
// (linkRTT keeps the shortest: none is shorter than the link), and logs a
// change of the budget. A fetch's own time is no measure of the link: it
// includes its transfer and, on a busy machine, waits for CPU (16 MiB
// fetches on loopback took over 50 ms while Strait recompressed).
func (f *forwarder) sourceAnswered(d time.Duration) {
	was := f.budget()
	if f.linkRTT == 0 || d < f.linkRTT {
		f.linkRTT = d
	}
	if now := f.budget(); now != was {
		f.log.Info("fast path: the source's round trip changed what it may buffer", "round_trip", f.linkRTT.Round(time.Millisecond), "long_link", now > was, "buffer_bytes", now)
	}
}

// fetchRequest builds the fetch of those of keys that may fetch at now,
// and returns it with those partitions, their fetch offsets, and what the
// fetch may add by target broker; nothing when it could ask for less than
// concurrentFetchMin while another fetch to the broker is in flight (see
// fetch). Each listed partition asks for all its room (a partition
// asking for less than a batch gets a cut-off batch). Every such partition
// not known to be behind is listed (one left out would wait a fetch round
// that may be a long poll of partitions without data: at 512 partitions
// the last records took minutes), and those behind while their rooms add
// up to at most behindLimit: the rest go in the next fetch, on
// another connection, rather than wait a round trip in a fetch that
// reserves a share of buffer.memory the other connections then lack (over
// a 150 ms link, 16 MiB responses with two in flight moved 88-112 MB/s,
// 8 MiB ones with four 122-152). The fetch's MaxBytes caps the response at
// what the partitions' target brokers' shares have left, and a target
// broker's reservation is at most that cap.
func (f *forwarder) fetchRequest(keys []tp, now time.Time, slots fetchSlots) (*kmsg.FetchRequest, map[tp]*fastPart, map[tp]int64, map[int32]int64) {
	fetchable := f.fetchCands[:0]
	var behindTotal, behindLargest int64
	for _, key := range keys {
		fp := f.parts[key]
		dst, room, ok := f.fetchable(fp, now)
		if !ok {
			continue
		}
		c := fetchCandidate{key, fp, dst, room, fp.behind()}
		if c.behind {
			behindTotal += int64(room)
			behindLargest = max(behindLargest, int64(room))
		}
		fetchable = append(fetchable, c)
	}
	f.fetchCands = fetchable
	behindMax := f.behindLimit(behindTotal, behindLargest, slots)
	cands := fetchable[:0]     // filtered in place
	rooms := map[int32]int64{} // by target broker: what its partitions ask for
	var asked, behind int64
	for _, c := range fetchable {
		if c.behind {
			if behind > 0 && behind+int64(c.room) > behindMax {
				continue
			}
			behind += int64(c.room)
		}
		cands = append(cands, c)
		rooms[c.dst] += int64(c.room)
		asked += int64(c.room)
	}
	var minBytes int64
	if slots.inFlight {
		minBytes = f.concurrentFetchMin()
	}
	var shareLeft int64
	for dst := range rooms {
		shareLeft += f.shareLeft(dst)
	}
	// A broker still returns at least one batch (KIP-74).
	maxBytes := max(min(int64(f.cfg.FetchMaxBytes), fetchResponseBytes, f.budget()-f.buffered, shareLeft), 1)
	if len(cands) == 0 || min(asked, maxBytes) < minBytes {
		return nil, nil, nil, nil
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = int32(fetchMaxWait / time.Millisecond)
	req.MinBytes = 1
	if f.cfg.ReadCommitted {
		req.IsolationLevel = 1
	}
	req.SessionEpoch = -1 // no fetch session: every fetch is complete
	req.MaxBytes = int32(maxBytes)
	parts := make(map[tp]*fastPart, len(cands))
	at := make(map[tp]int64, len(cands))
	var last string
	for _, c := range cands {
		key, fp := c.key, c.fp
		if len(req.Topics) == 0 || key.topic != last {
			_, id := leaderOf(f.srcMeta, key.topic, key.partition)
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = key.topic, id
			req.Topics = append(req.Topics, rt)
			last = key.topic
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = key.partition
		// A broker that is not the leader of this epoch (any more, or
		// yet) refuses the fetch (FENCED_LEADER_EPOCH,
		// UNKNOWN_LEADER_EPOCH: metadata is refreshed and the fetch
		// tried again) rather than answer from a log that may differ.
		rp.CurrentLeaderEpoch = epochOf(f.srcMeta, key.topic, key.partition)
		rp.LastFetchedEpoch = fp.fetchedEpoch
		rp.FetchOffset = fp.next
		rp.LogStartOffset = -1
		rp.PartitionMaxBytes = c.room
		rt := &req.Topics[len(req.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
		fp.fetching = true
		parts[key] = fp
		at[key] = fp.next
	}
	for dst, n := range rooms {
		rooms[dst] = min(n, maxBytes, f.shareLeft(dst))
	}
	return req, parts, at, rooms
}

// fetchCandidate is a partition that may be in a fetch: its target leader,
// the bytes it may ask for, and whether it is known to be behind.
type fetchCandidate struct {
	key    tp
	fp     *fastPart
	dst    int32
	room   int32
	behind bool
}

// fetchable reports whether a partition may be in a fetch now, with its
// target leader and the bytes it may ask for: it has room, its target
// leader is known, and that broker's share has some left. A partition whose
// target leader is unknown (metadata not loaded yet, or leaderless) has
// nowhere to write, and fetching for it anyway would let it take
// buffer.memory that the partitions of healthy brokers need.
func (f *forwarder) fetchable(fp *fastPart, now time.Time) (dst, room int32, ok bool) {
	if room = f.fetchRoom(fp, now); room <= 0 {
		return -1, 0, false
	}
	if dst = f.targetLeader(fp); dst < 0 {
		f.dstStale = true
		return -1, 0, false
	}
	return dst, room, f.shareLeft(dst) > 0
}

// fetchRoom returns how many bytes a partition may fetch now, 0 for none:
// nothing pending for it, at most one ask queued, and room in
// buffer.memory. It asks for what two asks leave, at least one ask, so a
// partition never fetches in crumbs (each fetch a round trip), and its next
// response is on its way while up to one ask is still written; never for
// more than cfg.MaxAsk, which a max.partition.fetch.bytes the user set is.
func (f *forwarder) fetchRoom(fp *fastPart, now time.Time) int32 {
	ask := f.askOf(fp)
	switch {
	case fp.fetching || fp.resolving || !fp.sending() || now.Before(fp.notBefore):
		return 0
	case fp.queueBytes > int(ask) || f.buffered >= f.budget():
		return 0
	}
	// In int64: a max.partition.fetch.bytes of 1 GiB (kafkaclient's clamp
	// of Java's "no limit") would overflow two asks.
	return int32(min(2*int64(ask)-int64(fp.queueBytes), int64(f.cfg.MaxAsk)))
}

// askOf is what one fetch asks for a partition: max.partition.fetch.bytes
// until grow raises it.
func (f *forwarder) askOf(fp *fastPart) int32 {
	if fp.ask > 0 {
		return fp.ask
	}
	return f.cfg.PartitionFetchSize
}

// grow doubles a partition's ask, up to cfg.MaxAsk, when its response of
// n bytes filled at least half of it and the partition has more behind
// (next < end): it was the ask, not the log, that bounded the response.
// Over a long link a partition moves at most two asks (and at most MaxAsk)
// per round trip, so
// the ask rises until the link, buffer.memory or the target is the bound.
// A partition that caught up goes back to the first ask: a fetch reserves
// buffer.memory for all it asks until it is answered, and a long poll of a
// partition with nothing new would hold a grown ask's worth for nothing.
func (f *forwarder) grow(fp *fastPart, n int, next, end int64) {
	ask := f.askOf(fp)
	switch {
	case next >= end:
		fp.ask = 0
	case n >= int(ask)/2 && ask < f.cfg.MaxAsk:
		fp.ask = int32(min(2*int64(ask), int64(f.cfg.MaxAsk)))
	}
}

// shareLeft is what a target broker's share of buffer.memory has left for
// new fetches.
func (f *forwarder) shareLeft(dst int32) int64 {
	return f.share - f.used[dst] - f.reserved[dst]
}

// shares returns each target broker's share of buffer.memory and the bytes
// fetched and not yet acknowledged per target broker (-1 for partitions
// without a known leader), so that partitions whose target broker is dead
// or leaderless hold at most their share and the others keep flowing.
func (f *forwarder) shares() (share int64, used map[int32]int64) {
	used = map[int32]int64{}
	for _, fp := range f.parts {
		used[f.targetLeader(fp)] += int64(fp.queueBytes) // includes the batch in flight
	}
	return f.budget() / int64(max(len(used), 1)), used
}

func (f *forwarder) targetLeader(fp *fastPart) int32 {
	leader, _ := leaderOf(f.dstMeta, fp.p.topic.Remote, fp.p.num)
	return leader
}

// holdsBatch reports whether batches start with a whole batch (a
// partition that got only a cut-off one is not busy, only squeezed).
func holdsBatch(batches []byte) bool {
	_, err := batch.Parse(batches)
	return err == nil
}

func responseBytes(r *kmsg.FetchResponse) int {
	n := 0
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			n += len(p.RecordBatches)
		}
	}
	return n
}

func (f *forwarder) handle(ctx context.Context, ev any) {
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
			f.pidBackoff = min(max(2*f.pidBackoff, pidBackoffMin), pidBackoffMax)
			wait := f.pidBackoff/2 + rand.N(f.pidBackoff/2+1)
			f.pidNotBefore = time.Now().Add(wait)
			if !errors.Is(ev.err, context.Canceled) {
				f.log.Warn("fast path: getting a producer id failed; retrying", "err", ev.err, "retry_in", wait)
			}
			return
		}
		f.pidBackoff = 0
		f.usePID(ev.pid, ev.epoch)
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
		f.fail(ev.fp, truncationError(ev.fp.p, ev.next, ev.logStart, ev.listErr, ev.cause))
	case addDone, commitDone:
		f.handleTxn(ev)
	}
}

func (f *forwarder) handleFetch(ctx context.Context, ev fetchDone) {
	for _, fp := range ev.parts {
		fp.fetching = false
	}
	for tl, n := range ev.reserved {
		f.reserved[tl] -= n
	}
	f.sharesAt = time.Time{} // queues grow now: count them again before the next fetch
	if ev.err != nil {
		if ctx.Err() == nil {
			f.deps.Errors.count(sideFetch, ev.err)
			f.log.Warn("fast path: fetch failed; retrying", "broker", ev.broker, "err", ev.err)
			f.srcStale = true
			for _, fp := range ev.parts {
				fp.notBefore = time.Now().Add(retryBackoff)
			}
		}
		return
	}
	answered := make(map[tp]bool, len(ev.parts))
	for _, t := range ev.resp.Topics {
		name := topicName(f.srcNames, t.Topic, t.TopicID)
		for i := range t.Partitions {
			rp := &t.Partitions[i]
			key := tp{name, rp.Partition}
			answered[key] = true
			fp := ev.parts[key]
			if fp == nil || !fp.sending() {
				continue
			}
			if at, ok := ev.at[key]; !ok || at != fp.next {
				continue // fetched at another offset than where the partition stands now
			}
			f.handleFetchPartition(ctx, fp, rp, ev.rebuilt[rp])
		}
	}
	// A fetch session leaves out the partitions with nothing new: no
	// batch this time.
	for key, fp := range ev.parts {
		if !answered[key] {
			fp.active = false
		}
	}
}

func (f *forwarder) handleFetchPartition(ctx context.Context, fp *fastPart, rp *kmsg.FetchResponseTopicPartition, rebuilt rebuiltBatches) {
	p := fp.p
	if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
		f.deps.Errors.count(sideFetch, err)
		switch classify(err) {
		case errTruncated:
			f.listTruncation(ctx, fp, err)
		case errRetry:
			f.srcStale = true
			fp.notBefore = time.Now().Add(retryBackoff)
		default:
			f.fail(fp, fmt.Errorf("reading %s[%d]: %w", p.topic.Source, p.num, err))
		}
		return
	}
	if d := rp.DivergingEpoch; d.Epoch >= 0 && d.EndOffset >= 0 && d.EndOffset < fp.next {
		f.fail(fp, divergedError(fp, d.Epoch, d.EndOffset))
		return
	}
	end := rp.HighWatermark
	if f.cfg.ReadCommitted && rp.LastStableOffset >= 0 {
		end = rp.LastStableOffset
	}
	p.end.Store(end)
	fp.active = holdsBatch(rp.RecordBatches)

	var filter *batch.Filter
	if f.cfg.ReadCommitted {
		aborted := make([]batch.AbortedTxn, len(rp.AbortedTransactions))
		for i, a := range rp.AbortedTransactions {
			aborted[i] = batch.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset}
		}
		filter = batch.NewFilter(aborted)
	} else {
		filter = batch.NewFilter(nil)
	}
	first := len(fp.queue)
	f.walkBatches(fp, rp.RecordBatches, filter, rebuilt)
	if fp.stuck {
		f.detach(fp, first)
	}
	f.grow(fp, len(rp.RecordBatches), fp.next, end)
}

// walkBatches queues the batches of one partition's fetch response from
// fp.next on, in order; a batch that needs rebuilding is queued as rebuilt
// in the fetch goroutine.
func (f *forwarder) walkBatches(fp *fastPart, batches []byte, filter *batch.Filter, rebuilt rebuiltBatches) {
	p := fp.p
	for rest := batches; len(rest) > 0; {
		h, err := batch.Parse(rest)
		switch {
		case errors.Is(err, batch.ErrPartial):
			return
		case errors.Is(err, batch.ErrOldFormat):
			f.leave(fp, "message format older than v2")
			return
		case err != nil:
			f.fail(fp, fmt.Errorf("reading %s[%d] at %d: %w", p.topic.Source, p.num, fp.next, err))
			return
		}
		b := rest[:h.Size()]
		rest = rest[h.Size():]
		if h.NextOffset() <= fp.next {
			continue // before the fetch offset: a batch the broker returns whole
		}
		if !batch.ValidCRC(b, h) {
			// Corrupted on the wire or on the source's disk. The rewrite
			// would give it a valid CRC, so it must never go further.
			if fp.crcRetried {
				f.fail(fp, fmt.Errorf("source %s[%d]: the batch at offsets %d..%d has a bad CRC twice in a row (corrupt on the source or on the way); the partition is stopped rather than copy corrupt data", p.topic.Source, p.num, h.BaseOffset, h.LastOffset()))
				return
			}
			fp.crcRetried = true
			fp.notBefore = time.Now().Add(retryBackoff)
			f.log.Warn("fast path: a fetched batch has a bad CRC; fetching it again", "topic", p.topic.Source, "partition", p.num, "offset", h.BaseOffset)
			return
		}
		fp.crcRetried = false
		fp.fetchedEpoch = h.PartitionLeaderEpoch
		if filter.Skip(b, h) || f.returned(h) {
			f.queueSkip(fp, h)
			continue
		}
		if batch.NeedsRebuild(h, fp.next) {
			if !f.queueRebuilt(fp, h, rebuilt[h.BaseOffset]) {
				return
			}
			continue
		}
		if f.cfg.Codec >= 0 && h.Codec() != f.cfg.Codec {
			f.leave(fp, fmt.Sprintf("a %s-compressed batch could not be recompressed to %s, the compression.type", h.Codec(), f.cfg.Codec))
			return
		}
		f.enqueue(fp, &qbatch{data: b, h: h, seq: -1}, h.NextOffset())
	}
}

// enqueue queues a batch to send, as fetched or rebuilt, and moves the
// partition's fetch offset to next, the source offset after it.
func (f *forwarder) enqueue(fp *fastPart, q *qbatch, next int64) {
	q.next = next
	fp.queue = append(fp.queue, q)
	fp.p.timing.fetched(q.h.FirstTimestamp, q.h.MaxTimestamp, int(q.h.NumRecords), time.Now())
	f.hold(fp, q.held())
	fp.next = next
}

// queueSkip queues the source batch h, which holds nothing to copy, as a
// skip: progress moves over it once everything before it is acknowledged
// (applySkips).
func (f *forwarder) queueSkip(fp *fastPart, h batch.Header) {
	q := &qbatch{h: h, skip: true, seq: -1, next: h.NextOffset()}
	fp.queue = append(fp.queue, q)
	f.hold(fp, q.held())
	fp.next = q.next
}

// hold counts n bytes queued for fp (negative: released) against its
// partition's room and buffer.memory.
func (f *forwarder) hold(fp *fastPart, n int) {
	fp.queueBytes += n
	f.buffered += int64(n)
}

// held is the bytes q counts against its partition's room and
// buffer.memory: its data, or for a skip the bytes fetched for it. Skips
// hold no data, but a queue of them behind a head that is not acknowledged
// (or with no lease or producer id) would grow without bound if they
// counted nothing.
func (q *qbatch) held() int {
	if q.skip {
		return int(q.h.Size())
	}
	return len(q.data)
}

// detach copies the batches queued from index first on out of their fetch
// responses into one buffer, so the responses (up to 16 MiB each) can be
// freed and the queue holds only the bytes it counts. Only partitions whose
// target does not acknowledge them are detached: their batches could
// otherwise pin responses for as long as the target is down, while the
// batches of a partition that flows are acknowledged, and their response
// freed, within the time it takes to drain buffer.memory (copying every
// batch doubled the fast path's CPU per GB: 1.7 -> 3.2-3.7 s/GB, measured
// with go run ./bench -tools strait -phases copy -records 1000000).
func (f *forwarder) detach(fp *fastPart, first int) {
	if first >= len(fp.queue) {
		return
	}
	n := 0
	for _, q := range fp.queue[first:] {
		n += len(q.data)
	}
	buf := make([]byte, 0, n)
	for _, q := range fp.queue[first:] {
		if q.data == nil {
			continue
		}
		at := len(buf)
		buf = append(buf, q.data...)
		q.data = buf[at:len(buf):len(buf)]
	}
}

// divergedError says that the source leader's log diverged from what fp
// fetched: its epoch ends at end, before the next offset to fetch, so the
// records fetched from end on are no longer on the source (an unclean
// leader election truncated them), and those copied are on the target only.
func divergedError(fp *fastPart, epoch int32, end int64) error {
	copied := ""
	if acked := fp.p.position(); acked > end {
		copied = fmt.Sprintf("; the target holds the copies of %d..%d", end, acked-1)
	}
	return fmt.Errorf("source %s[%d]: the log diverged at offset %d after a leader change (leader epoch %d ends there): records %d..%d, which Strait fetched, are no longer on the source (an unclean leader election truncated them)%s; the partition is stopped rather than copy a log that is not the one it began: compare source and target, then reset the progress of %s[%d] to copy again",
		fp.p.topic.Source, fp.p.num, end, epoch, end, fp.next-1, copied, fp.p.topic.Remote, fp.p.num)
}

// listTruncation lists the source log start after an out-of-range fetch,
// off the loop, to say which records were lost (truncDone).
func (f *forwarder) listTruncation(ctx context.Context, fp *fastPart, cause error) {
	fp.resolving = true
	source, num, next := fp.p.topic.Source, fp.p.num, fp.next
	if acked := fp.p.position(); acked >= 0 {
		next = acked // everything from acked on is not on the target
	}
	f.spawn(func() any {
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		starts, err := kadm.NewClient(f.src).ListStartOffsets(ctx, source)
		td := truncDone{fp: fp, next: next, logStart: -1, listErr: err, cause: cause}
		if err == nil {
			if o, ok := starts.Lookup(source, num); ok {
				td.logStart, td.listErr = o.Offset, o.Err
			} else {
				td.listErr = fmt.Errorf("no start offset listed for %s[%d]", source, num)
			}
		}
		return td
	})
}

// dropQueue forgets what a partition fetched and did not send; the bytes
// of a batch in flight stay counted until its response.
func (f *forwarder) dropQueue(fp *fastPart) {
	for _, q := range fp.queue {
		f.hold(fp, -q.held())
	}
	fp.queue = nil
}

// leave starts moving a partition to the record path: it stops fetching,
// drops what it fetched but did not send, and hands over once nothing is in
// flight (finishLeaving).
func (f *forwarder) leave(fp *fastPart, reason string) {
	if fp.state == leaving || fp.state == gone {
		return
	}
	if f.txn != nil {
		f.fail(fp, fmt.Errorf("%s[%d] cannot stay on the fast path (%s), and exactly-once mode copies only there: the record path has no transactions; Strait stopped the partition rather than copy it at least once (turn exactly-once mode off for this flow to copy it)",
			fp.p.topic.Source, fp.p.num, reason))
		return
	}
	if fp.to(leaving) {
		fp.leaveReason = reason
		f.dropQueue(fp)
	}
}

func (f *forwarder) finishLeaving() {
	for key, fp := range f.parts {
		if len(fp.sent) > 0 {
			continue
		}
		switch fp.state {
		case gone:
			f.dropQueue(fp)
			delete(f.parts, key)
			if next := f.waiting[key]; next != nil {
				delete(f.waiting, key)
				f.install([]*fastPart{next})
			}
		case leaving:
			f.dropQueue(fp)
			delete(f.parts, key)
			offset := fp.p.resumeOffset()
			if offset < 0 {
				offset = fp.next
			}
			f.deps.ToRecordPath(fp.p, offset, fp.leaveReason)
		}
	}
}

// install adds partitions to the fast path. A partition whose source
// partition has an entry already (a topic deleted and recreated) replaces
// it only once the old entry's batches in flight are answered: until then
// it waits, and the old entry leaves.
func (f *forwarder) install(parts []*fastPart) {
	for _, fp := range parts {
		key := tp{fp.p.topic.Source, fp.p.num}
		if old := f.parts[key]; old != nil && old != fp {
			f.drop(old, fmt.Errorf("%s[%d] was started again (its topic recreated) while batches of its earlier start were in the transaction", old.p.topic.Source, old.p.num))
			if len(old.sent) > 0 {
				f.waiting[key] = fp
				continue
			}
			delete(f.parts, key)
		}
		fp.conn = f.conns // spreads partitions over the produce connections
		f.conns++
		f.parts[key] = fp
		f.srcStale, f.dstStale = true, true
	}
}

// dropRemoved forgets partitions of topics deleted on the source.
func (f *forwarder) dropRemoved() {
	for _, fp := range f.parts {
		if fp.p.removed.Load() {
			f.drop(fp, fmt.Errorf("the source topic of %s[%d] was deleted while the partition held batches of the transaction not acknowledged", fp.p.topic.Source, fp.p.num))
		}
	}
}

// drop makes a partition leave the fast path once its batches in flight
// are answered (finishLeaving), dropping what it has queued. In
// exactly-once mode, queued batches of open fate end the attempt with why
// (stoppedInTxn): they may be on the target.
func (f *forwarder) drop(fp *fastPart, why error) {
	if fp.state == gone {
		return
	}
	f.stoppedInTxn(fp, why)
	fp.to(gone)
	f.dropQueue(fp)
}

func (f *forwarder) fail(fp *fastPart, err error) {
	f.drop(fp, err)
	if fp.p.stop(err) {
		f.log.Error("partition stopped", "topic", fp.p.topic.Source, "partition", fp.p.num, "err", err)
	}
}

// checkIncarnations stops the partitions of every source topic whose ID
// changed in fresh metadata: the topic was deleted and recreated, and its
// new incarnation must not be fetched at the old one's offsets.
func (f *forwarder) checkIncarnations(meta map[string]topicMeta) {
	for _, fp := range f.parts {
		t := fp.p.topic
		tm, ok := meta[t.Source]
		if !ok || tm.id == ([16]byte{}) || t.ID == ([16]byte{}) || tm.id == t.ID || fp.state == gone {
			continue
		}
		f.fail(fp, recreatedError(fp.p, fp.p.position()))
	}
}

// returned reports whether the reverse flow of an active-active pair wrote
// the batch: its records came from this flow's target, and copying them
// would loop. Its producer id was resolved in the fetch goroutine.
func (f *forwarder) returned(h batch.Header) bool {
	ret := f.deps.Provenance.Returned
	return ret != nil && !h.Control() && ret.Returned(h.ProducerID)
}

// producerIDs lists the distinct producer ids of a fetch response's
// batches.
func producerIDs(resp *kmsg.FetchResponse) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			for rest := p.RecordBatches; len(rest) > 0; {
				h, err := batch.Parse(rest)
				if err != nil {
					break // partial or old-format tail: the walk decides what it is
				}
				rest = rest[h.Size():]
				if !seen[h.ProducerID] && h.ProducerID >= 0 {
					seen[h.ProducerID] = true
					out = append(out, h.ProducerID)
				}
			}
		}
	}
	return out
}
