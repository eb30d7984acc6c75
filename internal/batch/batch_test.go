package batch

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// encode builds a v2 batch with records at the given offset deltas.
func encode(t *testing.T, base int64, deltas []int32, attrs int16, pid int64) []byte {
	t.Helper()
	var recs []byte
	for _, d := range deltas {
		r := kmsg.Record{OffsetDelta: d, Key: []byte(fmt.Sprint("k", d)), Value: []byte(fmt.Sprint("v", d)), TimestampDelta64: int64(d)}
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - 1)
		recs = append(recs, r.AppendTo(nil)...)
	}
	b := kmsg.RecordBatch{
		FirstOffset: base, PartitionLeaderEpoch: 7, Magic: 2, Attributes: attrs,
		LastOffsetDelta: deltas[len(deltas)-1], FirstTimestamp: 1000, MaxTimestamp: 1000 + int64(deltas[len(deltas)-1]),
		ProducerID: pid, ProducerEpoch: 3, FirstSequence: 42, NumRecords: int32(len(deltas)), Records: recs,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], castagnoli))
	return out
}

func TestParseAndRewrite(t *testing.T) {
	b := encode(t, 100, []int32{0, 1, 2}, int16(Lz4)|attrTransactional, 9)
	h, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.BaseOffset != 100 || h.LastOffset() != 102 || h.NumRecords != 3 || !h.Contiguous() || h.Codec() != Lz4 || !h.Transactional() || h.ProducerID != 9 || h.Size() != len(b) {
		t.Fatalf("header %+v", h)
	}
	if !ValidCRC(b, h) {
		t.Fatal("crc")
	}
	Rewrite(b, h, 77, 1, 5, false)
	r, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if r.BaseOffset != 0 || r.PartitionLeaderEpoch != -1 || r.ProducerID != 77 || r.ProducerEpoch != 1 || r.BaseSequence != 5 ||
		r.Transactional() || r.Codec() != Lz4 || r.NumRecords != 3 || r.LastOffsetDelta != 2 || r.FirstTimestamp != 1000 || !ValidCRC(b, r) {
		t.Fatalf("rewritten %+v", r)
	}
	// The records are untouched: kmsg reads the same records back.
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(b); err != nil || rb.NumRecords != 3 {
		t.Fatalf("%v %+v", err, rb)
	}
}

func TestParseErrors(t *testing.T) {
	b := encode(t, 0, []int32{0, 2, 5}, 0, -1)
	h, err := Parse(b)
	if err != nil || h.Contiguous() {
		t.Fatalf("holes: %+v %v", h, err)
	}
	if _, err := Parse(b[:len(b)-1]); !errors.Is(err, ErrPartial) {
		t.Fatalf("partial: %v", err)
	}
	if _, err := Parse(b[:10]); !errors.Is(err, ErrPartial) {
		t.Fatalf("short: %v", err)
	}
	old := append([]byte(nil), b...)
	old[offMagic] = 1
	if _, err := Parse(old); !errors.Is(err, ErrOldFormat) {
		t.Fatalf("magic 1: %v", err)
	}
	bad := append([]byte(nil), b...)
	bad[len(bad)-1] ^= 0xff
	if hb, _ := Parse(bad); ValidCRC(bad, hb) {
		t.Fatal("corruption not detected")
	}
}

// TestFilterMatchesConsumer fetches raw batches of a topic with committed
// and aborted transactions, interleaved with plain writes, from kfake, and
// checks the filter keeps exactly what a read_committed consumer returns.
func TestFilterMatchesConsumer(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seeds := kgo.SeedBrokers(c.ListenAddrs()...)
	txn, _ := kgo.NewClient(seeds, kgo.TransactionalID("x"), kgo.DefaultProduceTopic("t"))
	defer txn.Close()
	plain, _ := kgo.NewClient(seeds, kgo.DefaultProduceTopic("t"))
	defer plain.Close()
	n := 0
	for i := 0; i < 12; i++ {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 5; j++ {
			n++
			txn.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint("txn", i, "-", j))})
			plain.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint("plain", n))})
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(i%3 != 0)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{}
	cons, _ := kgo.NewClient(seeds, kgo.ConsumeTopics("t"), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	defer cons.Close()
	for len(want) < 12*5+8*5 { // every plain record and the 8 committed transactions
		cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) { want[string(r.Value)] = true })
		if ctx.Err() != nil {
			t.Fatalf("consumed %d", len(want))
		}
	}

	// Raw fetch with read_committed.
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.IsolationLevel, req.SessionEpoch = -1, 100, 10<<20, 1, -1
	md, err := plain.Request(ctx, &kmsg.MetadataRequest{Topics: []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("t")}}})
	if err != nil {
		t.Fatal(err)
	}
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "t", md.(*kmsg.MetadataResponse).Topics[0].TopicID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = 10<<20, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := plain.Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	part := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
	var aborted []AbortedTxn
	for _, a := range part.AbortedTransactions {
		aborted = append(aborted, AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
	}
	f := NewFilter(aborted)
	got := map[string]bool{}
	for rest := part.RecordBatches; len(rest) > 0; {
		h, err := Parse(rest)
		if errors.Is(err, ErrPartial) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b := rest[:h.Size()]
		rest = rest[h.Size():]
		if f.Skip(b, h) {
			continue
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			t.Fatal(err)
		}
		recs, err := rawRecords(rb)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			got[string(r.Value)] = true
		}
	}
	if len(got) != len(want) {
		t.Fatalf("filter kept %d records, the consumer returned %d", len(got), len(want))
	}
	for v := range want {
		if !got[v] {
			t.Fatalf("missing %q", v)
		}
	}
}

// rawRecords decodes the uncompressed records of a batch.
func rawRecords(rb kmsg.RecordBatch) ([]kmsg.Record, error) {
	var out []kmsg.Record
	b := rb.Records
	for i := int32(0); i < rb.NumRecords; i++ {
		length, n := binary.Varint(b)
		if n <= 0 || int64(len(b)-n) < length {
			return nil, errors.New("bad record length")
		}
		var r kmsg.Record
		if err := r.ReadFrom(b[:n+int(length)]); err != nil {
			return nil, err
		}
		out = append(out, r)
		b = b[n+int(length):]
	}
	return out, nil
}
