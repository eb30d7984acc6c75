package offsets

import "testing"

// manyHoles returns a map of n segments: a compaction hole after every
// record, as a compacted topic's record path produces.
func manyHoles(n int64) *Partition {
	p := NewPartition()
	for i := int64(0); i < n; i++ {
		p.Ack(2*i, i)
	}
	p.Drain()
	return p
}

// BenchmarkDrain measures one flush of a partition with many segments where
// one record was acknowledged since the last flush: the cost must follow the
// changes, not the segments.
func BenchmarkDrain(b *testing.B) {
	p := manyHoles(100_000)
	src, tgt := int64(200_000), int64(100_000)
	b.ResetTimer()
	for b.Loop() {
		p.Ack(src, tgt)
		src, tgt = src+2, tgt+1
		if len(p.Drain()) != 1 {
			b.Fatal("not one change")
		}
	}
}

// BenchmarkTranslate measures a translation in a map of many segments.
func BenchmarkTranslate(b *testing.B) {
	p := manyHoles(100_000)
	u := int64(0)
	for b.Loop() {
		if _, res := p.Translate(u); res != Exact {
			b.Fatal(res)
		}
		u = (u + 7919) % 200_000
	}
}
