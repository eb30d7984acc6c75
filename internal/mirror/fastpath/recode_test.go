package fastpath

import (
	"testing"

	"strait/internal/batch"
)

// TestRecodeAtLevel: the fast path recompresses and rebuilds batches at
// the level of compression.type's codec (compression.<codec>.level): a
// higher level gives smaller batches of the same records.
func TestRecodeAtLevel(t *testing.T) {
	src := encodeBatch(0, 3000, 0, 3, nil)
	var deltas []int32 // compaction left every other offset
	for d := int32(0); d < 6000; d += 2 {
		deltas = append(deltas, d)
	}
	sparse := encodeSparse(0, deltas, 5999, 0)
	var r batch.Recompressor
	for _, tt := range []struct {
		codec     batch.Codec
		low, high int
	}{
		{batch.Gzip, 1, 9},
		{batch.Lz4, 1, 17},
		{batch.Zstd, 1, 22},
	} {
		t.Run(tt.codec.String(), func(t *testing.T) {
			low := recodeBatches(&r, src, 0, batch.Compression{Codec: tt.codec, Level: tt.low})
			high := recodeBatches(&r, src, 0, batch.Compression{Codec: tt.codec, Level: tt.high})
			for _, b := range [][]byte{low, high} {
				h, err := batch.Parse(b)
				if err != nil || h.Codec() != tt.codec || h.NumRecords != 3000 || h.Size() != len(b) {
					t.Fatalf("recoded batch %+v (%v), want one %s batch of 3000 records", h, err, tt.codec)
				}
			}
			if len(high) >= len(low) {
				t.Errorf("recoded at level %d: %d bytes, at level %d: %d; want fewer at the higher level", tt.high, len(high), tt.low, len(low))
			}

			var lowRB, highRB batch.Rebuilt
			for _, c := range []struct {
				level int
				out   *batch.Rebuilt
			}{{tt.low, &lowRB}, {tt.high, &highRB}} {
				rb := rebuildBatches(&r, sparse, 0, batch.Compression{Codec: tt.codec, Level: c.level}, false)[0]
				if rb == nil || len(rb.parts) != 1 || rb.parts[0].Header.Codec() != tt.codec || rb.parts[0].Header.NumRecords != 3000 {
					t.Fatalf("rebuilt %+v, want one %s batch of 3000 records", rb, tt.codec)
				}
				*c.out = rb.parts[0]
			}
			if len(highRB.Data) >= len(lowRB.Data) {
				t.Errorf("rebuilt at level %d: %d bytes, at level %d: %d; want fewer at the higher level", tt.high, len(highRB.Data), tt.low, len(lowRB.Data))
			}
		})
	}
}

// TestFastPathCompressionLevel: the target producer's level reaches the
// forwarder (Config.Level; package mirror's TestFastPathGetsTheLevel
// checks that the mirror sets it) and prepareResponse recodes a fetched
// batch at it.
func TestFastPathCompressionLevel(t *testing.T) {
	if got := New(Config{MaxBuffered: 32 << 20, LinkBuffer: LongLinkBuffer, FetchMaxBytes: 50 << 20, Codec: batch.Gzip, Level: 9}, Deps{}).cfg.compression(); got != (batch.Compression{Codec: batch.Gzip, Level: 9}) {
		t.Fatalf("the fast path compresses with %s, want gzip level 9", got)
	}
	src := encodeBatch(0, 3000, 0, 3, nil)
	recoded := func(level int) []byte {
		resp := fetchResp("t", src)
		prepareResponse(resp, nil, map[tp]int64{{"t", 0}: 0}, nil, batch.Compression{Codec: batch.Gzip, Level: level})
		b := resp.Topics[0].Partitions[0].RecordBatches
		if h, err := batch.Parse(b); err != nil || h.Codec() != batch.Gzip || h.NumRecords != 3000 {
			t.Fatalf("recoded batch %+v (%v), want gzip with 3000 records", h, err)
		}
		return b
	}
	if low, high := recoded(1), recoded(9); len(high) >= len(low) {
		t.Errorf("gzip level 9 gave %d bytes, level 1 %d", len(high), len(low))
	}
}
