package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// readerFetchWait is the consumers' fetch.max.wait: short, so a record waits at most
	// this long in the broker before the consumer sees it.
	readerFetchWait = 10 * time.Millisecond
	// rateTick paces the latency producer: records go out in small bursts this often.
	rateTick = 2 * time.Millisecond
	// readyTimeout bounds the wait for a started tool to replicate the probe records.
	readyTimeout = 3 * time.Minute
	probeHeader  = "bench-probe"
)

// latencyStats summarises one consumer's per-record latencies.
type latencyStats struct {
	Received   int64   `json:"received"`
	Missing    int64   `json:"missing"`
	Duplicates int64   `json:"duplicates"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	P999Ms     float64 `json:"p999_ms"`
	MaxMs      float64 `json:"max_ms"`
	MeanMs     float64 `json:"mean_ms"`
}

// latencyResult is one steady-state latency run of a tool.
type latencyResult struct {
	Tool     string  `json:"tool"`
	Run      int     `json:"run"`
	Flow     string  `json:"flow"`
	Topic    string  `json:"source_topic"`
	RateMBps float64 `json:"rate_mb_per_s"`
	Seconds  float64 `json:"produce_s"`
	// Warmup records were written before the measured window and are left out.
	Warmup      int64   `json:"warmup_records"`
	Produced    int64   `json:"produced"`
	ProducedMBs float64 `json:"produced_mb_per_s"`
	// ReadySeconds is tool start to every partition replicating (probe records on B).
	ReadySeconds float64 `json:"ready_s"`
	// Source is the baseline: the same consumer reading the source topic at the same time.
	Source latencyStats `json:"source"`
	Target latencyStats `json:"target"`
	// AddedP50Ms etc. are Target minus Source per statistic (not the percentile of the
	// per-record difference).
	AddedP50Ms float64 `json:"added_p50_ms"`
	AddedP99Ms float64 `json:"added_p99_ms"`
	AddedMaxMs float64 `json:"added_max_ms"`
	// TimestampMismatches counts records whose target timestamp differs from the source's
	// append time: non-zero would make the target latencies meaningless.
	TimestampMismatches int64 `json:"timestamp_mismatches"`
	// ToolCPUSeconds is the tool's CPU over the measured window and the wait for the last
	// records after it.
	ToolCPUSeconds float64   `json:"tool_cpu_s"`
	Process        procStats `json:"process"`
	LoadAvg        string    `json:"load_avg_at_start"`
	// BrokerGC is each broker's GC pauses (a, b) over the measured window and the wait
	// for the last records.
	BrokerGC map[string]gcPauses `json:"broker_gc,omitempty"`
}

// disturbed reports a run whose baseline consumer on A saw a worse p99 than
// the consumer on B: a stall of the whole machine set both tails, and the
// run says nothing about the replicator's.
func (l latencyResult) disturbed() bool { return l.Target.Received > 0 && l.AddedP99Ms < 0 }

// latencyRun measures source-append to target-consumer latency with tool replicating a
// fresh topic that a producer writes at a fixed rate. The records carry the
// producer's CreateTime (the producer, the brokers and the consumers share
// this machine's clock), so Strait forwards their batches as it does most
// topics; with -latency-timestamps logappend the topic stamps
// LogAppendTime, whose batches Strait rebuilds as CreateTime.
func (r *runner) latencyRun(ctx context.Context, tool string, g *generator) (latencyResult, error) {
	p := r.p
	topic := fmt.Sprintf("bench-latency-%d", r.flowsStarted+1)
	f := r.nextFlow(singleTopic(topic, p.Partitions), p.TargetCodec)
	res := latencyResult{Tool: tool, Flow: f.source + "->" + f.target, Topic: topic, RateMBps: p.LatencyRateMBps, LoadAvg: loadAvg()}
	stamp := map[string]*string{}
	if p.LatencyTimestamps == stampLogAppend {
		logAppend := "LogAppendTime"
		stamp["message.timestamp.type"] = &logAppend
	}
	if err := createTopic(ctx, r.src, r.srcOffs, topic, p.Partitions, stamp); err != nil {
		return res, fmt.Errorf("cluster a: %w", err)
	}
	prod, err := newClient(r.tb.a.bootstrap, append(producerOpts(r.tb.a.bootstrap, p.Codec), kgo.ProducerLinger(0))...)
	if err != nil {
		return res, err
	}
	defer prod.Close()

	pr, err := r.launch(tool, f)
	if err != nil {
		return res, err
	}
	defer pr.stop(stopTimeoutTool)
	if err := r.waitReplicating(ctx, pr, prod, topic, f.remoteTopic(), p.Partitions); err != nil {
		return res, err
	}
	res.ReadySeconds = time.Since(pr.started).Seconds()
	r.log.Info("replicating", "tool", tool, "ready_s", res.ReadySeconds)

	// Both readers run from the start of their topics and are live once they have seen
	// every probe; only then does the measured load begin.
	// A tool in exactly-once mode writes B in transactions: its records reach a reader
	// when their transaction commits, so the target's reader reads committed.
	readers := []*latencyReader{{name: "source"}, {name: "target"}}
	for i, t := range []struct {
		boot, topic string
		committed   bool
	}{{r.tb.a.bootstrap, topic, false}, {r.tb.b.bootstrap, f.remoteTopic(), isEOS(tool, p.StraitProps)}} {
		opts := []kgo.Opt{kgo.ConsumeTopics(t.topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchMaxWait(readerFetchWait), kgo.ClientID("strait-bench-latency")}
		if t.committed {
			opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		}
		cl, err := newClient(t.boot, opts...)
		if err != nil {
			return res, err
		}
		defer cl.Close() // after the readers have stopped (deferred below, so run first)
		readers[i].cl = cl
	}
	var wg sync.WaitGroup
	rctx, stopReaders := context.WithCancel(ctx)
	defer func() { stopReaders(); wg.Wait() }()
	for _, rd := range readers {
		wg.Go(func() { rd.run(rctx) })
	}
	err = waitFor(ctx, readyTimeout, 10*time.Millisecond, func() error {
		for _, rd := range readers {
			if n := rd.probes.Load(); n < int64(p.Partitions) {
				return fmt.Errorf("the %s consumer has seen %d of %d probe records", rd.name, n, p.Partitions)
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}

	var (
		st0         procStats
		statErr     error
		windowStart time.Time
	)
	r.log.Info("producing at a fixed rate", "tool", tool, "mb_per_s", p.LatencyRateMBps, "warmup", p.LatencyWarmup.Duration, "for", p.LatencyDuration.Duration)
	load, err := produceAtRate(ctx, prod, g, topic, p.LatencyRateMBps*1e6, p.LatencyWarmup.Duration, p.LatencyDuration.Duration,
		func() { windowStart = time.Now(); st0, statErr = toolStats(pr) })
	if err != nil {
		return res, err
	}
	if statErr != nil {
		return res, statErr
	}
	res.Warmup, res.Produced = load.WarmRecords, load.Records-load.WarmRecords
	res.Seconds, res.ProducedMBs = load.Seconds, mbps(load.Bytes, load.Seconds)
	// Wait for the stragglers; a tool that cannot keep up shows as missing records.
	_ = waitFor(ctx, p.LatencyGrace.Duration, 10*time.Millisecond, func() error {
		for _, rd := range readers {
			if n := rd.count.Load(); n < load.Records {
				return fmt.Errorf("%s consumer: %d of %d", rd.name, n, load.Records)
			}
		}
		return nil
	})
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	st1, err := toolStats(pr)
	if err != nil {
		return res, err
	}
	res.BrokerGC = map[string]gcPauses{}
	for _, c := range []cluster{r.tb.a, r.tb.b} {
		g, err := brokerGC(c.dir, windowStart, time.Now())
		if err != nil {
			return res, fmt.Errorf("cluster %s: %w", c.name, err)
		}
		res.BrokerGC[c.name] = g
	}
	stopReaders()
	wg.Wait()
	pr.stop(stopTimeoutTool)

	res.Process = st1
	res.ToolCPUSeconds = st1.CPUSeconds() - st0.CPUSeconds()
	res.Source = readers[0].stats(load.WarmRecords, load.Records)
	res.Target = readers[1].stats(load.WarmRecords, load.Records)
	res.AddedP50Ms = res.Target.P50Ms - res.Source.P50Ms
	res.AddedP99Ms = res.Target.P99Ms - res.Source.P99Ms
	res.AddedMaxMs = res.Target.MaxMs - res.Source.MaxMs
	for s, ts := range readers[1].ts {
		if src, ok := readers[0].ts[s]; ok && src != ts {
			res.TimestampMismatches++
		}
	}
	if p.LatencyTimestamps == stampLogAppend && readers[0].logAppend != readers[0].received {
		return res, fmt.Errorf("%d of %d records on source topic %q lack LogAppendTime timestamps: the latency baseline would be wrong", readers[0].received-readers[0].logAppend, readers[0].received, topic)
	}
	if r.p.KeepLogs {
		path := filepath.Join(r.work, fmt.Sprintf("%s-%s-latency.csv", f.source, tool))
		if err := writeLatencySamples(path, readers[0], readers[1], load.WarmRecords, load.Records); err != nil {
			return res, err
		}
	}
	r.log.Info("latency run done", "tool", tool, "target_p50_ms", res.Target.P50Ms, "target_p99_ms", res.Target.P99Ms, "source_p99_ms", res.Source.P99Ms, "missing", res.Target.Missing)
	return res, nil
}

// waitReplicating waits until the tool has created the remote topic and replicates every
// partition: one probe record per source partition must reach B.
func (r *runner) waitReplicating(ctx context.Context, pr *proc, prod *kgo.Client, topic, remote string, partitions int) error {
	alive := func() error {
		if exited, how := pr.exited(); exited {
			return pr.failure("exited during startup (%v)", how)
		}
		return nil
	}
	err := waitFor(ctx, readyTimeout, 50*time.Millisecond, func() error {
		if err := alive(); err != nil {
			return err
		}
		n, err := readyPartitions(ctx, r.dst, remote)
		if err != nil {
			return err
		}
		if n != partitions {
			return fmt.Errorf("remote topic %q has %d of %d partitions on cluster b", remote, n, partitions)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s did not create %q: %w", pr.name, remote, err)
	}
	for p := range int32(partitions) {
		rec := &kgo.Record{Topic: topic, Partition: p, Value: []byte("probe"), Headers: []kgo.RecordHeader{{Key: probeHeader}}}
		if err := prod.ProduceSync(ctx, rec).FirstErr(); err != nil {
			return fmt.Errorf("producing a probe record to %q partition %d: %w", topic, p, err)
		}
	}
	want := make([]int64, partitions)
	for i := range want {
		want[i] = 1
	}
	err = waitFor(ctx, readyTimeout, 10*time.Millisecond, func() error {
		if err := alive(); err != nil {
			return err
		}
		offs, err := r.dstOffs.endOffsets(ctx, remote, partitions)
		if err != nil {
			return err
		}
		if ok, n := covered(offs, want); !ok {
			return fmt.Errorf("%d of %d probe records replicated to %q", n, partitions, remote)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s does not replicate every partition of %q: %w", pr.name, topic, err)
	}
	return nil
}

// latencyReader consumes one topic and records, per stamped record, the receive time
// minus the record's timestamp. Only its run goroutine touches the slices and map until
// run has returned; the counters are read while it runs.
type latencyReader struct {
	name   string
	cl     *kgo.Client
	probes atomic.Int64
	count  atomic.Int64

	samples   []sample
	ts        map[int64]int64 // stamp -> record timestamp (ms)
	dups      int64
	received  int64
	logAppend int64
}

func (rd *latencyReader) run(ctx context.Context) {
	rd.ts = make(map[int64]int64)
	for {
		fs := rd.cl.PollFetches(ctx)
		now := time.Now().UnixMicro() // one receive time per poll: the records arrived together
		if ctx.Err() != nil {
			return
		}
		fs.EachRecord(func(rec *kgo.Record) {
			if len(rec.Headers) > 0 && rec.Headers[0].Key == probeHeader {
				rd.probes.Add(1)
				return
			}
			s := stampOf(rec.Value)
			ms := rec.Timestamp.UnixMilli()
			if _, dup := rd.ts[s]; dup || s < 0 {
				rd.dups++
				return
			}
			rd.received++
			if rec.Attrs.TimestampType() == 1 {
				rd.logAppend++
			}
			rd.ts[s] = ms
			rd.samples = append(rd.samples, sample{stamp: s, us: now - ms*1000})
			rd.count.Add(1)
		})
	}
}

// writeLatencySamples writes, for -keep, one line per record of the measured
// window: its number, its timestamp and its latency on A and on B
// (microseconds; -1 when a reader did not see it), so that the tail can be
// set against the tools' logs and the brokers' GC pauses.
func writeLatencySamples(path string, src, tgt *latencyReader, from, produced int64) error {
	byStamp := func(rd *latencyReader) map[int64]int64 {
		m := make(map[int64]int64, len(rd.samples))
		for _, s := range rd.samples {
			m[s.stamp] = s.us
		}
		return m
	}
	a, b := byStamp(src), byStamp(tgt)
	var sb strings.Builder
	sb.WriteString("record,timestamp_ms,a_us,b_us\n")
	for s := from; s < produced; s++ {
		la, ok := a[s]
		if !ok {
			la = -1
		}
		lb, ok := b[s]
		if !ok {
			lb = -1
		}
		fmt.Fprintf(&sb, "%d,%d,%d,%d\n", s, src.ts[s], la, lb)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		return fmt.Errorf("writing the latency samples: %w", err)
	}
	return nil
}

// sample is one record's latency.
type sample struct {
	stamp int64 // the record's number
	us    int64 // receive time minus record timestamp, microseconds
}

// stats summarises the latencies of records from..produced-1 (the measured window, after
// the warm-up); call only after run has returned.
func (rd *latencyReader) stats(from, produced int64) latencyStats {
	var lat []int64
	for _, s := range rd.samples {
		if s.stamp >= from && s.stamp < produced {
			lat = append(lat, s.us)
		}
	}
	n := int64(len(lat))
	st := latencyStats{Received: n, Missing: max(produced-from-n, 0), Duplicates: rd.dups}
	if n == 0 {
		return st
	}
	slices.Sort(lat)
	ms := func(us int64) float64 { return float64(us) / 1000 }
	st.P50Ms = ms(percentile(lat, 50))
	st.P99Ms = ms(percentile(lat, 99))
	st.P999Ms = ms(percentile(lat, 99.9))
	st.MaxMs = ms(lat[n-1])
	var total int64
	for _, l := range lat {
		total += l
	}
	st.MeanMs = ms(total / n)
	return st
}

// percentile returns the nearest-rank percentile q (0 < q <= 100) of sorted values.
func percentile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q/100*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// rateResult is a fixed-rate produce: the warm-up, then the measured window.
type rateResult struct {
	WarmRecords int64 // records 0..WarmRecords-1 were written during the warm-up
	Records     int64 // all records, warm-up included
	Bytes       int64 // payload of the measured window
	Seconds     float64
}

// produceAtRate writes stamped records at bytesPerSec of payload for warmup plus d, in
// small bursts every rateTick, then waits for every acknowledgement. measuring is called
// once, when the warm-up ends.
func produceAtRate(ctx context.Context, cl *kgo.Client, g *generator, topic string, bytesPerSec float64, warmup, d time.Duration, measuring func()) (rateResult, error) {
	var (
		res      rateResult
		sent     int64 // payload bytes since began
		warmSent int64
		mu       sync.Mutex
		failed   int64
		firstErr error
	)
	tick := time.NewTicker(rateTick)
	defer tick.Stop()
	began := time.Now()
	var measureFrom time.Time
	for {
		el := time.Since(began)
		if el >= warmup && measureFrom.IsZero() {
			measureFrom, res.WarmRecords, warmSent = time.Now(), res.Records, sent
			measuring()
		}
		if el >= warmup+d {
			break
		}
		for due := bytesPerSec * el.Seconds(); float64(sent) < due; res.Records++ {
			rec := g.stamped(topic, res.Records)
			sent += payloadBytes(rec)
			cl.Produce(ctx, rec, func(r *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					defer mu.Unlock()
					if failed++; firstErr == nil {
						firstErr = fmt.Errorf("partition %d: %w", r.Partition, err)
					}
				}
			})
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-tick.C:
		}
	}
	res.Seconds = time.Since(measureFrom).Seconds()
	res.Bytes = sent - warmSent
	if err := cl.Flush(ctx); err != nil {
		return res, fmt.Errorf("waiting for the acknowledgements of %q: %w", topic, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if failed > 0 {
		return res, fmt.Errorf("%d of %d records to %q failed; first: %w", failed, res.Records, topic, firstErr)
	}
	return res, nil
}
