//go:build faults

package faults

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

const (
	// compactedRSSCap is the peak RSS Strait may reach copying the compacted topic: the
	// record path's peak at full throughput in the benchmarks (217 MiB with lz4, 153 MiB
	// without), with room to spare; the fast path, which rebuilds the batches with holes,
	// peaked at 41 MiB here. An offset index that grows with every compaction hole
	// (half a million here), or buffers that grow with the number of records rather than
	// their bytes, do not fit in it.
	compactedRSSCap = 256 << 20
	// compactedHeapCap is the live heap Strait may keep once it copied everything: what
	// stays is the offset index and the clients, not the copy's buffers.
	compactedHeapCap = 64 << 20
)

// TestCompactedMillionKeys copies a compacted topic of 1,000,000 keys after the cleaner
// removed half a million overwritten records, leaving a hole at every other offset, and
// checks that Strait's peak RSS stays bounded while everything is copied in order.
func TestCompactedMillionKeys(t *testing.T) {
	// An alias of its own: this flow's offset index (strait-index.K.internal) and progress
	// group are not shared with the other tests.
	f := flow{alias: "K", src: source(), dst: target()}
	topic := kafkatest.Name(t, "compacted")
	str := func(s string) *string { return &s }
	f.src.CreateTopic(t, topic, 1, map[string]*string{
		"cleanup.policy":            str("compact"),
		"segment.bytes":             str("1048576"),
		"min.cleanable.dirty.ratio": str("0.01"),
		"min.compaction.lag.ms":     str("0"),
	})
	const keys = 1_000_000
	const fillers = 100_000 // more than the two segments of 1 MiB at the end
	began := time.Now()
	// One producer for both: the cleaner keeps each producer's last batch whole, and the
	// second pass's last batch has only live records.
	cl := f.src.Client(t,
		kgo.ProducerLinger(20*time.Millisecond),
		kgo.MaxBufferedRecords(200_000),
		kgo.ProducerBatchMaxBytes(1<<20),
	)
	produceKeys(t, cl, topic, 0, keys, 1) // every key
	produceKeys(t, cl, topic, 0, keys, 2) // every other key again: the first copies become holes
	// The cleaner never cleans the active segment, and it keeps the first copy of every key
	// whose second copy is still there: push the second copies out of it with new keys.
	produceKeys(t, cl, topic, keys, fillers, 1)
	t.Logf("wrote %d records in %v", keys+keys/2+fillers, time.Since(began).Round(100*time.Millisecond))

	// Copy only once the cleaner is done: a record it removed after Strait copied it would
	// be on the target but no longer in the source log the checker reads. Done is one record
	// per key: the even keys' first records and the odd keys' second ones.
	began = time.Now()
	before := logSize(t, f.src, topic)
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		var n int
		kafkatest.Scan(t, f.src.Seeds(), topic, kgo.ReadCommitted(), func(*kgo.Record) { n++ }, nil)
		if n != keys+fillers {
			return fmt.Errorf("%s holds %d records for %d keys: not compacted yet", topic, n, keys+fillers)
		}
		return nil
	})
	t.Logf("the cleaner compacted %s from %d to %d bytes in %v", topic, before, logSize(t, f.src, topic), time.Since(began).Round(100*time.Millisecond))

	s := startStrait(t, "run", f.config(t, topic), "--shutdown-timeout", "10s", "--debug-addr", "127.0.0.1:0")
	t.Logf("copied in %v", waitCaughtUp(t, f, topic, nil, 3*time.Minute).Round(100*time.Millisecond))
	peak := s.peakRSS(t)
	live := s.liveHeap(t)
	stopCleanly(t, s)
	for _, l := range s.logs() {
		if l.attrs["msg"] == "partition continues on the record path" {
			t.Errorf("the compacted topic left the fast path: %v", l.attrs)
		}
	}
	reps := verifyTopic(t, f, topic)
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	t.Logf("strait copying %d records of %d keys with 500,000 holes: peak RSS %.0f MiB (cap %d), live heap after the copy %.1f MiB (cap %d)",
		reps[0].Source, keys+fillers, mib(peak), compactedRSSCap>>20, mib(live), compactedHeapCap>>20)
	if peak > compactedRSSCap {
		t.Errorf("strait's peak RSS was %.0f MiB, beyond %d MiB", mib(peak), compactedRSSCap>>20)
	}
	if live > compactedHeapCap {
		t.Errorf("strait keeps a live heap of %.0f MiB after copying, beyond %d MiB: memory grows with the compacted topic's holes", mib(live), compactedHeapCap>>20)
	}
}

// liveHeap returns the bytes of strait's heap that are live after a garbage collection,
// read from its pprof server (run with --debug-addr).
func (s *strait) liveHeap(t *testing.T) int64 {
	t.Helper()
	var addr string
	for _, l := range s.logs() {
		if l.attrs["msg"] == "serving pprof" {
			addr, _ = l.attrs["addr"].(string)
		}
	}
	if addr == "" {
		t.Fatal("strait did not log the address of its pprof server")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/heap?gc=1&debug=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("reading strait's heap profile: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading strait's heap profile: %v", err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, "# HeapAlloc = "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			if err != nil {
				t.Fatalf("parsing %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no HeapAlloc in strait's heap profile (HTTP %s)", resp.Status)
	return 0
}

// produceKeys writes a small record for every step-th key of from..from+keys-1 with cl,
// fast.
func produceKeys(t *testing.T, cl *kgo.Client, topic string, from, keys, step int) {
	t.Helper()
	base := time.Now().Add(-time.Hour).UnixMilli()
	var firstErr error
	errs := make(chan error, 1)
	for k := from; k < from+keys; k += step {
		r := &kgo.Record{
			Topic:     topic,
			Key:       []byte(fmt.Sprintf("key-%07d", k)),
			Value:     []byte("v" + strconv.Itoa(step) + "-" + strconv.Itoa(k)),
			Timestamp: time.UnixMilli(base + int64(k)),
		}
		cl.Produce(context.Background(), r, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("producing to %s: %v", topic, err)
	}
	select {
	case firstErr = <-errs:
		t.Fatalf("producing to %s: %v", topic, firstErr)
	default:
	}
}

// logSize is the size of topic's partition 0 on the broker's disk.
func logSize(t *testing.T, c *kafkatest.Cluster, topic string) int64 {
	t.Helper()
	dirs, err := c.Admin(t).DescribeAllLogDirs(t.Context(), kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatalf("describing the log dirs of %s: %v", topic, err)
	}
	var size int64
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if p.Topic == topic {
				size += p.Size
			}
		})
	})
	return size
}
