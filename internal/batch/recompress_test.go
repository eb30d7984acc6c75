package batch

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var codecs = []Codec{None, Gzip, Snappy, Lz4, Zstd}

// testRecords are JSON-like records with keys, null keys, tombstones,
// empty values, headers and irregular timestamps.
func testRecords(n int) []*kgo.Record {
	base := time.UnixMilli(1_700_000_000_000)
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		r := &kgo.Record{
			Key:       []byte(fmt.Sprintf("user-%d", i%17)),
			Value:     []byte(fmt.Sprintf(`{"id":%d,"name":"user-%d","email":"user%d@example.com","active":%t,"score":%d}`, i, i%17, i, i%3 == 0, i*37%1000)),
			Timestamp: base.Add(time.Duration(i*i%23) * time.Millisecond),
		}
		switch i % 9 {
		case 1:
			r.Key = nil
		case 2:
			r.Value = nil // tombstone
		case 3:
			r.Value = []byte{}
		case 4:
			r.Headers = []kgo.RecordHeader{{Key: "trace", Value: []byte(fmt.Sprint("t", i))}, {Key: "empty"}}
		}
		recs = append(recs, r)
	}
	return recs
}

// capture produces records into a kfake topic with a franz-go producer
// using codec (transactionally if txn) and returns the raw batches a
// read_uncommitted fetch gets back: batches as a real client writes them.
func capture(t *testing.T, codec Codec, txn bool) [][]byte {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"),
		kgo.ProducerBatchCompression(kgoCodec(codec)), kgo.ProducerLinger(50 * time.Millisecond),
	}
	if txn {
		opts = append(opts, kgo.TransactionalID("x"))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	if txn {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.ProduceSync(ctx, testRecords(200)...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if txn {
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}

	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch = -1, 100, 10<<20, -1
	md, err := cl.Request(ctx, &kmsg.MetadataRequest{Topics: []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("t")}}})
	if err != nil {
		t.Fatal(err)
	}
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "t", md.(*kmsg.MetadataResponse).Topics[0].TopicID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = 10<<20, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for rest := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches; len(rest) > 0; {
		h, err := Parse(rest)
		if errors.Is(err, ErrPartial) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rest[:h.Size():h.Size()])
		rest = rest[h.Size():]
	}
	return out
}

// build encodes records into a batch with the given codec and attributes,
// the way a producer does, for cases no franz-go producer writes (empty
// batches, huge batches).
func build(tb testing.TB, recs []*kgo.Record, codec Codec, attrs int16) []byte {
	tb.Helper()
	return encodeRecords(tb, recs, codec, attrs, 1234, 1_700_000_000_000)
}

