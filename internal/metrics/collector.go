package metrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"strait/internal/daemon"
	"strait/internal/mirror"
	"strait/internal/window"
)

// collector renders a status snapshot at each scrape. It describes no
// metrics up front (an unchecked collector): its series depend on the
// flows, topics and groups the snapshot holds.
type collector struct{ r *Registry }

func (collector) Describe(chan<- *prometheus.Desc) {}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	r := c.r
	r.mu.Lock() // one scrape at a time: rates are kept between scrapes
	defer r.mu.Unlock()
	src := r.source
	if src == nil {
		return
	}
	now := r.opts.Now()
	e := emitter{ch: ch}
	st := src.Status()
	for _, f := range st.Flows {
		r.flowSeries(&e, f, now)
		r.mm2Series(&e, f, now)
	}
	r.rates.forget(now)
}

// emitter sends const metrics, building each family's Desc once per scrape.
type emitter struct {
	ch    chan<- prometheus.Metric
	descs map[string]*prometheus.Desc
}

func (e *emitter) emit(name, help string, kind prometheus.ValueType, v float64, labels []string, values ...string) {
	if e.descs == nil {
		e.descs = map[string]*prometheus.Desc{}
	}
	d := e.descs[name]
	if d == nil {
		d = prometheus.NewDesc(name, help, labels, nil)
		e.descs[name] = d
	}
	e.ch <- prometheus.MustNewConstMetric(d, kind, v, values...)
}

// topicAgg sums or maxes a topic's partitions into one series (or keeps
// one per partition with partition labels).
type topicAgg struct {
	records, bytes, lag int64
	lagSeconds          float64 // max over partitions; -1 while none is known
	age                 float64 // max over partitions of the average record age, ms; -1 without samples
}

func (r *Registry) flowSeries(e *emitter, f daemon.FlowStatus, now time.Time) {
	labels := r.topicLabels()
	aggs := map[string]*topicAgg{}
	var keys [][]string
	counts := map[[2]string]int{}
	for _, p := range f.Mirror.Partitions {
		counts[[2]string{p.Path, p.State}]++
		if p.State == mirror.StateStopped {
			e.emit("strait_partition_stopped", "1 for each partition that stopped and copies nothing until Strait restarts; reason is its error.", prometheus.GaugeValue, 1,
				[]string{"flow", "topic", "partition", "reason"}, f.Name, p.Topic, itoa(p.Partition), reason(p.Error))
		}
		values := r.topicValues(f.Name, p.Topic, p.Partition)
		k := strings.Join(values, "\x00")
		a := aggs[k]
		if a == nil {
			a = &topicAgg{lagSeconds: -1, age: -1}
			aggs[k] = a
			keys = append(keys, values)
		}
		a.records += p.Records
		a.bytes += p.Bytes
		a.lag += p.Lag
		a.lagSeconds = max(a.lagSeconds, p.LagSeconds)
		if p.Age.Count > 0 {
			a.age = max(a.age, p.Age.Avg)
		}
	}
	for _, values := range keys {
		a := aggs[strings.Join(values, "\x00")]
		e.emit("strait_records_copied_total", "Records the target acknowledged, copied by this process.", prometheus.CounterValue, float64(a.records), labels, values...)
		e.emit("strait_bytes_copied_total", "Bytes the target acknowledged, copied by this process (record batches as written on the fast path; keys, values and headers on the record path).", prometheus.CounterValue, float64(a.bytes), labels, values...)
		e.emit("strait_lag_records", "Records on the source not yet copied: source end offset minus the next offset to copy, summed over partitions (RPO in records).", prometheus.GaugeValue, float64(a.lag), labels, values...)
		if a.lagSeconds >= 0 {
			e.emit("strait_lag_seconds", "Age of the oldest record not yet copied, the oldest over partitions; 0 when caught up (RPO in time).", prometheus.GaugeValue, a.lagSeconds, labels, values...)
		}
		if a.lag > 0 && a.lagSeconds > 0 {
			e.emit("strait_oldest_not_copied_timestamp_seconds", "When the oldest record not yet copied was written, as Unix seconds; absent when caught up (a failover now loses what was written since).", prometheus.GaugeValue, float64(now.UnixMilli())/1000-a.lagSeconds, labels, values...)
		}
		if a.age >= 0 {
			e.emit("strait_record_age_seconds", "Average age of records when fetched from the source over the last minute, the largest over partitions (MM2's record-age-ms).", prometheus.GaugeValue, a.age/1000, labels, values...)
		}
	}
	for _, path := range []string{"fast", "record"} {
		for _, state := range []string{mirror.StateStarting, mirror.StateFlowing, mirror.StateCaughtUp, mirror.StateStopped} {
			e.emit("strait_partitions", "Partitions by path (fast: raw batches; record: record by record) and state.", prometheus.GaugeValue, float64(counts[[2]string{path, state}]),
				[]string{"flow", "path", "state"}, f.Name, path, state)
		}
	}
	for kind, n := range f.Mirror.Errors {
		e.emit("strait_errors_total", "Kafka errors met by the data plane, by kind: the side (fetch, produce) and what Strait does about it (retriable: retried; producer_state: new producer id; rejected: the record path copies it or the partition stops; truncated, fatal: the partition stops).", prometheus.CounterValue, float64(n),
			[]string{"flow", "kind"}, f.Name, kind)
	}
	if f.Mirror.ExactlyOnce {
		help := "Exactly-once mode's transactions: committed, and aborted (the attempt started again from the last committed one)."
		e.emit("strait_transactions_total", help, prometheus.CounterValue, float64(f.Mirror.Transactions), []string{"flow", "result"}, f.Name, "committed")
		e.emit("strait_transactions_total", help, prometheus.CounterValue, float64(f.Mirror.AbortedTransactions), []string{"flow", "result"}, f.Name, "aborted")
	}
	e.emit("strait_bad_internal_records_total", "Undecodable records skipped in internal topics (offset index, MM2 offsets, checkpoints).", prometheus.CounterValue, float64(f.BadInternalRecords), []string{"flow"}, f.Name)
	if cp := f.Checkpoints; cp != nil {
		e.emit("strait_checkpoints_emitted_total", "Checkpoint records written to the target.", prometheus.CounterValue, float64(cp.Emitted), []string{"flow"}, f.Name)
		e.emit("strait_group_offsets_synced_total", "Consumer group offsets committed on the target (sync.group.offsets).", prometheus.CounterValue, float64(cp.Synced), []string{"flow"}, f.Name)
		e.emit("strait_checkpoint_groups", "Consumer groups the flow checkpoints.", prometheus.GaugeValue, float64(cp.Groups), []string{"flow"}, f.Name)
		if !cp.Current.IsZero() {
			e.emit("strait_checkpoint_age_seconds", "Time since the checkpoints of every group were last written or confirmed current.", prometheus.GaugeValue, now.Sub(cp.Current).Seconds(), []string{"flow"}, f.Name)
		}
	}
}

