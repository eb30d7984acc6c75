//go:build integration

package brokerfacts_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
	"strait/internal/kafkatest"
	"strait/internal/mirror/fastpath"
)

// versions are the broker versions the facts are pinned on: the test bed's, and the last
// of the 3.x line.
var versions = []string{"4.1.1", "3.9.1"}

var envs = map[string]*kafkatest.Env{}

func TestMain(m *testing.M) {
	os.Exit(kafkatest.RunVersions(m, kafkatest.Options{Clusters: 1, Heap: "384m", BrokerConfig: map[string]string{
		// The cleaner test waits on the cleaner: one with nothing to do looks again
		// within 200 ms instead of 15 s.
		"log.cleaner.backoff.ms": "200",
	}}, versions, envs))
}

// eachVersion runs f once per broker version, as a subtest.
func eachVersion(t *testing.T, f func(t *testing.T, c *kafkatest.Cluster)) {
	for _, v := range versions {
		t.Run("kafka-"+v, func(t *testing.T) { f(t, envs[v].Clusters[0]) })
	}
}

// txnProducer is a producer of a new transactional id on c that speaks the transaction
// protocol of Strait's exactly-once mode (fastpath.TransactionOpts: explicit
// AddPartitionsToTxn, EndTxn keeping the epoch).
func txnProducer(t *testing.T, c *kafkatest.Cluster) fastpath.Producer {
	t.Helper()
	txn := fastpath.Transactions{ID: kafkatest.Name(t, "filler"), Timeout: time.Minute}
	p, err := fastpath.NewProducer(t.Context(), c.Client(t, fastpath.TransactionOpts()...), txn)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fillerBatch is one batch of n records with the given key and a null value, compressed
// with codec, not yet given a producer (batch.Rewrite).
func fillerBatch(t *testing.T, n int, key []byte, codec batch.Codec) ([]byte, batch.Header) {
	t.Helper()
	recs := make([]batch.KV, n)
	for i := range recs {
		recs[i].Key = key
	}
	h, b, err := batch.Encode(recs, time.Now().UnixMilli())
	if err == nil && codec != batch.None {
		var r batch.Recompressor
		b, h, err = r.Recompress(nil, b, h, batch.Compression{Codec: codec})
	}
	if err != nil {
		t.Fatal(err)
	}
	return b, h
}

// writeInTransaction adds partition 0 of topic to a transaction of a new producer, writes
// b in it unless b is nil, and ends it: an aborted or committed filler.
func writeInTransaction(t *testing.T, c *kafkatest.Cluster, topic string, b []byte, h batch.Header, commit bool) {
	t.Helper()
	ctx := t.Context()
	p := txnProducer(t, c)
	if err := p.AddPartitions(ctx, map[string][]int32{topic: {0}}); err != nil {
		t.Fatal(err)
	}
	if b != nil {
		batch.Rewrite(b, h, p.PID, p.Epoch, 0, true)
		if _, err := p.ProduceOne(ctx, topic, 0, b, -1); err != nil {
			t.Fatalf("writing %d filler records: %v", h.NumRecords, err)
		}
	}
	if err := p.End(ctx, commit); err != nil {
		t.Fatal(err)
	}
}

// produceRaw writes b, a batch without a producer, to partition 0 of topic, as a plain
// producer with acks=all would.
func produceRaw(t *testing.T, c *kafkatest.Cluster, topic string, b []byte) (int64, error) {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = 0, b
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	// Produce v13 (Kafka 4.1) names topics by ID: stay below it, as the fast path does.
	resp, err := req.RequestWith(t.Context(), c.Client(t, fastpath.TransactionOpts()...))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		msg := ""
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		return -1, fmt.Errorf("%w (%s)", err, msg)
	}
	return r.BaseOffset, nil
}

// waitEnd waits until partition 0 of topic ends at want (markers land after EndTxn
// returns) and fails if it goes past.
func waitEnd(t *testing.T, c *kafkatest.Cluster, topic string, want int64) {
	t.Helper()
	kafkatest.Eventually(t, 30*time.Second, func() error {
		got := c.EndOffsets(t, topic, kgo.ReadUncommitted())[0]
		if got > want {
			t.Fatalf("%s ends at %d, past the %d expected", topic, got, want)
		}
		if got != want {
			return fmt.Errorf("%s ends at %d, want %d", topic, got, want)
		}
		return nil
	})
}

// records counts what a consumer of each isolation level reads of topic.
func records(t *testing.T, c *kafkatest.Cluster, topic string) (committed, uncommitted int) {
	t.Helper()
	return kafkatest.Count(t, c.Seeds(), topic, kgo.ReadCommitted()), kafkatest.Count(t, c.Seeds(), topic, kgo.ReadUncommitted())
}

