package batch

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// buildHorizon is a contiguous batch of recs as Kafka's log cleaner
// writes one holding tombstones (KIP-534, MemoryRecordsBuilder with a
// deleteHorizonMs): the delete-horizon attribute, the horizon as the base
// timestamp and each record's timestamp delta relative to it, so negative.
func buildHorizon(tb testing.TB, recs []*kgo.Record, codec Codec, horizon int64) []byte {
	tb.Helper()
	return encodeRecords(tb, recs, codec, attrDeleteHorizon, 500, horizon)
}

// A day after the test records' timestamps: a cleaner's horizon.
const testHorizon = 1_700_000_000_000 + 86_400_000

// TestRewriteClearsDeleteHorizon: a producer never sends the
// delete-horizon attribute, and a batch produced with it keeps it on the
// target, whose cleaner then drops its tombstones at the source's horizon,
// not its own. Rewrite clears it; every record keeps the timestamp a
// consumer reads (base timestamp plus delta, with or without the bit).
func TestRewriteClearsDeleteHorizon(t *testing.T) {
	for _, codec := range codecs {
		t.Run(codec.String(), func(t *testing.T) {
			src := buildHorizon(t, testRecords(12), codec, testHorizon)
			h, err := Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			_, want := consume(t, src)
			b := slices.Clone(src)
			Rewrite(b, h, 77, 1, 5, false)
			r, err := Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if r.Attributes&attrDeleteHorizon != 0 {
				t.Fatalf("rewritten attributes %#x keep the delete horizon %#x", r.Attributes, attrDeleteHorizon)
			}
			if r.Attributes != h.Attributes&^attrDeleteHorizon || !ValidCRC(b, r) || r.ProducerID != 77 {
				t.Fatalf("rewritten %+v of %+v, CRC valid %v", r, h, ValidCRC(b, r))
			}
			_, got := consume(t, b)
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i].ts != want[i].ts || got[i].ts != testRecords(12)[i].Timestamp.UnixMilli() {
					t.Fatalf("record %d: timestamp %d, want %d", i, got[i].ts, want[i].ts)
				}
			}
		})
	}
}

// TestDeleteHorizonIsRebuilt: a contiguous batch with a delete horizon is
// rebuilt, not forwarded: its base timestamp is the horizon, not its
// first record's, and the fast path reads the base timestamp as its
// oldest record's time (lag, record age). Rebuild gives a batch as a
// producer writes it: no horizon, the first record's timestamp as base,
// every record's timestamp the source's.
func TestDeleteHorizonIsRebuilt(t *testing.T) {
	var r Recompressor
	recs := testRecords(12)
	for _, from := range codecs {
		for _, to := range codecs {
			src := buildHorizon(t, recs, from, testHorizon)
			h, err := Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			if h.Attributes&attrDeleteHorizon == 0 {
				t.Fatalf("header %+v: no delete horizon", h)
			}
			if !NeedsRebuild(h, h.BaseOffset) {
				t.Fatalf("%s: NeedsRebuild(%+v, %d) = false for a batch with a delete horizon", from, h, h.BaseOffset)
			}
			got, err := r.Rebuild(src, h, h.BaseOffset, Compression{Codec: to})
			if err != nil {
				t.Fatal(err)
			}
			checkRebuilt(t, src, h, h.BaseOffset, got, to)
			if first := recs[0].Timestamp.UnixMilli(); got.Header.FirstTimestamp != first || got.Header.MaxTimestamp != h.MaxTimestamp {
				t.Fatalf("%s-%s: timestamps %d..%d, want the first record's %d and the max %d", from, to, got.Header.FirstTimestamp, got.Header.MaxTimestamp, first, h.MaxTimestamp)
			}
		}
	}
	// A control batch is never rebuilt, horizon or not: markers are not copied.
	h, _ := Parse(buildHorizon(t, recs, None, testHorizon))
	h.Attributes |= attrControl
	if NeedsRebuild(h, h.BaseOffset) {
		t.Fatal("a control batch with a delete horizon needs a rebuild")
	}
}
