package preserve

import (
	"testing"

	"strait/internal/batch"
)

// TestFillerBatchFitsTheDefaultMessageSize: the largest filler batch stays under
// Kafka's default max.message.bytes (1,048,588), compressed with zstd.
func TestFillerBatchFitsTheDefaultMessageSize(t *testing.T) {
	b, h, err := fillerBatch(MaxFillerRecords, 1)
	if err != nil {
		t.Fatal(err)
	}
	if h.NumRecords != MaxFillerRecords || h.Codec() != batch.Zstd || len(b) != h.Size() {
		t.Errorf("header %+v for %d bytes, want %d zstd records", h, len(b), MaxFillerRecords)
	}
	if h.Size() >= 1_048_588 {
		t.Errorf("%d filler records take %d bytes, over the default max.message.bytes", MaxFillerRecords, h.Size())
	}
	t.Logf("%d filler records: %d bytes", MaxFillerRecords, h.Size())
}

// TestFillerBatchesFitTheTopic: a topic with a lower max.message.bytes than the default
// gets proportionally smaller filler batches, which fit it compressed.
func TestFillerBatchesFitTheTopic(t *testing.T) {
	f := &Filler{perBatch: MaxFillerRecords}
	for _, maxBytes := range []int64{0, 1_048_588, 2 << 20, 100_000, 1000} {
		n := f.recordsPerBatch(maxBytes)
		b, _, err := fillerBatch(n, 1)
		if err != nil {
			t.Fatal(err)
		}
		if limit := maxBytes; limit > 0 && int64(len(b)) > limit {
			t.Errorf("max.message.bytes %d: %d records take %d bytes", maxBytes, n, len(b))
		}
		if (maxBytes == 0 || maxBytes >= 1_048_588) && n != MaxFillerRecords {
			t.Errorf("max.message.bytes %d: %d records, want %d", maxBytes, n, MaxFillerRecords)
		}
	}
}
