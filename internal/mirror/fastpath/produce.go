package fastpath

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
	"strait/internal/mirror/flow"
)

// Producing on the fast path. Kafka takes one batch per partition in a
// produce request (v3 on), so a partition that waited for each batch's
// acknowledgement before it sent the next moved one batch per round trip.
// With the idempotent producer, a partition instead keeps up to
// maxPartitionInflight batches in flight, each in its own request, as
// Kafka's own producer does with max.in.flight.requests.per.connection=5.
//
// Order rests on three rules:
//   - a broker serves one connection's requests in order, and the lanes
//     (lanes.go) write each target broker's requests in the order they were
//     made;
//   - every sent batch of a partition goes to the same broker, under the
//     same producer id; the partition sends nothing new while that changes;
//   - results are applied in sequence order (settle): a batch is
//     acknowledged only after every batch before it. When a batch fails,
//     every batch sent after it is answered first (they fail out of
//     sequence, or were written if the failure was a lost response), then
//     all of them are sent again with the same sequence numbers. The broker
//     writes what it lacks and answers a batch it already has with its
//     original offset (it remembers a producer's last five batches, which
//     is why five is the limit), so the offset index stays exact.
//
// Without idempotence a retry cannot be told from a new batch, so a
// partition then keeps one batch in flight.
//
// A partition pipelines only once its leader has acknowledged one of its
// batches under the current producer id, and again after any failure
// (sendLimit): a broker with no state for the producer accepts any
// sequence. Should a batch still be acknowledged behind a head the target
// did not write, the partition stops and says so (writtenPast).

const (
	maxPartitionInflight = 5 // Kafka's limit for idempotent producers
	maxProduceInflight   = 8 // requests per lane (target broker and connection)
	produceRequestBytes  = 16 << 20
	// spreadBytes is the backlog from which a partition sends on a
	// connection of its own (laneOf).
	spreadBytes = 256 << 10
	// pipelineIdle is how long a leader's acknowledgement opens the
	// pipeline (sendLimit): a broker may drop an idle producer's state
	// (producer.id.expiration.ms, retention, a recreated remote topic), and
	// then accepts any sequence.
	pipelineIdle = 10 * time.Second
)

type sendState uint8

const (
	sendPending sendState = iota
	sendAcked
	sendFailed
)

// sendResult is what came back for a sent batch.
type sendResult struct {
	state sendState
	base  int64 // target base offset, when acked
	err   error // when failed
	// request is set when the request as a whole failed (no answer): it is
	// sent again, whatever its error.
	request bool
	// unwritten is set when the request is known never to have been
	// written (its lane dropped it, or the client failed it before writing
	// it): unlike a lost answer, its fate is not open.
	unwritten bool
}

// sentRef names one sent batch of a produce request.
type sentRef struct {
	fp *Part
	id uint64 // qbatch.sendID
}

type produceDone struct {
	lane    laneKey
	batches map[tp]sentRef // by remote topic and partition
	resp    *kmsg.ProduceResponse
	err     error
	written bool // the request was written to the broker (lanes.go)
}

// sendLimit is how many batches fp may have in flight to leader at now.
// More than one only once leader has acknowledged fp's latest answered
// batch under the current producer id, less than pipelineIdle ago: a
// broker with no state for our producer
// on a partition (a new partition, or one whose records of ours are all
// deleted) accepts a batch with any sequence (KIP-360). If a first batch
// then failed retriably (a new partition's leader not ready yet) while the
// next was in flight, the next would be written first, and the first,
// sent again, would be out of sequence: records reordered, then written
// twice under a new producer id. That is what the benchmark hit with 64
// new remote partitions; franz-go's producer has the same gate (its issue
// #223).
func (f *Forwarder) sendLimit(fp *Part, leader int32, now time.Time) int {
	if !f.cfg.Idempotent || !f.lanes.ordered || !fp.confirmed || fp.confirmedBy != leader || fp.confirmedPid != f.pid || now.Sub(fp.confirmedAt) >= pipelineIdle {
		return 1
	}
	return maxPartitionInflight
}