// encodeRecords writes recs into a batch at firstOffset with the given codec and
// attributes, timestamps as deltas from base.
func encodeRecords(tb testing.TB, recs []*kgo.Record, codec Codec, attrs int16, firstOffset, base int64) []byte {
	tb.Helper()
	var raw []byte
	maxTS := int64(math.MinInt64)
	for i, kr := range recs {
		ts := kr.Timestamp.UnixMilli()
		maxTS = max(maxTS, ts)
		r := kmsg.Record{OffsetDelta: int32(i), Key: kr.Key, Value: kr.Value, TimestampDelta64: ts - base}
		for _, h := range kr.Headers {
			r.Headers = append(r.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		raw = r.AppendTo(raw)
	}
	if len(recs) == 0 {
		maxTS = base
	}
	if codec != None {
		c, err := kgo.DefaultCompressor(kgoCodec(codec))
		if err != nil {
			tb.Fatal(err)
		}
		raw, _ = c.Compress(new(bytes.Buffer), raw)
	}
	b := kmsg.RecordBatch{
		FirstOffset: firstOffset, PartitionLeaderEpoch: 7, Magic: 2, Attributes: attrs | int16(codec),
		LastOffsetDelta: max(int32(len(recs))-1, 0), FirstTimestamp: base, MaxTimestamp: maxTS,
		ProducerID: 9, ProducerEpoch: 3, FirstSequence: 42, NumRecords: int32(len(recs)), Records: raw,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[offLength:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[offCRC:], crc32.Checksum(out[offAttributes:], castagnoli))
	return out
}

// decoded returns a batch's records section decompressed and its records.
func decoded(t *testing.T, b []byte) ([]byte, []kmsg.Record) {
	t.Helper()
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	raw, err := kgo.DefaultDecompressor().Decompress(rb.Records, kgo.CompressionCodecType(rb.Attributes&codecMask))
	if err != nil {
		t.Fatal(err)
	}
	rb.Records = raw
	recs, err := rawRecords(rb)
	if err != nil {
		t.Fatal(err)
	}
	return raw, recs
}

// checkRecompressed checks that out, the batch Recompress returned with
// header got for src, is src with the codec to and the same records.
func checkRecompressed(t *testing.T, src, out []byte, got Header, to Codec) {
	t.Helper()
	h, err := Parse(out)
	if err != nil {
		t.Fatalf("parsing the result: %v", err)
	}
	if h != got {
		t.Fatalf("returned header %+v, parsed %+v", got, h)
	}
	if h.Size() != len(out) {
		t.Fatalf("size %d, batch is %d bytes", h.Size(), len(out))
	}
	if !ValidCRC(out, h) {
		t.Fatal("bad CRC")
	}
	if h.Codec() != to {
		t.Fatalf("codec %s, want %s", h.Codec(), to)
	}
	sh, _ := Parse(src)
	want := sh
	want.Attributes = sh.Attributes&^codecMask | int16(to)
	want.Length, want.CRC, h.Length, h.CRC = 0, 0, 0, 0
	if h != want {
		t.Fatalf("header\n got %+v\nwant %+v", h, want)
	}
	srcRaw, srcRecs := decoded(t, src)
	outRaw, outRecs := decoded(t, out)
	if !bytes.Equal(srcRaw, outRaw) {
		t.Fatal("records section differs after decompression")
	}
	if len(outRecs) != len(srcRecs) || len(outRecs) != int(h.NumRecords) {
		t.Fatalf("%d records, source has %d, header says %d", len(outRecs), len(srcRecs), h.NumRecords)
	}
	for i, r := range outRecs {
		s := srcRecs[i]
		if !bytes.Equal(r.Key, s.Key) || (r.Key == nil) != (s.Key == nil) ||
			!bytes.Equal(r.Value, s.Value) || (r.Value == nil) != (s.Value == nil) ||
			r.OffsetDelta != s.OffsetDelta || r.TimestampDelta64 != s.TimestampDelta64 ||
			r.Attributes != s.Attributes || fmt.Sprint(r.Headers) != fmt.Sprint(s.Headers) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, r, s)
		}
	}
}

// TestRecompressEveryPair recompresses batches written by franz-go
// producers with each codec into each codec, and checks the header fields,
// CRC and records of the result.
func TestRecompressEveryPair(t *testing.T) {
	sources := map[Codec][][]byte{}
	for _, from := range codecs {
		var bs [][]byte
		for _, b := range capture(t, from, false) {
			if h, _ := Parse(b); h.Codec() == from && h.NumRecords > 1 {
				bs = append(bs, b)
			}
		}
		if len(bs) == 0 {
			t.Fatalf("the %s producer wrote no %s batch of several records", from, from)
		}
		sources[from] = bs
	}
	var r Recompressor
	for _, from := range codecs {
		for _, to := range codecs {
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				for _, src := range sources[from] {
					h, _ := Parse(src)
					orig := bytes.Clone(src)
					prefix := []byte("prefix")
					out, got, err := r.Recompress(prefix, src, h, Compression{Codec: to})
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(src, orig) {
						t.Fatal("source batch modified")
					}
					if string(out[:len(prefix)]) != "prefix" {
						t.Fatal("dst prefix overwritten")
					}
					if to == from && !bytes.Equal(out[len(prefix):], src) {
						t.Fatal("same codec: batch not returned unchanged")
					}
					checkRecompressed(t, src, out[len(prefix):], got, to)
				}
			})
		}
	}
}

// TestRecompressTransactional checks that a transactional batch keeps its
// transactional bit and producer fields, and that its marker is refused.
func TestRecompressTransactional(t *testing.T) {
	var r Recompressor
	var data, markers int
	for _, b := range capture(t, Lz4, true) {
		h, _ := Parse(b)
		if h.Control() {
			markers++
			if _, _, err := r.Recompress(nil, b, h, Compression{Codec: Zstd}); !errors.Is(err, ErrControl) {
				t.Fatalf("control batch: %v, want ErrControl", err)
			}
			continue
		}
		data++
		if !h.Transactional() || h.ProducerID < 0 {
			t.Fatalf("captured batch is not transactional: %+v", h)
		}
		for _, to := range []Codec{None, Zstd} {
			out, got, err := r.Recompress(nil, b, h, Compression{Codec: to})
			if err != nil {
				t.Fatal(err)
			}
			if !got.Transactional() {
				t.Fatalf("to %s: transactional bit lost", to)
			}
			checkRecompressed(t, b, out, got, to)
		}
	}
	if data == 0 || markers == 0 {
		t.Fatalf("captured %d data batches and %d markers", data, markers)
	}
}

