package main

import (
	"fmt"
	"strconv"
	"strings"
)

// flowSpec is one replication flow the harness runs: both tools read the same file.
type flowSpec struct {
	source, target       string // MM2 cluster aliases, unique per tool run
	sourceBoot, destBoot string
	topic                string   // the source topic, or the regex of the source topics (letters, digits, '-', ".*")
	names                []string // the source topics topic matches; nil: topic alone
	tuning               mm2Tuning
	targetCodec          string // compression.type of the target producer; "" writes none (unset)
	straitProps          string // key=value;... for Strait's file only
	// cluster makes Strait's nodes share the flow (the nodes mode): every process
	// started with the file joins the flow's group, each with an API port of its own.
	cluster bool
	// mm2RestPort is the port of MM2's internal REST server, which its exactly-once
	// mode needs for fencing (mm2-eos only).
	mm2RestPort int
}

// remoteTopic is the topic's name on the target under MM2's DefaultReplicationPolicy.
func (f flowSpec) remoteTopic() string { return f.source + "." + f.topic }

// remoteTopics are the target topics of every source topic of the flow.
func (f flowSpec) remoteTopics() []string {
	if len(f.names) == 0 {
		return []string{f.remoteTopic()}
	}
	out := make([]string, len(f.names))
	for i, n := range f.names {
		out[i] = f.source + "." + n
	}
	return out
}

// wantedMM2Settings are the client settings the file gives MM2's data producer (to the
// target) and its source consumers, as MM2 logs them in ProducerConfig and ConsumerConfig;
// with eos (mm2-eos) also read_committed sources and transactional producers.
func (f flowSpec) wantedMM2Settings(eos bool) mm2Wanted {
	t := f.tuning
	w := mm2Wanted{
		producerBootstrap: f.destBoot,
		consumerBootstrap: f.sourceBoot,
		producer: map[string]string{
			"batch.size":       strconv.Itoa(t.BatchSize),
			"linger.ms":        strconv.Itoa(t.LingerMs),
			"max.request.size": strconv.Itoa(t.MaxRequestSize),
		},
		consumer: map[string]string{
			"fetch.max.bytes":           strconv.Itoa(t.FetchMaxBytes),
			"max.partition.fetch.bytes": strconv.Itoa(t.PartitionFetch),
			"max.poll.records":          strconv.Itoa(t.MaxPollRecords),
		},
	}
	if f.targetCodec != "" {
		w.producer["compression.type"] = f.targetCodec
	}
	if t.IdempotentProduce {
		w.producer["enable.idempotence"] = "true"
		w.producer["max.in.flight.requests.per.connection"] = strconv.Itoa(t.MaxInFlight)
	}
	if eos {
		w.consumer["isolation.level"] = "read_committed"
		w.transactional = true
	}
	return w
}

// wantedMM2Defaults are the client defaults MM2 must log when its file holds no tuning
// (mm2-default): Kafka's producer batch.size and consumer fetch sizes, which the tuned
// file changes, and the cell's compression.type.
func (f flowSpec) wantedMM2Defaults() mm2Wanted {
	w := mm2Wanted{
		producerBootstrap: f.destBoot,
		consumerBootstrap: f.sourceBoot,
		producer:          map[string]string{"batch.size": "16384"},
		consumer: map[string]string{
			"fetch.max.bytes":           "52428800",
			"max.partition.fetch.bytes": "1048576",
			"max.poll.records":          "500",
		},
	}
	if f.targetCodec != "" {
		w.producer["compression.type"] = f.targetCodec
	}
	return w
}

