package main

import (
	"context"
	"fmt"
)

// memory copies a small backlog with Strait at each partition count of -memory-partitions
// and records its peak RSS, to show how memory grows with partitions. Keys are null, so
// records spread evenly over any partition count.
func (r *runner) memory(ctx context.Context) error {
	for _, parts := range r.p.MemPartitions {
		topic := fmt.Sprintf("bench-mem-%d", parts)
		n := parts * r.p.MemRecordsPerPartition
		g := newGenerator(r.p.RecordSize, 0, parts)
		g.contiguous = r.p.MemRecordsPerPartition
		ts := singleTopic(topic, parts)
		load, ends, err := r.preload(ctx, g, ts, n, r.p.Codec, false, 0)
		if err != nil {
			return fmt.Errorf("memory run with %d partitions: %w", parts, err)
		}
		c, err := r.copyRun(ctx, toolStrait, ts, r.p.TargetCodec, ends, ends, load.PayloadBytes)
		if err != nil {
			return fmt.Errorf("memory run with %d partitions: %w", parts, err)
		}
		r.res.Memory = append(r.res.Memory, c)
	}
	return nil
}

// rssPerPartition is the slope of peak RSS between the smallest and the largest partition
// count measured, in bytes per partition; ok is false with fewer than two counts.
func rssPerPartition(runs []copyResult) (float64, bool) {
	if len(runs) < 2 {
		return 0, false
	}
	lo, hi := runs[0], runs[0]
	for _, c := range runs {
		if c.Partitions < lo.Partitions {
			lo = c
		}
		if c.Partitions > hi.Partitions {
			hi = c
		}
	}
	if hi.Partitions == lo.Partitions {
		return 0, false
	}
	return float64(hi.Process.PeakRSSBytes-lo.Process.PeakRSSBytes) / float64(hi.Partitions-lo.Partitions), true
}