// TestRecompressEmpty recompresses batches with an empty records section,
// both zero bytes (whatever the codec bits say) and a codec's encoding of
// nothing.
func TestRecompressEmpty(t *testing.T) {
	var r Recompressor
	for _, from := range codecs {
		for _, to := range codecs {
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				srcs := [][]byte{build(t, nil, from, 0)} // the codec's encoding of nothing
				if from != None {
					zero := build(t, nil, None, 0)
					binary.BigEndian.PutUint16(zero[offAttributes:], uint16(from))
					binary.BigEndian.PutUint32(zero[offCRC:], crc32.Checksum(zero[offAttributes:], castagnoli))
					srcs = append(srcs, zero)
				}
				for _, src := range srcs {
					h, err := Parse(src)
					if err != nil {
						t.Fatal(err)
					}
					out, got, err := r.Recompress(nil, src, h, Compression{Codec: to})
					if err != nil {
						t.Fatal(err)
					}
					if got.NumRecords != 0 || !ValidCRC(out, got) || got.Codec() != to {
						t.Fatalf("header %+v", got)
					}
					if to == None && from != None && got.Size() != HeaderSize {
						t.Fatalf("to none: %d bytes of records", got.Size()-HeaderSize)
					}
				}
			})
		}
	}
}

// TestRecompressErrors checks that bad input gives an error and leaves
// dst as it was, never a batch.
func TestRecompressErrors(t *testing.T) {
	src := map[Codec][]byte{}
	for _, c := range codecs {
		src[c] = build(t, testRecords(50), c, 0)
	}
	// fixCRC gives a modified batch a valid length and CRC, as a buggy
	// producer would, so that only the codec can notice.
	fixCRC := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[offLength:], uint32(len(b)-12))
		binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
		return b
	}
	type tc struct {
		name    string
		b       []byte
		to      Codec
		wantErr error // nil: any error
	}
	var tests []tc
	for _, c := range codecs {
		flipped := bytes.Clone(src[c])
		flipped[len(flipped)-3] ^= 0x40
		tests = append(tests, tc{c.String() + " bad CRC", flipped, Gzip, ErrBadCRC})
		if c == Gzip {
			tests[len(tests)-1].to = Zstd
		}
		if c == None {
			continue
		}
		to := None
		truncated := bytes.Clone(src[c])
		truncated = fixCRC(truncated[:HeaderSize+(len(truncated)-HeaderSize)/2])
		tests = append(tests, tc{c.String() + " truncated", truncated, to, nil})
		garbage := bytes.Clone(src[c])
		for i := HeaderSize; i < len(garbage); i++ {
			garbage[i] = 0xff
		}
		tests = append(tests, tc{c.String() + " garbage", fixCRC(garbage), to, nil})
		// The source's records section, with the codec bits saying another codec.
		wrong := bytes.Clone(src[c])
		other := Codec(c%4 + 1)
		binary.BigEndian.PutUint16(wrong[offAttributes:], uint16(other))
		tests = append(tests, tc{c.String() + " labelled " + other.String(), fixCRC(wrong), None, nil})
	}
	control := bytes.Clone(src[None])
	binary.BigEndian.PutUint16(control[offAttributes:], attrControl|attrTransactional)
	tests = append(tests,
		tc{"control", fixCRC(control), Zstd, ErrControl},
		tc{"unknown target", src[None], 5, nil},
		tc{"negative target", src[None], -1, nil},
	)
	var r Recompressor
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Parse(tt.b)
			if err != nil {
				t.Fatal(err)
			}
			dst := []byte("dst")
			out, got, err := r.Recompress(dst, tt.b, h, Compression{Codec: tt.to})
			if err == nil {
				t.Fatalf("no error; got a batch %+v", got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if string(out) != "dst" || got != h {
				t.Fatalf("dst %q and header %+v changed on error", out, got)
			}
		})
	}

	// A header that claims more than b holds, and an old format.
	h, _ := Parse(src[Lz4])
	if _, _, err := r.Recompress(nil, src[Lz4][:len(src[Lz4])-1], h, Compression{Codec: None}); !errors.Is(err, ErrPartial) {
		t.Fatalf("short batch: %v", err)
	}
	old := h
	old.Magic = 1
	if _, _, err := r.Recompress(nil, src[Lz4], old, Compression{Codec: None}); !errors.Is(err, ErrOldFormat) {
		t.Fatalf("magic 1: %v", err)
	}

	// A stale header, as after Rewrite without parsing again.
	rewritten := bytes.Clone(src[Lz4])
	Rewrite(rewritten, h, 77, 0, 0, false)
	if _, _, err := r.Recompress(nil, rewritten, h, Compression{Codec: None}); err == nil {
		t.Fatal("stale header: no error")
	}
	rh, _ := Parse(rewritten)
	out, got, err := r.Recompress(nil, rewritten, rh, Compression{Codec: None})
	if err != nil {
		t.Fatal(err)
	}
	checkRecompressed(t, rewritten, out, got, None)

	// The Recompressor still works after errors.
	out, got, err = r.Recompress(nil, src[Lz4], h, Compression{Codec: Snappy})
	if err != nil {
		t.Fatal(err)
	}
	checkRecompressed(t, src[Lz4], out, got, Snappy)
}