// mm2Series are MM2's source and checkpoint connector metrics as the JMX
// exporter rules of Strimzi and Kafka's examples name them (lower case,
// dashes as underscores, the MBean's tags as labels), one set per remote
// partition as MM2 has.
func (r *Registry) mm2Series(e *emitter, f daemon.FlowStatus, now time.Time) {
	const src = "kafka_connect_mirror_source_connector_"
	labels := []string{"source", "target", "topic", "partition"}
	for _, p := range f.Mirror.Partitions {
		values := []string{f.Source, f.Target, p.Remote, itoa(p.Partition)}
		recRate, byteRate := r.rates.observe(f.Name+"\x00"+p.Remote+"\x00"+itoa(p.Partition), p.Records, p.Bytes, now)
		e.emit(src+"record_count", "MM2 record-count: records the target acknowledged.", prometheus.GaugeValue, float64(p.Records), labels, values...)
		e.emit(src+"record_rate", "MM2 record-rate: records per second over the last minute.", prometheus.GaugeValue, recRate, labels, values...)
		e.emit(src+"byte_count", "MM2 byte-count: bytes copied (Strait counts batch bytes on the fast path, key, value and header bytes on the record path; MM2 counts value bytes).", prometheus.GaugeValue, float64(p.Bytes), labels, values...)
		e.emit(src+"byte_rate", "MM2 byte-rate: bytes per second over the last minute.", prometheus.GaugeValue, byteRate, labels, values...)
		windowed(e, src+"record_age_ms", "MM2 record-age-ms: now minus the record timestamp when fetched", p.Age, labels, values)
		windowed(e, src+"replication_latency_ms", "MM2 replication-latency-ms: now minus the record timestamp when the target acknowledged it", p.Latency, labels, values)
	}
	cp := f.Checkpoints
	if cp == nil {
		return
	}
	const ckp = "kafka_connect_mirror_checkpoint_connector_"
	labels = []string{"source", "target", "group", "topic", "partition"}
	for _, g := range cp.Checkpointed {
		// MM2 shares one checkpoint-latency sensor between every group
		// partition of a task, so every instance shows the task's figures.
		windowed(e, ckp+"checkpoint_latency_ms", "MM2 checkpoint-latency-ms: a checkpoint's creation to the target's acknowledgement", cp.Latency, labels,
			[]string{f.Source, f.Target, g.Group, g.Topic, itoa(g.Partition)})
	}
}

// windowed emits an MM2 windowed attribute and its -min, -max and -avg.
func windowed(e *emitter, name, help string, s window.Stats, labels, values []string) {
	e.emit(name, help+" (the last value), ms.", prometheus.GaugeValue, s.Last, labels, values...)
	e.emit(name+"_min", help+", the least over the last minute, ms.", prometheus.GaugeValue, s.Min, labels, values...)
	e.emit(name+"_max", help+", the most over the last minute, ms.", prometheus.GaugeValue, s.Max, labels, values...)
	e.emit(name+"_avg", help+", the average over the last minute, ms.", prometheus.GaugeValue, s.Avg, labels, values...)
}

// reason is an error's first line, cut to a label's sensible length.
func reason(err string) string {
	if i := strings.IndexByte(err, '\n'); i >= 0 {
		err = err[:i]
	}
	if len(err) > 200 {
		err = err[:200] + "…"
	}
	return err
}
