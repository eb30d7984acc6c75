package mirror

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/mirror/flow"
)

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
			if p == nil || p.Failed() != nil {
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
				if m.throttle.Wait(ctx, n) != nil {
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
	if p.Failed() != nil || p.removed.Load() {
		rp.drop(p)
		return
	}
	if !m.deps.Share.Leased() {
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
			if p.Stop(err) {
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
		m.errors.Count(flow.SideProduce, err)
		if p.failRecord(rc.src, m.produceError(p, rc.src, r, err)) {
			m.log.Error("partition stopped", "topic", p.topic.Source, "partition", p.num, "err", p.Failed())
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
	m.totals.Add(1, rc.size)
}

// produceError explains why the record at source offset src was not
// written. A record the target refuses for its size is never skipped: the
// error names its offset, its size, the limit and the fix.
func (m *Mirror) produceError(p *partition, src int64, r *kgo.Record, err error) error {
	if flow.Classify(err) == flow.Shutdown {
		return err // the flow is stopping: copied again after a restart
	}
	if flow.TooLarge(err) {
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
	m.errors.Count(flow.SideFetch, err)
	switch flow.Classify(err) {
	case flow.Shutdown:
		return
	case flow.Retry:
		return // the consumer retries by itself
	case flow.Truncated:
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		logStart, lerr := m.logStart(lctx, p.topic.Source, p.num)
		cancel()
		err = truncationError(p, p.uncopied(), logStart, lerr, err)
	default:
		err = fmt.Errorf("reading %s[%d]: %w", p.topic.Source, p.num, err)
	}
	if p.Stop(err) {
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
	return flow.TruncationError(p.topic.Source, p.num, next, logStart, listErr, err)
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
