package fastpath

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A partition fetches again while up to one ask is still queued, asking
// for what two asks leave, so that over a long link its next response is
// on its way while the last one is written. (It used to fetch only with
// less than one ask queued and for the rest of it: crumbs, one per round
// trip; 31 MB/s over a 150 ms link that carried 139.)
func TestPartitionFetchesAgainWithOneAskQueued(t *testing.T) {
	x := newFastFixture(0)
	x.f.cfg.PartitionFetchSize, x.f.cfg.MaxAsk = 1000, 4000
	now := time.Now()
	if room := x.f.fetchRoom(x.fp, now); room != 2000 {
		t.Fatalf("room %d with nothing queued, want two asks, 2000", room)
	}
	x.f.cfg.MaxAsk = 1000 // the user's max.partition.fetch.bytes
	if room := x.f.fetchRoom(x.fp, now); room != 1000 {
		t.Fatalf("room %d with nothing queued, want max.partition.fetch.bytes, 1000", room)
	}
	x.f.cfg.MaxAsk = 4000
	x.f.hold(x.fp, 1000)
	if room := x.f.fetchRoom(x.fp, now); room != 1000 {
		t.Fatalf("room %d with one ask queued, want 1000", room)
	}
	x.f.hold(x.fp, 1)
	if room := x.f.fetchRoom(x.fp, now); room != 0 {
		t.Fatalf("room %d with more than one ask queued, want none", room)
	}
}

// The ask doubles while responses come back at least half full with more
// behind, up to a quarter of buffer.memory, and falls back to the first
// ask once the partition caught up: a long poll reserves all it asks.
func TestAskFollowsTheLinkAndResetsWhenCaughtUp(t *testing.T) {
	f := New(Config{MaxBuffered: 32 << 20, LinkBuffer: LongLinkBuffer, FetchMaxBytes: 50 << 20, Codec: -1}, Deps{Log: testFlow().log})
	fp := NewPart(testPartition(), 0)
	const mib = 1 << 20
	if f.askOf(fp) != mib || f.cfg.MaxAsk != 8*mib {
		t.Fatalf("first ask %d, max %d; want 1 MiB (Kafka's default) and 8 MiB (buffer.memory/4)", f.askOf(fp), f.cfg.MaxAsk)
	}
	f.grow(fp, mib/2-1, 10, 100)
	if f.askOf(fp) != mib {
		t.Fatalf("ask %d after a response under half full, want it kept", f.askOf(fp))
	}
	for _, want := range []int32{2 * mib, 4 * mib, 8 * mib, 8 * mib} {
		f.grow(fp, int(f.askOf(fp)), 10, 100)
		if f.askOf(fp) != want {
			t.Fatalf("ask %d after a full response with more behind, want %d", f.askOf(fp), want)
		}
	}
	f.grow(fp, int(f.askOf(fp)), 100, 100)
	if f.askOf(fp) != mib {
		t.Fatalf("ask %d once caught up, want the first ask again", f.askOf(fp))
	}
}

// The wiring: a full response with records behind it raises the ask.
func TestFullResponseRaisesTheAsk(t *testing.T) {
	x := newFastFixture(0)
	x.f.cfg.PartitionFetchSize, x.f.cfg.MaxAsk = 100, 1000
	x.fetched(t.Context(), fetchResp("t", encodeBatch(0, 10, 0, -1, nil))) // high watermark 100
	if x.fp.ask != 200 {
		t.Fatalf("ask %d after a full response at 10 of 100, want 200", x.fp.ask)
	}
}

// A max.partition.fetch.bytes the user set is every ask.
func TestAskSetByTheUserNeverGrows(t *testing.T) {
	f := New(Config{MaxBuffered: 32 << 20, LinkBuffer: LongLinkBuffer, FetchMaxBytes: 50 << 20, Codec: -1, PartitionFetchSize: 600}, Deps{Log: testFlow().log})
	fp := NewPart(testPartition(), 0)
	f.grow(fp, 600, 10, 100)
	if f.askOf(fp) != 600 {
		t.Fatalf("ask %d, want the user's 600", f.askOf(fp))
	}
}

