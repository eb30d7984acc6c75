//go:build faults

package faults

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
	"strait/internal/verify"
)

// load writes numbered records to every partition of a topic, independently of Strait:
// each record carries its partition's sequence number in a "seq" header and its value, and
// the load remembers the source offset the broker acknowledged for each, so that a
// sequence number seen on the target can be placed in the source log.
type load struct {
	topic      string
	partitions int32
	cl         *kgo.Client
	base       int64  // the first record's timestamp, ms
	pad        int    // bytes of padding per value
	tag        string // starts every value: tells apart loads of one topic name

	mu      sync.Mutex
	seq     []int64   // partition -> next sequence number
	offsets [][]int64 // partition -> sequence number -> acknowledged source offset, -1 until then
	err     error     // the first produce error

	stopOnce sync.Once
	stopCh   chan struct{}
	wg       sync.WaitGroup
	running  bool
}

// newLoad returns a load of topic on c (through the broker's own listener, never a proxy).
// Values are about pad bytes long. opts add to the producer client (transactions).
func newLoad(t *testing.T, c *kafkatest.Cluster, topic string, partitions int32, pad int, opts ...kgo.Opt) *load {
	t.Helper()
	l := &load{
		topic: topic, partitions: partitions, pad: pad,
		base:    time.Now().Add(-time.Hour).UnixMilli(),
		seq:     make([]int64, partitions),
		offsets: make([][]int64, partitions),
		stopCh:  make(chan struct{}),
	}
	l.cl = c.Client(t, append([]kgo.Opt{
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.MaxBufferedRecords(20_000),
		// A broker that restarts (TestBrokerBounce) may close a new connection right
		// after its first request; franz-go fails the records then unless told that
		// such an EOF is retriable (the load's producer has no SASL to get wrong).
		kgo.AlwaysRetryEOF(),
	}, opts...)...)
	t.Cleanup(func() { l.stop(t) })
	return l
}

// record makes the next record of partition p and registers it; call with l.mu held.
func (l *load) record(p int32) *kgo.Record {
	s := l.seq[p]
	l.seq[p]++
	l.offsets[p] = append(l.offsets[p], -1)
	return l.make(p, s)
}

// make returns record s of partition p, as the load writes it.
func (l *load) make(p int32, s int64) *kgo.Record {
	v := fmt.Appendf(nil, "%s%s/%d/%d/", l.tag, l.topic, p, s)
	r := &kgo.Record{
		Topic:     l.topic,
		Partition: p,
		Key:       []byte("k-" + strconv.FormatInt(s%997, 10)),
		Value:     padding(v, l.pad, uint64(p)<<40|uint64(s)),
		Timestamp: time.UnixMilli(l.base + s),
		Headers:   []kgo.RecordHeader{{Key: "seq", Value: []byte(strconv.FormatInt(s, 10))}},
	}
	if s%97 == 0 {
		r.Key = nil
	}
	return r
}

// padding appends letters to v up to n bytes, pseudo-random from seed, so that values do
// not compress: a bandwidth cap on a link then caps the records too.
func padding(v []byte, n int, seed uint64) []byte {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	x := seed*0x9E3779B97F4A7C15 + 1
	for len(v) < n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v = append(v, letters[x%uint64(len(letters))])
	}
	return v
}

// promise records an acknowledgement.
func (l *load) promise(r *kgo.Record, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		if l.err == nil {
			l.err = fmt.Errorf("producing to %s[%d]: %w", r.Topic, r.Partition, err)
		}
		return
	}
	s, _ := strconv.ParseInt(string(r.Headers[0].Value), 10, 64)
	l.offsets[r.Partition][s] = r.Offset
}

// produce writes n records, round robin over the partitions, and waits for them.
func (l *load) produce(t *testing.T, n int) {
	t.Helper()
	l.produceTo(t, n, nil)
}

// produceTo is produce to the given partitions only (all when nil).
func (l *load) produceTo(t *testing.T, n int, partitions []int32) {
	t.Helper()
	if partitions == nil {
		for p := range l.partitions {
			partitions = append(partitions, p)
		}
	}
	for i := range n {
		l.mu.Lock()
		r := l.record(partitions[i%len(partitions)])
		l.mu.Unlock()
		l.cl.Produce(context.Background(), r, l.promise)
	}
	l.flush(t)
}

func (l *load) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := l.cl.Flush(ctx); err != nil {
		t.Fatalf("waiting for the load's records to %s: %v", l.topic, err)
	}
	if err := l.firstErr(); err != nil {
		t.Fatal(err)
	}
}

func (l *load) firstErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// start writes about rate records a second in the background, until stop or limit records.
func (l *load) start(t *testing.T, rate, limit int) {
	t.Helper()
	const tick = 20 * time.Millisecond
	perTick := max(1, rate*int(tick)/int(time.Second))
	l.running = true
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		ticker := time.NewTicker(tick)
		defer ticker.Stop()
		var p int32
		for n := 0; n < limit; {
			select {
			case <-l.stopCh:
				return
			case <-ticker.C:
			}
			for range min(perTick, limit-n) {
				l.mu.Lock()
				r := l.record(p)
				l.mu.Unlock()
				// Blocks while the producer's buffer is full (the source is down).
				l.cl.Produce(context.Background(), r, l.promise)
				p = (p + 1) % l.partitions
				n++
			}
		}
	}()
}

