package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkaclient"
)

// codec returns franz-go's codec for a Java compression.type name.
func codec(name string) (kgo.CompressionCodec, bool) { return kafkaclient.Codec(name) }

// sourceLinger is the linger of the harness's producers: Kafka 4's Java default (linger.ms=5),
// so the source holds batches shaped as a Java application's would be.
const sourceLinger = 5 * time.Millisecond

// producerOpts are the options of every load producer: the codec under test, explicit
// partitions (the generator picks them) and acks=all with idempotence, franz-go's default.
func producerOpts(bootstrap, codecName string) []kgo.Opt {
	c, _ := codec(codecName)
	return []kgo.Opt{
		kgo.SeedBrokers(bootstrap),
		kgo.ProducerBatchCompression(c),
		kgo.ProducerLinger(sourceLinger),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ClientID("strait-bench-producer"),
	}
}

// generator makes the records of every run. Values are slices of a corpus of JSON-like
// event lines: compressible as real event data is (random bytes would defeat every codec,
// repeated bytes would flatter it). Record i has key i%keys and goes to partition
// (i%keys)%partitions, or to i%partitions with null keys, or to i/contiguous when
// contiguous is set.
type generator struct {
	corpus     []byte
	size       int
	keys       int
	partitions int
	// contiguous, when positive, sends records in runs of this many to one partition after
	// the other: a few records per partition then still fill whole batches (the memory mode
	// writes thousands of partitions, and one record per partition per batch is very slow).
	contiguous int
}

func newGenerator(size, keys, partitions int) *generator {
	const corpusBytes = 4 << 20
	r := rand.New(rand.NewPCG(1, 2)) // fixed seed: every run and tool sees the same data
	events := []string{"page_view", "click", "add_to_cart", "checkout", "search", "login", "logout", "purchase"}
	pages := []string{"home", "catalog", "product", "cart", "account", "help", "search", "orders"}
	agents := []string{"Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5)", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5)", "curl/8.5.0"}
	b := make([]byte, 0, corpusBytes+size+256)
	for len(b) < corpusBytes+size {
		b = fmt.Appendf(b, `{"id":%d,"user":"user-%06d","event":%q,"page":"/%s/%d","amount":%d.%02d,"session":"%016x","agent":%q}`+"\n",
			r.Int64N(1e12), r.IntN(1_000_000), events[r.IntN(len(events))], pages[r.IntN(len(pages))], r.IntN(100_000),
			r.IntN(10_000), r.IntN(100), r.Uint64(), agents[r.IntN(len(agents))])
	}
	return &generator{corpus: b, size: size, keys: keys, partitions: partitions}
}

// partitionOf returns the partition of record i.
func (g *generator) partitionOf(i int64) int32 {
	if g.contiguous > 0 {
		return int32((i / int64(g.contiguous)) % int64(g.partitions))
	}
	if g.keys == 0 {
		return int32(i % int64(g.partitions))
	}
	return int32((i % int64(g.keys)) % int64(g.partitions))
}

func (g *generator) key(i int64) []byte {
	if g.keys == 0 {
		return nil
	}
	return strconv.AppendInt([]byte("key-"), i%int64(g.keys), 10)
}

// backlog returns record i of a bulk load: its value shares the corpus (never written to).
func (g *generator) backlog(topic string, i int64) *kgo.Record {
	off := int((uint64(i) * 7919) % uint64(len(g.corpus)-g.size))
	return &kgo.Record{Topic: topic, Partition: g.partitionOf(i), Key: g.key(i), Value: g.corpus[off : off+g.size : off+g.size]}
}

// stamped returns record i with "<i>|" at the start of its value, so consumers on both
// clusters can tell records apart and match them.
func (g *generator) stamped(topic string, i int64) *kgo.Record {
	r := g.backlog(topic, i)
	v := strconv.AppendInt(make([]byte, 0, g.size), i, 10)
	v = append(v, '|')
	if len(v) < g.size {
		v = append(v, r.Value[:g.size-len(v)]...)
	}
	r.Value = v
	return r
}

// stampOf returns the number at the start of a stamped value, or -1.
func stampOf(v []byte) int64 {
	for j, c := range v {
		if c == '|' {
			n, err := strconv.ParseInt(string(v[:j]), 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// payloadBytes is what a record counts toward MB/s: key plus value.
func payloadBytes(r *kgo.Record) int64 { return int64(len(r.Key) + len(r.Value)) }

// produceResult is one bulk produce: what was written and how fast.
type produceResult struct {
	Records      int64   `json:"records"`
	PayloadBytes int64   `json:"payload_bytes"`
	Seconds      float64 `json:"seconds"`
	ClientCPU    float64 `json:"client_cpu_s"`
	// FirstRecordSeconds is when a consumer received its first record (consumeAll).
	FirstRecordSeconds float64 `json:"first_record_s,omitempty"`
}

// produceBacklog writes n records with the generator and waits for every acknowledgement.
// With several topics, the generator's partitions are the topics' partitions one topic
// after the other. The client's buffer limit (MaxBufferedRecords) makes Produce block:
// memory stays bounded.
func produceBacklog(ctx context.Context, cl *kgo.Client, g *generator, topics []string, n int) (produceResult, error) {
	return produceRange(ctx, cl, g, topics, 0, int64(n))
}

// produceMixed writes n records in chunks of chunk records, alternating between the
// clients after each chunk (flushed before the next starts), so that the batches of every
// partition alternate between the clients' codecs.
func produceMixed(ctx context.Context, cls []*kgo.Client, g *generator, topics []string, n, chunk int) (produceResult, error) {
	var res produceResult
	cpu0, began := selfCPU(), time.Now()
	for i, from := 0, int64(0); from < int64(n); i, from = i+1, from+int64(chunk) {
		pr, err := produceRange(ctx, cls[i%len(cls)], g, topics, from, min(from+int64(chunk), int64(n)))
		res.Records += pr.Records
		res.PayloadBytes += pr.PayloadBytes
		if err != nil {
			return res, err
		}
	}
	res.Seconds = time.Since(began).Seconds()
	res.ClientCPU = selfCPU() - cpu0
	return res, nil
}

// produceRange writes records from..to-1 and waits for their acknowledgements.
func produceRange(ctx context.Context, cl *kgo.Client, g *generator, topics []string, from, to int64) (produceResult, error) {
	var (
		mu       sync.Mutex
		firstErr error
		failed   atomic.Int64
	)
	perTopic := int32(max(1, g.partitions/len(topics)))
	cpu0, began := selfCPU(), time.Now()
	var res produceResult
	for i := from; i < to; i++ {
		if ctx.Err() != nil {
			break
		}
		r := g.backlog(topics[0], i)
		if len(topics) > 1 {
			r.Topic, r.Partition = topics[r.Partition/perTopic], r.Partition%perTopic
		}
		res.PayloadBytes += payloadBytes(r)
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("producing to %q partition %d: %w", r.Topic, r.Partition, err)
				}
				mu.Unlock()
			}
		})
		res.Records++
	}
	if err := cl.Flush(ctx); err != nil {
		return res, fmt.Errorf("waiting for the acknowledgements of %q: %w", topics[0], err)
	}
	res.Seconds = time.Since(began).Seconds()
	res.ClientCPU = selfCPU() - cpu0
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if firstErr != nil {
		return res, fmt.Errorf("%d of %d records failed; first: %w", failed.Load(), to-from, firstErr)
	}
	return res, nil
}
