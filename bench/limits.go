package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// limitResult is one client-only run: what franz-go alone reaches against one broker.
type limitResult struct {
	Name          string  `json:"name"`
	Cluster       string  `json:"cluster"`
	Topic         string  `json:"topic"`
	Records       int64   `json:"records"`
	PayloadBytes  int64   `json:"payload_bytes"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_s"`
	MBPerSec      float64 `json:"mb_per_s"`
	// SteadyMBPerSec is a consumer's payload over the time from its first record to
	// its last, leaving out its start (bootstrap, metadata, the first fetch's round
	// trip), as the copies' steady figures do; 0 for a producer.
	SteadyMBPerSec     float64 `json:"steady_mb_per_s,omitempty"`
	FirstRecordSeconds float64 `json:"first_record_s,omitempty"`
	ClientCPU          float64 `json:"client_cpu_s"`
	LoadAvg            string  `json:"load_avg_at_start"`
}

func newLimit(name, cluster, topic string, pr produceResult, load string) limitResult {
	l := limitResult{Name: name, Cluster: cluster, Topic: topic, Records: pr.Records, PayloadBytes: pr.PayloadBytes,
		Seconds: pr.Seconds, ClientCPU: pr.ClientCPU, LoadAvg: load}
	if pr.Seconds > 0 {
		l.RecordsPerSec = float64(pr.Records) / pr.Seconds
		l.MBPerSec = mbps(pr.PayloadBytes, pr.Seconds)
	}
	if pr.FirstRecordSeconds > 0 {
		l.FirstRecordSeconds = pr.FirstRecordSeconds
		l.SteadyMBPerSec = mbps(pr.PayloadBytes, pr.Seconds-pr.FirstRecordSeconds)
	}
	return l
}

// limits runs produce-only into B and consume-only from A's backlog (one topic, ts): the
// ceilings a replicator could reach, as it does both at once on the same machine.
func (r *runner) limits(ctx context.Context, g *generator, ts topicSet, codecName string, n int, ends []int64, pl *preloadResult) ([]limitResult, error) {
	var out []limitResult
	if pl != nil {
		out = append(out, newLimit("produce-only (preload)", "a", pl.Topic, pl.produceResult, pl.LoadAvg))
	}

	topic := ts.names[0] + "-limit-produce"
	load := loadAvg()
	if err := createTopic(ctx, r.dst, r.dstOffs, topic, ts.partitions, nil); err != nil {
		return out, fmt.Errorf("cluster b: %w", err)
	}
	defer r.deleteTopics(ctx, r.dst, []string{topic})
	cl, err := newClient(r.tb.b.bootstrap, producerOpts(r.tb.b.bootstrap, codecName)...)
	if err != nil {
		return out, err
	}
	r.log.Info("client limit: produce-only", "cluster", "b", "records", n)
	pr, err := produceBacklog(ctx, cl, g, []string{topic}, n)
	cl.Close()
	if err != nil {
		return out, fmt.Errorf("producing to %q on cluster b: %w", topic, err)
	}
	out = append(out, newLimit("produce-only", "b", topic, pr, load))

	load = loadAvg()
	r.log.Info("client limit: consume-only", "cluster", "a", "topic", ts.names[0])
	cr, err := consumeAll(ctx, r.tb.a.bootstrap, ts.names[0], ends)
	if err != nil {
		return out, err
	}
	out = append(out, newLimit("consume-only", "a", ts.names[0], cr, load))
	return out, nil
}

// consumeAll reads partitions 0..len(ends)-1 of topic from the start up to ends, with
// the fetch sizes the replicators get (4 MiB per partition); opts come last, so they can
// change those.
func consumeAll(ctx context.Context, bootstrap, topic string, ends []int64, opts ...kgo.Opt) (produceResult, error) {
	offsets := map[int32]kgo.Offset{}
	for p := range ends {
		offsets[int32(p)] = kgo.NewOffset().AtStart()
	}
	cl, err := newClient(bootstrap, append([]kgo.Opt{kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxPartitionBytes(4 << 20), kgo.ClientID("strait-bench-consumer")}, opts...)...)
	if err != nil {
		return produceResult{}, err
	}
	defer cl.Close()
	var res produceResult
	next := make([]int64, len(ends))
	cpu0, began := selfCPU(), time.Now()
	for {
		if done, _ := covered(next, ends); done {
			break
		}
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return res, err
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			ferr = fmt.Errorf("consuming %q partition %d: %w", t, p, err)
		})
		if ferr != nil {
			return res, ferr
		}
		fs.EachRecord(func(rec *kgo.Record) {
			if res.Records == 0 {
				res.FirstRecordSeconds = time.Since(began).Seconds()
			}
			res.Records++
			res.PayloadBytes += payloadBytes(rec)
			next[rec.Partition] = rec.Offset + 1
		})
	}
	res.Seconds = time.Since(began).Seconds()
	res.ClientCPU = selfCPU() - cpu0
	return res, nil
}