// properties renders the MM2 dedicated-mode configuration of the flow for tool. Aliases are
// unique per run, so no remote topic, internal topic or group of one run can collide with
// another's. The file is the same for both tools but for one line, see below.
func (f flowSpec) properties(tool string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	t := f.tuning
	if atDefaults(tool) {
		w("# Written by bench (go run ./bench): flow %s->%s, for %s at its defaults (%s).", f.source, f.target, toolLabel(baseTool(tool)), tool)
	} else {
		w("# Written by bench (go run ./bench): flow %s->%s, read by Strait and by MM2 alike.", f.source, f.target)
	}
	w("clusters = %s, %s", f.source, f.target)
	w("%s.bootstrap.servers = %s", f.source, f.sourceBoot)
	w("%s.bootstrap.servers = %s", f.target, f.destBoot)
	w("%s->%s.enabled = true", f.source, f.target)
	// The topic name holds no regex or properties escape characters.
	w("topics = %s", f.topic)
	w("# Single-broker clusters: every topic the tools create needs replication factor 1.")
	for _, k := range []string{"replication.factor", "checkpoints.topic.replication.factor", "heartbeats.topic.replication.factor",
		"offset-syncs.topic.replication.factor", "offset.storage.replication.factor", "status.storage.replication.factor",
		"config.storage.replication.factor"} {
		w("%s = 1", k)
	}
	w("sync.topic.acls.enabled = false")
	if atDefaults(tool) {
		w("# At its defaults: no tuning (MM2: 1 task, 16 KiB batches, 1 MiB per partition fetches, ...).")
		if f.targetCodec != "" {
			w("# The cell's compression.type on the target, as for every tool:")
			w("%s.producer.compression.type = %s", f.target, f.targetCodec)
		}
		if t.OffsetFlushMs > 0 {
			w("%s.offset.flush.interval.ms = %d", f.target, t.OffsetFlushMs)
		}
		return b.String()
	}
	w("# Tuning (bench/README.md explains each): one MM2 task per partition,")
	w("tasks.max = %d", t.TasksMax)
	w("# large producer batches with a short linger, the benchmark's compression.type,")
	w("%s.producer.batch.size = %d", f.target, t.BatchSize)
	w("%s.producer.linger.ms = %d", f.target, t.LingerMs)
	if f.targetCodec != "" {
		w("%s.producer.compression.type = %s", f.target, f.targetCodec)
	} else {
		w("# (compression.type unset: MM2 writes uncompressed, Strait keeps each batch's source codec)")
	}
	w("%s.producer.max.request.size = %d", f.target, t.MaxRequestSize)
	if t.IdempotentProduce {
		w("# ordered like Strait's idempotent producer, with %d requests in flight instead of Connect's 1,", t.MaxInFlight)
		w("%s.producer.enable.idempotence = true", f.target)
		w("%s.producer.max.in.flight.requests.per.connection = %d", f.target, t.MaxInFlight)
	}
	w("# and large fetches from the source.")
	w("%s.consumer.fetch.max.bytes = %d", f.source, t.FetchMaxBytes)
	w("%s.consumer.max.partition.fetch.bytes = %d", f.source, t.PartitionFetch)
	w("%s.consumer.max.poll.records = %d", f.source, t.MaxPollRecords)
	if t.OffsetFlushMs > 0 {
		w("%s.offset.flush.interval.ms = %d", f.target, t.OffsetFlushMs)
	}
	if tool == toolMM2EOS {
		w("# Exactly-once (KIP-618): transactional task producers, each transaction holding a poll's")
		w("# records and their source offsets; fencing needs the internal REST server. (Not")
		w("# exactly.once.support = required: the heartbeat and checkpoint connectors refuse it.)")
		w("%s.exactly.once.source.support = enabled", f.target)
		w("dedicated.mode.enable.internal.rest = true")
		w("listeners = http://127.0.0.1:%d", f.mm2RestPort)
		w("%s.consumer.isolation.level = read_committed", f.source)
	}
	if baseTool(tool) == toolStrait && (tool == toolStraitEOS || tool == toolStraitKeep || f.cluster) {
		w("# Strait only:")
	}
	if tool == toolStraitEOS {
		w("# exactly-once mode, a transaction committed every offset.flush.interval.ms (1 s by default),")
		w("strait.exactly.once = true")
	}
	if tool == toolStraitKeep {
		w("# every record at its source offset on the target, gaps filled,")
		w("strait.offsets.preserve = true")
	}
	if baseTool(tool) == toolStrait && f.cluster {
		w("# every process started with this file shares the flow (as always), each with an API port of its own,")
		w("strait.api.listen = 127.0.0.1:0")
	}
	if baseTool(tool) == toolStrait && f.straitProps != "" {
		w("# Strait only (-strait-props):")
		for _, kv := range strings.Split(f.straitProps, ";") {
			if kv = strings.TrimSpace(kv); kv != "" {
				w("%s", kv)
			}
		}
	}
	return b.String()
}