// TestRecompressAllocs checks that a warmed-up Recompressor allocates
// nothing of the batch's size: buffers are reused across calls.
func TestRecompressAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items, so franz-go's codecs allocate at random")
	}
	recs := testRecords(2000)
	for _, from := range codecs {
		b := build(t, recs, from, 0)
		h, _ := Parse(b)
		for _, to := range codecs {
			if to == from {
				continue
			}
			var r Recompressor
			dst := make([]byte, 0, 2*len(b)+1024)
			for range 3 {
				if _, _, err := r.Recompress(dst, b, h, Compression{Codec: to}); err != nil {
					t.Fatal(err)
				}
			}
			n := testing.AllocsPerRun(20, func() { r.Recompress(dst, b, h, Compression{Codec: to}) })
			if n > 4 {
				t.Errorf("%s->%s: %.1f allocations per batch, want at most 4", from, to, n)
			}
		}
	}
}

// jsonBatch is about 1 MiB of JSON-like records in one batch.
func jsonBatch(tb testing.TB, codec Codec) []byte {
	recs := testRecords(8000) // ~130 bytes each
	for len(build(tb, recs, None, 0)) < 1<<20 {
		recs = append(recs, testRecords(100)...)
	}
	return build(tb, recs, codec, 0)
}

func BenchmarkRecompress(b *testing.B) {
	for _, pair := range [][2]Codec{{Lz4, Zstd}, {None, Snappy}, {Snappy, Lz4}, {Zstd, Lz4}, {Gzip, Snappy}, {Lz4, None}} {
		from, to := pair[0], pair[1]
		b.Run(from.String()+"->"+to.String(), func(b *testing.B) {
			src := jsonBatch(b, from)
			h, _ := Parse(src)
			raw, _ := kgo.DefaultDecompressor().Decompress(src[HeaderSize:], kgo.CompressionCodecType(from))
			var r Recompressor
			dst, _, err := r.Recompress(nil, src, h, Compression{Codec: to})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(raw))) // uncompressed record bytes per batch
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if dst, _, err = r.Recompress(dst[:0], src, h, Compression{Codec: to}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(src)), "src-bytes")
			b.ReportMetric(float64(len(dst)), "out-bytes")
		})
	}
}

// FuzzRecompress feeds arbitrary batches, given a valid length and CRC:
// Recompress must never panic,
// and whatever it returns without an error must be a valid batch in the
// target codec.
func FuzzRecompress(f *testing.F) {
	for _, c := range codecs {
		f.Add(build(f, testRecords(5), c, 0), uint8(Zstd))
		f.Add(build(f, nil, c, 0), uint8(None))
	}
	var r Recompressor
	f.Fuzz(func(t *testing.T, b []byte, to uint8) {
		if len(b) >= HeaderSize {
			// A valid frame and CRC, so that arbitrary records sections
			// reach the decoders instead of stopping at the CRC check.
			b[offMagic] = 2
			binary.BigEndian.PutUint32(b[offLength:], uint32(len(b)-12))
			binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
		}
		h, err := Parse(b)
		if err != nil {
			return
		}
		out, got, err := r.Recompress(nil, b, h, Compression{Codec: Codec(to % 6)})
		if err != nil {
			return
		}
		ph, err := Parse(out)
		if err != nil || ph != got || !ValidCRC(out, ph) || ph.Codec() != Codec(to%6) || ph.BaseOffset != h.BaseOffset || ph.NumRecords != h.NumRecords {
			t.Fatalf("bad result %+v (%v) for %+v", ph, err, h)
		}
	})
}

// kgoCodec is franz-go's codec for c at its default level.
func kgoCodec(c Codec) kgo.CompressionCodec {
	k, err := Compression{Codec: c}.Kgo()
	if err != nil {
		panic(err)
	}
	return k
}