// canSend reports whether fp may send its next queued batch to leader now.
func (f *Forwarder) canSend(fp *Part, leader int32, now time.Time) bool {
	switch {
	case len(fp.queue) == 0 || fp.queue[0].skip || fp.state != flowing || !f.txnAllows(fp, fp.queue[0]) || !fp.alignedAt(0):
		return false
	case len(fp.sent) >= f.sendLimit(fp, leader, now) || now.Before(fp.notBefore) || fp.p.Failed() != nil:
		return false
	case len(fp.sent) > 0 && (fp.sentOn.broker != leader || fp.sent[len(fp.sent)-1].pid != f.pid):
		return false // a leader change or a new producer id waits for the old sends
	case fp.keep && f.reownedHead(fp):
		return false // startResyncs reads where the target ends first
	}
	return true
}

// startProduces sends, per target broker, up to maxProduceInflight requests
// of queued batches; request i of a round holds each partition's i-th
// batch, so a partition's batches leave in sequence order.
func (f *Forwarder) startProduces(ctx context.Context, now time.Time) {
	type request struct {
		parts map[tp]*Part
		size  int
	}
	rounds := map[laneKey][]*request{}
	for key, fp := range f.parts {
		f.applySkips(fp)
		leader, _ := leaderOf(f.dstMeta, fp.p.Remote(), key.partition)
		if leader < 0 {
			if len(fp.queue) > 0 {
				f.dstStale = true
			}
			continue
		}
		lane, ok := f.laneOf(fp, leader)
		if !ok {
			continue
		}
		if f.canSend(fp, leader, now) {
			f.coalesce(fp, f.sendLimit(fp, leader, now)-len(fp.sent))
		}
		next := 0 // the first request this partition's next batch may join
		for taken := 0; taken < len(fp.queue) && f.canSendNth(fp, leader, now, taken); taken++ {
			rs := rounds[lane]
			for next < len(rs) && rs[next].size >= produceRequestBytes {
				next++
			}
			if next == len(rs) {
				if f.producing[lane]+len(rs) >= maxProduceInflight {
					break
				}
				rs = append(rs, &request{parts: map[tp]*Part{}})
				rounds[lane] = rs
			}
			r := rs[next]
			r.parts[key] = fp
			r.size += len(fp.queue[taken].data)
			next++
		}
	}
	for lane, rs := range rounds {
		for _, r := range rs {
			f.sendRequest(ctx, lane, r.parts)
		}
	}
}

// laneOf returns the connection fp sends to leader on, and false while
// fp must not send: it has a backlog to move to a connection of its own
// and batches still in flight on the shared one, which must be answered
// first (a partition's batches reach the broker in sequence order only on
// one connection). A partition with little queued shares its broker's
// first connection with the others, so that a light flow makes one
// request per round to a broker rather than one per connection: in the
// latency benchmark (8 partitions at 5 MB/s over 4 connections) most of
// Strait's CPU was system calls and thread wake-ups for 1,300 requests a
// second of one or two batches each. A partition with a backlog has a
// connection of its own (fp.conn), spreading a heavy flow over the
// broker's request threads; it goes back to the shared one once nothing
// it sent is in flight.
func (f *Forwarder) laneOf(fp *Part, leader int32) (laneKey, bool) {
	own := fp.conn % f.lanes.conns()
	backlog := fp.queueBytes >= spreadBytes
	switch {
	case len(fp.sent) > 0:
		// Its batches in flight hold it on their connection (canSend
		// holds it while they go to another broker).
		return laneKey{leader, fp.sentOn.conn}, !backlog || fp.sentOn.conn == own
	case backlog:
		return laneKey{leader, own}, true
	}
	return laneKey{leader, 0}, true
}

// canSendNth reports whether fp may send its queued batch n (0 is the
// head) in this round, after the n before it.
func (f *Forwarder) canSendNth(fp *Part, leader int32, now time.Time, n int) bool {
	if n == 0 {
		return f.canSend(fp, leader, now)
	}
	return !fp.queue[n].skip && len(fp.sent)+n < f.sendLimit(fp, leader, now) && f.txnAllows(fp, fp.queue[n]) && fp.alignedAt(n)
}

