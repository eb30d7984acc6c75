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
