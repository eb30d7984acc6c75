package fastpath

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
)

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
func (f *Forwarder) startFetches(ctx context.Context, now time.Time) {
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
func (f *Forwarder) fetch(ctx context.Context, src int32, keys []tp, now time.Time) (sent bool) {
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
	var split map[tp]bool        // partitions that keep offsets: rebuilt batches split at holes
	for key, fp := range parts {
		if fp.keep {
			if split == nil {
				split = map[tp]bool{}
			}
			split[key] = true
		}
	}
	f.spawn(func() any {
		resp, err := cl.Broker(int(src)).Request(ctx, req)
		fd := fetchDone{broker: src, conn: conn, session: session, shaped: shaped, parts: parts, at: at, reserved: reserved, err: err}
		if err == nil {
			fd.resp = resp.(*kmsg.FetchResponse)
			if n := responseBytes(fd.resp); n > 0 && f.deps.Throttle != nil {
				if werr := f.deps.Throttle.Wait(ctx, n); werr != nil {
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
				fd.rebuilt = prepareResponse(fd.resp, idNames, at, split, f.cfg.compression()) // recode.go
			}
		}
		return fd
	})
	return true
}

// concurrentFetchMin is the least a fetch must be able to ask for while
// another to the same broker is in flight: half of what the partitions
// behind in one fetch may ask for.
func (f *Forwarder) concurrentFetchMin() int64 { return f.behindPerFetch() / 2 }

// behindPerFetch is what the partitions behind in one fetch may ask for
// together: a share of the budget such that a fetch on every connection to
// a broker fits in it at once, at most one response.
func (f *Forwarder) behindPerFetch() int64 {
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
func (f *Forwarder) behindLimit(total, largest int64, slots fetchSlots) int64 {
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
func (f *Forwarder) budget() int64 {
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
func (f *Forwarder) sourceAnswered(d time.Duration) {
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
func (f *Forwarder) fetchRequest(keys []tp, now time.Time, slots fetchSlots) (*kmsg.FetchRequest, map[tp]*Part, map[tp]int64, map[int32]int64) {
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
	parts := make(map[tp]*Part, len(cands))
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
	fp     *Part
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
func (f *Forwarder) fetchable(fp *Part, now time.Time) (dst, room int32, ok bool) {
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
func (f *Forwarder) fetchRoom(fp *Part, now time.Time) int32 {
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
func (f *Forwarder) askOf(fp *Part) int32 {
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
func (f *Forwarder) grow(fp *Part, n int, next, end int64) {
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
func (f *Forwarder) shareLeft(dst int32) int64 {
	return f.share - f.used[dst] - f.reserved[dst]
}

// shares returns each target broker's share of buffer.memory and the bytes
// fetched and not yet acknowledged per target broker (-1 for partitions
// without a known leader), so that partitions whose target broker is dead
// or leaderless hold at most their share and the others keep flowing.
func (f *Forwarder) shares() (share int64, used map[int32]int64) {
	used = map[int32]int64{}
	for _, fp := range f.parts {
		used[f.targetLeader(fp)] += int64(fp.queueBytes) // includes the batch in flight
	}
	return f.budget() / int64(max(len(used), 1)), used
}

func (f *Forwarder) targetLeader(fp *Part) int32 {
	leader, _ := leaderOf(f.dstMeta, fp.p.Remote(), fp.p.Partition())
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