// TestEmptyTransactionLeavesOneMarker: a transaction that adds a partition and writes
// nothing to it leaves one control batch of one record there, commit or abort: a filler
// of exactly one offset that no consumer of either isolation level ever returns.
func TestEmptyTransactionLeavesOneMarker(t *testing.T) {
	eachVersion(t, func(t *testing.T, c *kafkatest.Cluster) {
		topic := kafkatest.Name(t, "empty-txn")
		c.CreateTopic(t, topic, 1, nil)
		for i, commit := range []bool{false, true} {
			writeInTransaction(t, c, topic, nil, batch.Header{}, commit)
			waitEnd(t, c, topic, int64(i+1))
		}
		hs := c.RawBatches(t, topic, 0)
		if len(hs) != 2 {
			t.Fatalf("got %d batches, want the two markers: %+v", len(hs), hs)
		}
		for i, h := range hs {
			if !h.Control() || h.NumRecords != 1 || h.BaseOffset != int64(i) || h.LastOffset() != int64(i) {
				t.Errorf("batch %d: %+v, want a control batch of one record at offset %d", i, h, i)
			}
			t.Logf("marker at %d: %d bytes", h.BaseOffset, h.Size())
		}
		if rc, ru := records(t, c, topic); rc != 0 || ru != 0 {
			t.Errorf("consumers read %d (read_committed) and %d (read_uncommitted) records of two markers, want none", rc, ru)
		}
	})
}