// sendRequest moves the head batch of each partition in parts to its sent
// list and hands the request to the broker's lane.
func (f *Forwarder) sendRequest(ctx context.Context, lane laneKey, parts map[tp]*Part) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = f.cfg.Acks
	req.TimeoutMillis = 30_000
	if f.txn != nil {
		req.TransactionID = &f.txn.cfg.ID
	}
	topics := map[string]int{}
	refs := make(map[tp]sentRef, len(parts))
	for key, fp := range parts {
		q := fp.takeHead()
		if q.seq < 0 || q.pid != f.pid {
			q.seq, q.pid = fp.seq, f.pid
			if f.cfg.Idempotent {
				fp.seq = NextSeq(fp.seq, q.h.NumRecords)
			}
		}
		pid, epoch, seq := f.pid, f.epoch, q.seq
		if !f.cfg.Idempotent {
			pid, epoch, seq = -1, -1, -1
		}
		batch.Rewrite(q.data, q.h, pid, epoch, seq, f.txn != nil)
		fp.sendIDs++
		q.sendID, q.result = fp.sendIDs, sendResult{}
		fp.sent = append(fp.sent, q)
		fp.sentOn = lane
		remote := fp.p.Remote()
		i, ok := topics[remote]
		if !ok {
			_, id := leaderOf(f.dstMeta, remote, key.partition)
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic, rt.TopicID = remote, id
			req.Topics = append(req.Topics, rt)
			i = len(req.Topics) - 1
			topics[remote] = i
		}
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = key.partition
		rp.Records = q.data
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
		refs[tp{remote, key.partition}] = sentRef{fp, q.sendID}
	}
	f.producing[lane]++
	f.running++
	ctx, cancel := f.requestContext(ctx)
	f.lanes.send(ctx, lane, req, func(resp kmsg.Response, err error, written bool) {
		cancel()
		pd := produceDone{lane: lane, batches: refs, err: err, written: written}
		if err == nil {
			pd.resp = resp.(*kmsg.ProduceResponse)
		}
		f.events <- pd
	})
}

// requestContext is a produce request's context: it ends where the node's
// lease ends (Share.LeaseUntil), so that a request that waited past it (in
// its lane, or in franz-go's queue while the process was frozen) is never
// written: another node may own its partitions by then, and the broker
// cannot fence an idempotent producer of another id. flow.LeaseContext
// says why not context.WithDeadline.
func (f *Forwarder) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.deps.Share.LeaseUntil == nil {
		return ctx, func() {}
	}
	return flow.LeaseContext(ctx, f.deps.Share.LeaseUntil())
}

// takeHead removes and returns the head of the queue.
func (fp *Part) takeHead() *qbatch {
	q := fp.queue[0]
	fp.queue = popFront(fp.queue)
	return q
}

// popFront drops the first element. Its slot is cleared: the backing array
// outlives the slice, and a batch left in it would pin its whole fetch
// response (up to 16 MiB) for as long as the partition fetches nothing new.
func popFront(q []*qbatch) []*qbatch {
	q[0] = nil
	if len(q) == 1 {
		return nil
	}
	return q[1:]
}

func NextSeq(seq, n int32) int32 {
	s := int64(seq) + int64(n)
	if s > int64(^uint32(0)>>1) {
		s -= int64(^uint32(0)>>1) + 1
	}
	return int32(s)
}

// applySkips moves progress over skipped offsets at the head of the queue
// once everything before them is acknowledged, and for a partition that
// keeps offsets, filled.
func (f *Forwarder) applySkips(fp *Part) {
	for len(fp.sent) == 0 && len(fp.queue) > 0 && fp.queue[0].skip && (!fp.keep || fp.queue[0].next <= fp.written) {
		q := fp.takeHead()
		f.hold(fp, -q.held())
		fp.p.SkipBefore(q.next)
	}
}

func (f *Forwarder) handleProduce(ev produceDone) {
	now := time.Now()
	if ev.err != nil && !errors.Is(ev.err, context.Canceled) {
		f.deps.Errors.Count(flow.SideProduce, ev.err)
		f.log.Warn("fast path: produce failed; retrying", "broker", ev.lane.broker, "err", ev.err)
		f.dstStale = true
	}
	answered := map[tp]bool{}
	if ev.err == nil {
		for _, t := range ev.resp.Topics {
			remote := topicName(f.dstNames, t.Topic, t.TopicID)
			for _, rp := range t.Partitions {
				key := tp{remote, rp.Partition}
				ref, ok := ev.batches[key]
				if !ok {
					continue
				}
				answered[key] = true
				res := sendResult{state: sendAcked, base: rp.BaseOffset}
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					f.deps.Errors.Count(flow.SideProduce, err)
					if rp.ErrorMessage != nil && *rp.ErrorMessage != "" {
						// The broker's message says what it expected (an out-of-order
						// sequence names the incoming and the current sequence).
						err = fmt.Errorf("%w (broker: %s)", err, *rp.ErrorMessage)
					}
					res = sendResult{state: sendFailed, err: err}
				}
				f.record(ref, res, now)
			}
		}
	}
	for key, ref := range ev.batches {
		if !answered[key] {
			err := ev.err
			if err == nil {
				err = errors.New("the produce response did not answer the partition")
			}
			f.record(ref, sendResult{state: sendFailed, err: err, request: true, unwritten: ev.err != nil && !ev.written}, now)
		}
	}
}