// stop ends the background writing and waits for every record it wrote; it returns the
// number of records written. It may be called more than once.
func (l *load) stop(t *testing.T) int64 {
	t.Helper()
	l.stopOnce.Do(func() {
		close(l.stopCh)
		l.wg.Wait()
		if l.running {
			l.flush(t)
		}
	})
	return l.total()
}

// total is the number of records written so far.
func (l *load) total() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, s := range l.seq {
		n += s
	}
	return n
}

// after returns the source offset after record seq of partition p: where a copy of the
// partition up to that record ends in the source log.
func (l *load) after(p int32, seq int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq < 0 {
		return 0
	}
	for s := min(seq, int64(len(l.offsets[p]))-1); s >= 0; s-- {
		if o := l.offsets[p][s]; o >= 0 {
			return o + 1
		}
	}
	return 0
}

// seqOf returns the sequence number of a record of a load, or -1.
func seqOf(r *kgo.Record) int64 {
	for _, h := range r.Headers {
		if h.Key == "seq" {
			if s, err := strconv.ParseInt(string(h.Value), 10, 64); err == nil {
				return s
			}
		}
	}
	return -1
}

// windowLag is how far back the window reads stored progress: a commit interval (1 s)
// and more, so that the window at a sample covers a re-send that starts just before it.
const windowLag = 1500 * time.Millisecond

// window measures, while Strait runs, the records of a topic it has copied but not yet
// covered by stored progress: what a re-send after a fault may copy a second time. A test
// calls fault at each fault it injects; the bound on duplicates of a partition is the sum,
// over the faults, of the largest window between that fault and the next.
type window struct {
	f    flow
	l    *load
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu      sync.Mutex
	episode int
	samples []sample
}

type sample struct {
	at      time.Time
	episode int
	copied  []int64 // partition -> highest sequence number seen on the target, -1 for none
	stored  []int64 // partition -> stored progress (a source offset)
}

// startWindow starts measuring the window of l's topic, replicated by f.
func startWindow(t *testing.T, f flow, l *load) *window {
	t.Helper()
	w := &window{f: f, l: l}
	w.ctx, w.stop = context.WithCancel(context.Background())
	follower := f.dst.Client(t,
		kgo.ConsumeTopics(f.remote(l.topic)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(100*time.Millisecond),
	)
	adm := f.dst.Admin(t)
	w.wg.Add(1)
	go w.run(follower, adm)
	t.Cleanup(w.end)
	return w
}

func (w *window) run(follower *kgo.Client, adm *kadm.Client) {
	defer w.wg.Done()
	copied := make([]int64, w.l.partitions)
	stored := make([]int64, w.l.partitions)
	for i := range copied {
		copied[i] = -1
	}
	remote := w.f.remote(w.l.topic)
	for w.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(w.ctx, 100*time.Millisecond)
		fs := follower.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			if !bytes.HasPrefix(r.Value, []byte(w.l.tag)) {
				return // another load's record: the other origin of an active-active topic
			}
			if s := seqOf(r); int(r.Partition) < len(copied) && s > copied[r.Partition] {
				copied[r.Partition] = s
			}
		})
		ctx, cancel = context.WithTimeout(w.ctx, 500*time.Millisecond)
		resps, err := adm.FetchOffsets(ctx, w.f.group())
		cancel()
		if err == nil {
			resps.Each(func(o kadm.OffsetResponse) {
				if o.Topic == remote && o.Err == nil && int(o.Partition) < len(stored) {
					stored[o.Partition] = o.At
				}
			})
		}
		w.mu.Lock()
		w.samples = append(w.samples, sample{at: time.Now(), episode: w.episode, copied: slices.Clone(copied), stored: slices.Clone(stored)})
		w.mu.Unlock()
	}
}

// fault starts a new episode: a fault is injected now.
func (w *window) fault() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.episode++
}

// end stops measuring; it may be called more than once.
func (w *window) end() {
	w.stop()
	w.wg.Wait()
}

// bounds stops measuring and returns, per partition, the number of duplicates a fault
// may cause: the sum over the faults of the largest window after each. It also describes
// the windows of each fault, for the test's log.
func (w *window) bounds() ([]int64, string) {
	w.end()
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]int64, w.l.partitions)
	perFault := map[int]int64{}
	for p := range w.l.partitions {
		largest := map[int]int64{}
		for i, s := range w.samples {
			if s.episode == 0 {
				continue
			}
			// The progress stored windowLag before this sample, 0 before any.
			var stored int64
			for j := i; j >= 0; j-- {
				if !w.samples[j].at.After(s.at.Add(-windowLag)) {
					stored = w.samples[j].stored[p]
					break
				}
			}
			if win := w.l.after(p, s.copied[p]) - stored; win > largest[s.episode] {
				largest[s.episode] = win
			}
		}
		for e, n := range largest {
			out[p] += n
			perFault[e] += n
		}
	}
	var desc []string
	for _, e := range slices.Sorted(maps.Keys(perFault)) {
		desc = append(desc, strconv.FormatInt(perFault[e], 10))
	}
	return out, fmt.Sprintf("%d samples; largest windows after each fault, summed over the partitions: %s", len(w.samples), strings.Join(desc, ", "))
}