// While a fetch to a broker is in flight, another goes out only when it
// may ask for at least half a response: fetches of a partition or two
// each would take every connection and hold buffer.memory for crumbs.
func TestConcurrentFetchNeedsABigAsk(t *testing.T) {
	m := testFlow()
	f := New(Config{FetchMaxBytes: 50 << 20, Codec: -1, MaxBuffered: 64 << 20}, Deps{Totals: &m.totals, Log: m.log})
	keys := fastPartitions(f, 5)
	if _, parts, _, _ := f.fetchRequest(keys[:3], time.Now(), fetchSlots{inFlight: true}); len(parts) != 0 {
		t.Fatalf("a concurrent fetch of 3 partitions asking 6 MiB went out; want none under %d", f.concurrentFetchMin())
	}
	if _, parts, _, _ := f.fetchRequest(keys, time.Now(), fetchSlots{inFlight: true}); len(parts) != 5 {
		t.Fatalf("a concurrent fetch of 5 partitions asking 10 MiB listed %d, want 5", len(parts))
	}
}

func TestFetchConnsTakeAndRelease(t *testing.T) {
	c := &fetchConns{clients: make([]*kgo.Client, 2), brokers: map[int32][]fetchConn{}}
	if !c.idle(1) || c.inFlight(1) || c.idleCount(1) != 2 {
		t.Fatal("a broker never fetched from is not idle")
	}
	a := c.take(1)
	if c.idleCount(1) != 1 {
		t.Fatalf("%d connections idle after one of two was taken, want 1", c.idleCount(1))
	}
	b := c.take(1)
	if a != 0 || b != 1 || c.take(1) != -1 || c.idle(1) || !c.inFlight(1) {
		t.Fatalf("took %d and %d of 2 connections; a third take or idle said otherwise", a, b)
	}
	if !c.idle(2) {
		t.Fatal("another broker's connections are busy too")
	}
	c.release(1, a)
	if !c.idle(1) || c.take(1) != a {
		t.Fatal("a released connection is not taken again")
	}
}

// A max.partition.fetch.bytes near Java's Integer.MAX_VALUE (kafkaclient
// clamps it to 1 GiB) is "no limit": two asks of it overflowed int32, the
// room came out negative, and the partition never fetched.
func TestHugeAskStillFetches(t *testing.T) {
	x := newFastFixture(0)
	x.f.cfg.PartitionFetchSize, x.f.cfg.MaxAsk = 1<<30, 1<<30
	if room := x.f.fetchRoom(x.fp, time.Now()); room != 1<<30 {
		t.Fatalf("room %d with nothing queued and a 1 GiB max.partition.fetch.bytes, want 1 GiB", room)
	}
}

// Partitions behind are spread over fetches on separate connections, each
// asking at most a quarter of buffer.memory for them, so that
// fetchConnsPerBroker fetches fit in it at once. Listed in one fetch, every
// partition waited for its round trip while the response (16 MiB) carried
// only some of them, and two such fetches took all of buffer.memory: over a
// 150 ms link 88-112 MB/s, where spread fetches moved 122-152
// (bench/linkprobe). Partitions not known to be behind still ride along
// with the first: at 512 partitions, leaving them out made them wait for
// rounds.
func TestPartitionsBehindSpreadOverFetches(t *testing.T) {
	m := testFlow()
	f := New(Config{MaxBuffered: 32 << 20, LinkBuffer: LongLinkBuffer, FetchMaxBytes: 50 << 20, Codec: -1}, Deps{Totals: &m.totals, Log: m.log}) // buffer.memory 32 MiB
	keys := fastPartitions(f, 10)
	const mib = 1 << 20
	for _, key := range keys[:8] { // behind, each asking 2 MiB: room 4 MiB
		fp := f.parts[key]
		fp.ask, fp.active = 2*mib, true
		fp.p.SetEnd(1000)
	}
	var fetches [][]tp
	var reserved int64
	for i := range 5 {
		slots := fetchSlots{idle: max(fetchConnsPerBroker-i, 0), inFlight: i > 0}
		_, parts, _, rooms := f.fetchRequest(keys, time.Now(), slots)
		if len(parts) == 0 {
			break
		}
		fetches = append(fetches, slices.SortedFunc(maps.Keys(parts), compareTP))
		for dst, n := range rooms { // as fetch reserves them
			f.reserved[dst] += n
			reserved += n
		}
	}
	want := [][]tp{{{"t", 0}, {"t", 1}, {"t", 8}, {"t", 9}}, {{"t", 2}, {"t", 3}}, {{"t", 4}, {"t", 5}}, {{"t", 6}, {"t", 7}}}
	if !slices.EqualFunc(fetches, want, slices.Equal) {
		t.Fatalf("fetches %v, want %v: two partitions behind (4 MiB each) per fetch, the idle ones with the first", fetches, want)
	}
	if reserved != 32*mib {
		t.Fatalf("the fetches reserved %d, want all of buffer.memory, 32 MiB", reserved)
	}
}

