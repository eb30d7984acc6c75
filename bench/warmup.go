package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// warmupRecords is what each broker takes before the first cell: 1 KiB
// records, written and read back.
const warmupRecords = 300_000

// warmupResult is the brokers' warm-up.
type warmupResult struct {
	Bytes   int64   `json:"bytes_per_broker"`
	Seconds float64 `json:"seconds"`
}

// warmBrokers writes warmupRecords into a topic of each cluster and reads
// them back. A broker's JVM compiles its produce and fetch paths while it
// serves them: without this the first copy of the first cell, always a
// Strait run, met cold brokers (1 KiB × 8p, 1,000,000 records, Strait
// alone, 3 runs: 348, 193, 509 and 207, 310, 681 MB/s on two binaries, the
// later runs faster).
func (r *runner) warmBrokers(ctx context.Context) (*warmupResult, error) {
	began := time.Now()
	g := newGenerator(1024, 0, 8)
	res := &warmupResult{}
	for _, c := range []struct {
		name      string
		bootstrap string
		admin     *kgo.Client
		offs      *offsetReader
	}{{"a", r.tb.a.bootstrap, r.src, r.srcOffs}, {"b", r.tb.b.bootstrap, r.dst, r.dstOffs}} {
		topic := "bench-warmup"
		if err := createTopic(ctx, c.admin, c.offs, topic, 8, nil); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.name, err)
		}
		prod, err := newClient(c.bootstrap, producerOpts(c.bootstrap, "none")...)
		if err != nil {
			return nil, err
		}
		pr, err := produceBacklog(ctx, prod, g, []string{topic}, warmupRecords)
		prod.Close()
		if err != nil {
			return nil, fmt.Errorf("cluster %s: warming up: %w", c.name, err)
		}
		res.Bytes = pr.PayloadBytes
		cons, err := newClient(c.bootstrap, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			return nil, err
		}
		for n := 0; n < warmupRecords; {
			fs := cons.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				cons.Close()
				return nil, err
			}
			n += fs.NumRecords()
		}
		cons.Close()
	}
	res.Seconds = time.Since(began).Seconds()
	return res, nil
}