// storedProgress reads the flow's stored progress of topic's replica.
func storedProgress(t *testing.T, f flow, topic string) (map[int32]int64, error) {
	resps, err := f.dst.Admin(t).FetchOffsets(t.Context(), f.group())
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	remote := f.remote(topic)
	resps.Each(func(o kadm.OffsetResponse) {
		if o.Topic == remote && o.Err == nil {
			out[o.Partition] = o.At
		}
	})
	return out, nil
}

// waitCaughtUp waits until Strait's stored progress reached the source's end offsets in
// the given partitions of topic (all when nil): everything was copied and acknowledged.
// It returns how long that took.
func waitCaughtUp(t *testing.T, f flow, topic string, partitions []int32, timeout time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	want := f.src.EndOffsets(t, topic, kgo.ReadUncommitted())
	if partitions == nil {
		partitions = slices.Sorted(maps.Keys(want))
	}
	kafkatest.Eventually(t, timeout, func() error {
		got, err := storedProgress(t, f, topic)
		if err != nil {
			return err
		}
		var behind []string
		for _, p := range partitions {
			if got[p] < want[p] {
				behind = append(behind, fmt.Sprintf("[%d] at %d of %d", p, got[p], want[p]))
			}
		}
		if len(behind) > 0 {
			return fmt.Errorf("%s: progress %s", f.remote(topic), strings.Join(behind, ", "))
		}
		return nil
	})
	return time.Since(began)
}

// scan reads the given partitions of topic on c (all when nil) into a checker per
// partition: as source (isTarget false) or as target.
func scan(t *testing.T, c *kafkatest.Cluster, topic string, partitions []int32, checkers map[int32]*verify.Checker, isTarget bool) {
	t.Helper()
	add := func(r *kgo.Record) {
		ch := checkers[r.Partition]
		if ch == nil {
			ch = verify.NewChecker(r.Partition)
			checkers[r.Partition] = ch
		}
		if isTarget {
			ch.Target(r)
		} else {
			ch.Source(r)
		}
	}
	if partitions == nil {
		kafkatest.Scan(t, c.Seeds(), topic, kgo.ReadCommitted(), add, nil)
	} else {
		kafkatest.ScanPartitions(t, c.Seeds(), topic, kgo.ReadCommitted(), partitions, add)
	}
}

// verifyTopic compares topic on the flow's source (read_committed) with its replica, with
// the sequence checker: every partition must have every record, in order, and nothing
// else. It returns the reports.
func verifyTopic(t *testing.T, f flow, topic string) []verify.Report {
	t.Helper()
	return verifyPartitions(t, f, topic, nil, nil)
}

// verifyWindow is verifyTopic with each partition's duplicates capped by the window w
// measured.
func verifyWindow(t *testing.T, f flow, topic string, w *window) []verify.Report {
	t.Helper()
	bounds, desc := w.bounds()
	t.Logf("%s: %s", topic, desc)
	return verifyPartitions(t, f, topic, nil, bounds)
}

// verifyPartitions is verifyTopic for the given partitions only (all when nil).
func verifyPartitions(t *testing.T, f flow, topic string, partitions []int32, bounds []int64) []verify.Report {
	t.Helper()
	checkers := map[int32]*verify.Checker{}
	scan(t, f.src, topic, partitions, checkers, false)
	scan(t, f.dst, f.remote(topic), partitions, checkers, true)
	if partitions == nil {
		partitions = slices.Sorted(maps.Keys(checkers))
	}
	var reps []verify.Report
	var records, dups, bound int
	for _, p := range partitions {
		if checkers[p] == nil {
			checkers[p] = verify.NewChecker(p)
		}
		rep := checkers[p].Report()
		reps = append(reps, rep)
		records += rep.Source
		dups += rep.Duplicates
		if !rep.OK() {
			t.Errorf("%s -> %s: %v", topic, f.remote(topic), rep)
		}
		if bounds != nil {
			b := int64(0)
			if int(p) < len(bounds) {
				b = bounds[p]
			}
			bound += int(b)
			if int64(rep.Duplicates) > b {
				t.Errorf("%s[%d]: %d duplicates (%d replays), beyond the %d records copied but not committed when the faults hit", topic, p, rep.Duplicates, rep.Replays, b)
			}
		}
	}
	if bounds != nil {
		t.Logf("%s: %d records, %d duplicates (the uncommitted windows at the faults held %d)", topic, records, dups, bound)
	} else {
		t.Logf("%s: %d records, %d duplicates", topic, records, dups)
	}
	return reps
}