// With buffer.memory unset, a long link adds LongLinkBuffer to what the fast
// path may hold: by Little's law 32 MiB held for a 150 ms round trip and
// the response's transfer is about 120 MB/s (bench/results/20261205-043110.md),
// where 64 MiB moved 187-356 (long-link/20261205-spread.md). A near source
// keeps 32 MiB (the shortest round trip counts); a buffer.memory the user
// set is the budget, whatever the link.
func TestLongLinkRaisesTheBudget(t *testing.T) {
	const mib = 1 << 20
	f := New(Config{MaxBuffered: 32 << 20, LinkBuffer: LongLinkBuffer, FetchMaxBytes: 50 << 20, Codec: -1}, Deps{Log: testFlow().log})
	if f.budget() != 32*mib {
		t.Fatalf("budget %d before the source answered, want buffer.memory's default, 32 MiB", f.budget())
	}
	f.sourceAnswered(150 * time.Millisecond)
	if f.budget() != 64*mib || f.behindPerFetch() != 16*mib {
		t.Fatalf("budget %d, behind per fetch %d over a 150 ms link, want 64 and 16 MiB", f.budget(), f.behindPerFetch())
	}
	f.sourceAnswered(time.Millisecond)
	f.sourceAnswered(150 * time.Millisecond)
	if f.budget() != 32*mib {
		t.Fatalf("budget %d once the source answered in 1 ms, want 32 MiB", f.budget())
	}

	set := New(Config{FetchMaxBytes: 50 << 20, Codec: -1, MaxBuffered: 48 * mib}, Deps{Log: testFlow().log})
	set.sourceAnswered(150 * time.Millisecond)
	if set.budget() != 48*mib {
		t.Fatalf("budget %d with buffer.memory set to 48 MiB over a long link, want 48 MiB", set.budget())
	}
}

// With max.partition.fetch.bytes set (MM2 tuned's file: 4 MiB, so every
// ask is 4 MiB) eight partitions behind ask 32 MiB in all over a long link,
// where a fetch may carry 16 MiB of them: two fetches of four took them
// all and left two of the four connections idle (at 150 ms 96 MB/s, where
// 123e837's four fetches of 8 MiB moved 108). Spread evenly over the idle
// connections, each fetch carries two.
func TestBehindSpreadEvenlyOverIdleConnections(t *testing.T) {
	m := testFlow()
	const mib = 1 << 20
	f := New(Config{MaxBuffered: 32 << 20, LinkBuffer: LongLinkBuffer, FetchMaxBytes: 50 << 20, Codec: -1, PartitionFetchSize: 4 * mib}, Deps{Totals: &m.totals, Log: m.log})
	f.sourceAnswered(150 * time.Millisecond) // a long link: budget 64 MiB, 16 MiB behind per fetch
	keys := fastPartitions(f, 8)
	for _, key := range keys {
		fp := f.parts[key]
		fp.active = true
		fp.p.SetEnd(1000)
	}
	var fetches [][]tp
	for i := range fetchConnsPerBroker {
		slots := fetchSlots{idle: fetchConnsPerBroker - i, inFlight: i > 0}
		_, parts, _, rooms := f.fetchRequest(keys, time.Now(), slots)
		if len(parts) == 0 {
			break
		}
		fetches = append(fetches, slices.SortedFunc(maps.Keys(parts), compareTP))
		for dst, n := range rooms {
			f.reserved[dst] += n
		}
	}
	want := [][]tp{{{"t", 0}, {"t", 1}}, {{"t", 2}, {"t", 3}}, {{"t", 4}, {"t", 5}}, {{"t", 6}, {"t", 7}}}
	if !slices.EqualFunc(fetches, want, slices.Equal) {
		t.Fatalf("fetches %v, want %v: 32 MiB behind spread over four idle connections", fetches, want)
	}
}