// withOffsetGap returns an uncompressed batch of two records whose offset deltas are 0
// and gap (not 0 and 1), its last offset delta gap, and no producer.
func withOffsetGap(t *testing.T, gap int) []byte {
	t.Helper()
	h, b, err := batch.Encode([]batch.KV{{Key: []byte("a")}, {Key: []byte("b")}}, time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	// Each record: length, attributes, timestamp delta, offset delta, key length, key,
	// value length, header count: the second's offset delta is its fourth byte.
	// The first record is 8 bytes: its length (7, a zigzag varint) and 7 more.
	second := batch.HeaderSize + 8
	if b[second] != 7<<1 || b[second+3] != 1<<1 {
		t.Fatalf("unexpected record layout: %x", b[batch.HeaderSize:])
	}
	b[second+3] = byte(gap << 1)                    // zigzag varint, one byte for gap < 64
	binary.BigEndian.PutUint32(b[23:], uint32(gap)) // the header's last offset delta
	h.LastOffsetDelta = int32(gap)
	batch.Rewrite(b, h, -1, -1, -1, false) // computes the CRC anew
	return b
}

// TestBatchWithOffsetGapsIsRefused: a producer cannot skip offsets inside a batch.
// Whatever the offset deltas, the broker takes one offset per record, so a gap in the
// source cannot be copied as a gap: it needs a filler.
func TestBatchWithOffsetGapsIsRefused(t *testing.T) {
	eachVersion(t, func(t *testing.T, c *kafkatest.Cluster) {
		for _, codec := range []batch.Codec{batch.None, batch.Zstd} {
			t.Run(codec.String(), func(t *testing.T) {
				topic := kafkatest.Name(t, "gap")
				c.CreateTopic(t, topic, 1, nil)
				b := withOffsetGap(t, 5)
				if codec != batch.None {
					h, err := batch.Parse(b)
					if err != nil {
						t.Fatal(err)
					}
					var r batch.Recompressor
					if b, _, err = r.Recompress(nil, b, h, batch.Compression{Codec: codec}); err != nil {
						t.Fatal(err)
					}
				}
				base, err := produceRaw(t, c, topic, b)
				end := c.EndOffsets(t, topic, kgo.ReadUncommitted())[0]
				t.Logf("a batch of 2 records with offset deltas 0 and 5: base %d, error %v, log end %d", base, err, end)
				if err == nil && end == 6 {
					t.Fatalf("the broker kept the gap: the log ends at 6 after two records")
				}
				if err == nil {
					t.Fatalf("the broker took the batch (base %d, log end %d) instead of refusing it", base, end)
				}
				if !errors.Is(err, kerr.InvalidRecord) && !errors.Is(err, kerr.CorruptMessage) {
					t.Errorf("refused with %v, want INVALID_RECORD or CORRUPT_MESSAGE", err)
				}
				if end != 0 {
					t.Errorf("the log ends at %d after a refused batch", end)
				}
			})
		}
	})
}

// TestFillerOfAMillionOffsets: the smallest filler for a gap of n offsets is one aborted
// transaction holding one batch of n-1 records (key empty, value null), compressed, and
// its marker; zstd packs 999,999 such records into a batch far below message.max.bytes.
// read_committed consumers never see them; read_uncommitted consumers do, until
// DeleteRecords moves the log start past them, as for the source's log start.
func TestFillerOfAMillionOffsets(t *testing.T) {
	const gap = 1_000_000
	eachVersion(t, func(t *testing.T, c *kafkatest.Cluster) {
		topic := kafkatest.Name(t, "million")
		c.CreateTopic(t, topic, 1, nil)
		b, h := fillerBatch(t, gap-1, nil, batch.Zstd)
		t.Logf("filler of %d offsets: a zstd batch of %d records, %d bytes, and a marker", gap, h.NumRecords, h.Size())
		if h.Size() > 1<<20 {
			t.Errorf("the filler batch is %d bytes, above the default message.max.bytes", h.Size())
		}
		writeInTransaction(t, c, topic, b, h, false)
		waitEnd(t, c, topic, gap)
		if rc, ru := records(t, c, topic); rc != 0 || ru != gap-1 {
			t.Errorf("consumers read %d (read_committed) and %d (read_uncommitted) records, want 0 and %d", rc, ru, gap-1)
		}
		sizes, err := c.Admin(t).DescribeAllLogDirs(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		sizes.Each(func(d kadm.DescribedLogDir) {
			if p, ok := d.Topics[topic][0]; ok {
				t.Logf("the filler takes %d bytes on the broker's disk", p.Size)
			}
		})

		// Moving the log start past the filler hides it from every consumer; the next
		// record lands at the offset after the gap.
		del, err := c.Admin(t).DeleteRecords(t.Context(), kadm.Offsets{topic: {0: {At: gap}}})
		if err == nil {
			err = del.Error()
		}
		if err != nil {
			t.Fatal(err)
		}
		if rc, ru := records(t, c, topic); rc != 0 || ru != 0 {
			t.Errorf("after DeleteRecords consumers read %d (read_committed) and %d (read_uncommitted) records, want none", rc, ru)
		}
		off, err := produceRaw(t, c, topic, withOffsetGap(t, 1)) // a plain batch of two records
		if err != nil || off != gap {
			t.Errorf("the first record after the filler landed at %d (%v), want %d", off, err, gap)
		}
	})
}

// TestCleanerRemovesAbortedFillerAndKeepsOffsets: on a compacted remote topic the
// cleaner drops the filler's records (they are aborted), keeping the empty batch's
// header, and every later record keeps its offset: filler leaves holes, as the source's
// cleaner does, and never moves anything.
func TestCleanerRemovesAbortedFillerAndKeepsOffsets(t *testing.T) {
	eachVersion(t, func(t *testing.T, c *kafkatest.Cluster) {
		topic := kafkatest.Name(t, "clean")
		cfg := map[string]*string{}
		for k, v := range map[string]string{
			"cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01",
			"min.compaction.lag.ms": "0", "delete.retention.ms": "0",
		} {
			cfg[k] = &v
		}
		c.CreateTopic(t, topic, 1, cfg)
		// A compacted topic refuses records without a key: the filler's key is empty.
		b, h := fillerBatch(t, 10, []byte{}, batch.Zstd)
		writeInTransaction(t, c, topic, b, h, false) // offsets 0-9, the marker at 10
		waitEnd(t, c, topic, 11)
		cl := c.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		produce := func(key string) int64 {
			r := &kgo.Record{Topic: topic, Partition: 0, Key: []byte(key), Value: []byte("v")}
			if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
				t.Fatal(err)
			}
			return r.Offset
		}
		if off := produce("kept"); off != 11 {
			t.Fatalf("the first record after the filler landed at %d, want 11", off)
		}
		// The cleaner empties the filler's batch but keeps its header (Kafka keeps the
		// last batch of each producer for its state): no record is left at 0-9.
		rolls := 0
		kafkatest.Eventually(t, 90*time.Second, func() error {
			for _, h := range c.RawBatches(t, topic, 0) {
				if !h.Control() && h.BaseOffset <= 9 && h.NumRecords > 0 {
					rolls++
					produce(fmt.Sprintf("roll-%d", rolls)) // segment.ms is 100: rolls the segment
					return fmt.Errorf("the cleaner has not removed the filler's records yet: %+v", h)
				}
			}
			return nil
		})
		var kept int64 = -1
		kafkatest.Scan(t, c.Seeds(), topic, kgo.ReadUncommitted(), func(r *kgo.Record) {
			if string(r.Key) == "kept" {
				kept = r.Offset
			}
		}, nil)
		if kept != 11 {
			t.Errorf("after cleaning the record written at 11 is at %d", kept)
		}
		for _, h := range c.RawBatches(t, topic, 0) {
			if h.BaseOffset <= 11 {
				t.Logf("after cleaning (%d rolls): batch %d-%d, %d records, control %v, %d bytes", rolls, h.BaseOffset, h.LastOffset(), h.NumRecords, h.Control(), h.Size())
			}
		}
	})
}