// record stores a sent batch's result and settles its partition.
func (f *Forwarder) record(ref sentRef, res sendResult, now time.Time) {
	for _, q := range ref.fp.sent {
		if q.sendID == ref.id {
			q.result = res
			f.settle(ref.fp, now)
			return
		}
	}
}

// settle applies the results of fp's sent batches in sequence order:
// acknowledged batches at the head are acked; a failed head waits until
// every batch after it is answered, then all of them go back to the queue
// and the head's error decides what happens next.
func (f *Forwarder) settle(fp *Part, now time.Time) {
	for len(fp.sent) > 0 && fp.sent[0].result.state == sendAcked {
		q := fp.sent[0]
		fp.sent = popFront(fp.sent)
		f.ack(fp, q, q.result.base)
		fp.confirmed, fp.confirmedBy, fp.confirmedPid, fp.confirmedAt = true, fp.sentOn.broker, q.pid, now
		fp.writtenBehind = nil // the head is written: what was behind it is in order
	}
	for _, q := range fp.sent {
		if q.result.state == sendFailed {
			fp.confirmed = false // one batch in flight until the broker acknowledges one again
		}
	}
	if len(fp.sent) == 0 {
		if fp.state == rewinding {
			fp.to(flowing)
		}
		return
	}
	if fp.sent[0].result.state == sendPending {
		return
	}
	if fp.state == flowing {
		fp.to(rewinding)
	}
	for _, q := range fp.sent {
		if q.result.state == sendPending {
			return
		}
	}
	if fp.state != rewinding {
		// Leaving or gone: what it sent is answered and goes nowhere
		// again; finishLeaving drops it with the queue.
		fp.queue, fp.sent = append(fp.sent, fp.queue...), nil
		return
	}
	head := fp.sent[0]
	if later := writtenPast(fp.sent); later != nil {
		fp.queue, fp.sent = append(fp.sent, fp.queue...), nil // fail drops them with the queue
		f.fail(fp, outOfOrderError(fp, later, head, head.result.err))
		return
	}
	for _, q := range fp.sent[1:] {
		if q.result.state == sendAcked && fp.writtenBehind == nil {
			fp.writtenBehind = q // written behind a head of open fate: see failedSend
		}
	}
	requeue := make([]*qbatch, 0, len(fp.sent)+len(fp.queue))
	requeue = append(requeue, fp.sent...)
	fp.queue = append(requeue, fp.queue...)
	fp.sent = nil
	fp.to(flowing)
	f.failedSend(fp, head, now)
}

// outOfOrderError says that the target wrote batch later, but not head,
// which comes before it, for cause.
func outOfOrderError(fp *Part, later, head *qbatch, cause error) error {
	return fmt.Errorf("writing %s[%d]: the target wrote the batch at source offset %d at target offset %d, but not the batch before it, at source offset %d (%v): "+
		"%s[%d] is out of source order from target offset %d on (a broker with no state for the producer id accepts any sequence); delete the remote topic and let Strait copy it again",
		fp.p.Source(), fp.p.Partition(), later.h.BaseOffset, later.result.base, head.h.BaseOffset, cause, fp.p.Remote(), fp.p.Partition(), later.result.base)
}

// writtenPast returns the first batch of sent, after its failed head,
// that the target acknowledged, when the head's error says the target did
// not write the head: then the target holds that batch without the one
// before it. An error that leaves the head's fate open (no answer, a
// timeout, too few replicas after the append) returns nil; sending the
// batches again with the same sequences settles them.
func writtenPast(sent []*qbatch) *qbatch {
	head := sent[0].result
	if head.request && !head.unwritten || errors.Is(head.err, kerr.RequestTimedOut) || errors.Is(head.err, kerr.NotEnoughReplicasAfterAppend) {
		return nil
	}
	for _, q := range sent[1:] {
		if q.result.state == sendAcked {
			return q
		}
	}
	return nil
}

// failedSend acts on the error of a partition's oldest unacknowledged
// batch, which settle has put back at the head of its queue.
func (f *Forwarder) failedSend(fp *Part, q *qbatch, now time.Time) {
	err := q.result.err
	if q.result.request {
		f.retry(fp, now)
		return
	}
	if f.txn != nil && breaksTxn(err) && (!errors.Is(err, kerr.OutOfOrderSequenceNumber) || fp.oooRetried) {
		f.abortAttempt(fmt.Errorf("writing %s[%d] offset %d to %s in a transaction: %w", fp.p.Source(), fp.p.Partition(), q.h.BaseOffset, fp.p.Remote(), err))
		return
	}
	if later := fp.writtenBehind; later != nil && errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		// Sent again after its answer was lost, the head is out of
		// sequence: it was never written, and the target took the batch
		// behind it without it (it had lost the producer's state).
		f.fail(fp, outOfOrderError(fp, later, q, err))
		return
	}
	if errors.Is(err, kerr.DuplicateSequenceNumber) {
		f.fail(fp, fmt.Errorf("writing %s[%d]: the target reports a duplicate without its offset, so the offset index cannot stay exact: %w", fp.p.Remote(), fp.p.Partition(), err))
		return
	}
	if errors.Is(err, kerr.OutOfOrderSequenceNumber) && !fp.oooRetried {
		// The batch before it was acknowledged, so the broker should have
		// taken it. Send it once more, with the same sequence, before
		// renewing the producer id: a renewal renumbers every partition.
		fp.oooRetried = true
		f.log.Warn("fast path: the target answered out of sequence; sending the batch once more", "topic", fp.p.Remote(), "partition", fp.p.Partition(),
			"source_offset", q.h.BaseOffset, "sequence", q.seq, "records", q.h.NumRecords, "producer_id", q.pid, "queued", len(fp.queue), "err", err)
		f.retry(fp, now)
		return
	}
	switch flow.Classify(err) {
	case flow.RenewProducer:
		// The broker lost or rejected our producer state: start a new
		// producer id, which renumbers every partition from zero.
		f.log.Warn("fast path: the target rejected the producer state; starting a new producer id", "topic", fp.p.Remote(), "partition", fp.p.Partition(), "err", err)
		f.pidWanted = f.cfg.Idempotent
		f.retry(fp, now)
	case flow.Rejected:
		// The target refused the head, so it wrote neither it nor a
		// batch after it (writtenPast found none acknowledged): in
		// exactly-once mode the partition stops alone and the
		// transaction commits without them. The record path copies the
		// batch's records one by one, in batches the target accepts, or
		// stops on a record that cannot fit.
		fp.notWritten(q.pid)
		f.retry(fp, now)
		f.leave(fp, "the target rejected a forwarded batch: "+err.Error())
	case flow.Retry, flow.Shutdown:
		f.dstStale = true
		f.retry(fp, now)
	default:
		f.fail(fp, fmt.Errorf("writing %s[%d] offset %d to %s: %w", fp.p.Source(), fp.p.Partition(), q.h.BaseOffset, fp.p.Remote(), err))
	}
}

// ack records an acknowledged batch: the exact offsets of its records,
// progress, and MM2 sync state.
func (f *Forwarder) ack(fp *Part, q *qbatch, tgtBase int64) {
	fp.stuck = false
	fp.oooRetried = false
	f.hold(fp, -q.held())
	if fp.keep && f.checkLanded(fp, q, tgtBase) {
		return
	}
	p := fp.p
	if q.runs != nil {
		p.AckRebuilt(q.runs, tgtBase, q.next)
	} else {
		p.AckBatch(q.h.BaseOffset, tgtBase, int64(q.h.LastOffsetDelta)+1, q.next)
	}
	p.Copied(int(q.h.NumRecords), int64(len(q.data)), q.h.MaxTimestamp, fp.oldestPending(), time.Now())
	f.deps.Totals.Add(int64(q.h.NumRecords), int64(len(q.data)))
	f.applySkips(fp)
}

// oldestPending is the first timestamp of the partition's oldest batch
// fetched and not acknowledged (sent first, then queued), 0 when none.
func (fp *Part) oldestPending() int64 {
	for _, l := range [][]*qbatch{fp.sent, fp.queue} {
		for _, q := range l {
			if !q.skip {
				return q.h.FirstTimestamp
			}
		}
	}
	return 0
}

// retry waits a backoff before the partition sends its queue head again.
func (f *Forwarder) retry(fp *Part, now time.Time) {
	fp.notBefore = now.Add(RetryBackoff)
	if !fp.stuck {
		fp.stuck = true // until a batch is acknowledged again
		f.detach(fp, 0)
	}
}
