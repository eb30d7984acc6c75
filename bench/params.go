package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Modes of a run.
const (
	modeCompare = "compare" // backlog copy, latency and client limits, per tool
	modeMemory  = "memory"  // Strait only: peak RSS at a small and a large partition count
	modeNodes   = "nodes"   // Strait only: one backlog copied by 1, 2, 3... nodes sharing the flow
	modeScale   = "scale"   // Strait (and -tools): thousands of topics on one node, issue 23 (scale.go)
	modeAll     = "all"     // compare, then memory
)

// Phases of the compare mode.
const (
	phaseCopy    = "copy"
	phaseLatency = "latency"

	stampCreate    = "create"
	stampLogAppend = "logappend"
	phaseLimits    = "limits"
)

// Tools that can be measured. The -eos variants run the same replicator in its
// exactly-once mode: Strait with strait.exactly.once = true, MM2 with
// <target>.exactly.once.source.support = enabled (props.go).
const (
	toolStrait    = "strait"
	toolMM2       = "mm2"
	toolStraitEOS = "strait-eos"
	toolMM2EOS    = "mm2-eos"
	// toolMM2Default is MM2 at its defaults: its file holds only what it needs to run
	// (clusters, topics, replication factors), none of the tuning of toolMM2 (props.go).
	toolMM2Default = "mm2-default"
	// toolStraitDefault is Strait reading the same file as mm2-default: Strait at its
	// defaults (no max.partition.fetch.bytes, so its fetches grow with the link).
	toolStraitDefault = "strait-default"
	// toolStraitKeep is Strait keeping the source's offsets (strait.offsets.preserve):
	// its copy is complete when B ends where A does, filler included.
	toolStraitKeep = "strait-keep"
)

// allTools are the tools in the order reports list them: each replicator, then its
// exactly-once variant, then the replicator at its defaults.
var allTools = []string{toolStrait, toolStraitEOS, toolStraitKeep, toolStraitDefault, toolMM2, toolMM2EOS, toolMM2Default}

// baseTool is the replicator a tool runs: strait or mm2.
func baseTool(tool string) string {
	switch tool {
	case toolStraitEOS, toolStraitDefault, toolStraitKeep:
		return toolStrait
	case toolMM2EOS, toolMM2Default:
		return toolMM2
	}
	return tool
}

// atDefaults reports whether tool reads the file without the tuning (props.go).
func atDefaults(tool string) bool { return tool == toolMM2Default || tool == toolStraitDefault }

// eosVariant is the exactly-once variant of a replicator (strait -> strait-eos).
func eosVariant(tool string) string { return tool + "-eos" }

// isEOS reports whether tool writes B in transactions: an -eos variant, or Strait
// with strait.exactly.once=true among -strait-props.
func isEOS(tool, straitProps string) bool {
	switch tool {
	case toolStraitEOS, toolMM2EOS:
		return true
	case toolStrait:
		return strings.Contains(strings.ReplaceAll(straitProps, " ", ""), "strait.exactly.once=true")
	}
	return false
}

// params are every knob of a run; they are written into the results as they were used.
type params struct {
	Mode   string   `json:"mode"`
	Tools  []string `json:"tools"`
	Phases []string `json:"phases"`
	// Runs is how many copies of each cell every tool makes, alternating the tools.
	Runs int `json:"runs"`
	// Matrix is "", reduced or full: the cells of the compare mode (see matrix.go).
	Matrix string `json:"matrix,omitempty"`
	// MatrixScale multiplies every matrix cell's backlog; MatrixCells picks cells by
	// number (1-based), all when empty.
	MatrixScale float64 `json:"matrix_scale,omitempty"`
	MatrixCells []int   `json:"matrix_cells,omitempty"`
	// MatrixEOS are the replicators whose exactly-once variant the matrix's
	// exactly-once cell (cell 1's workload) runs next to the default mode.
	MatrixEOS []string `json:"matrix_eos,omitempty"`
	// Nodes are the node counts of the nodes mode, each run -runs times, alternating.
	Nodes []int `json:"nodes,omitempty"`
	// LinkRTTs and LinkMBps shape the distance matrix (-matrix distance): a cell per
	// round trip, uncapped and capped at LinkMBps (0: no capped cells), see link.go.
	LinkRTTs []duration `json:"link_rtts,omitempty"`
	LinkMBps float64    `json:"link_cap_mb_per_s,omitempty"`

	Records    int    `json:"records"`
	RecordSize int    `json:"record_size_bytes"`
	Partitions int    `json:"partitions"`
	Codec      string `json:"codec"`
	// TargetCodec is the replicators' producer compression.type on B.
	TargetCodec string `json:"target_codec"`
	KeySpread   int    `json:"key_spread"`

	LatencyRateMBps float64  `json:"latency_rate_mb_per_s"`
	LatencyWarmup   duration `json:"latency_warmup"`
	LatencyDuration duration `json:"latency_duration"`
	LatencyGrace    duration `json:"latency_grace"`
	// LatencyTimestamps is the latency topic's timestamps: stampCreate
	// (the producer's) or stampLogAppend (the source broker's).
	LatencyTimestamps string `json:"latency_timestamps,omitempty"`
	// Timestamps is the backlog topics' timestamps, stampCreate or
	// stampLogAppend (Strait rebuilds every batch of such a topic).
	Timestamps string `json:"timestamps,omitempty"`
	// SourceTxn writes the backlog in committed transactions of this many records (a
	// marker after each, in every partition it wrote); 0 writes it without.
	SourceTxn   int      `json:"source_txn_records,omitempty"`
	CopyTimeout duration `json:"copy_timeout"`

	MemPartitions          []int `json:"memory_partitions"`
	MemRecordsPerPartition int   `json:"memory_records_per_partition"`

	// ScaleTopics are the topic counts of the scale mode, each with ScalePartitions
	// partitions and ScaleRecords records in every partition (scale.go).
	ScaleTopics     []int `json:"scale_topics,omitempty"`
	ScalePartitions int   `json:"scale_partitions,omitempty"`
	ScaleRecords    int   `json:"scale_records_per_partition,omitempty"`

	MM2 mm2Tuning `json:"mm2_tuning"`

	BrokerHeap string `json:"broker_heap"`
	// ReadAheadKB is the read-ahead the disk under the brokers gets for the
	// run, 0 to leave it (readahead.go).
	ReadAheadKB int    `json:"read_ahead_kb"`
	StraitBin   string `json:"strait_bin,omitempty"`
	// StraitProps are extra properties for Strait's file only
	// ("key=value;key=value"), e.g. strait.fast.path=false to measure the
	// record path.
	StraitProps string `json:"strait_props,omitempty"`
	OutDir      string `json:"-"`
	Rerender    string `json:"-"`
	// Docs rewrites the generated sections of the README and docs/performance.md from the
	// latest reports (docs.go); no measurement.
	Docs     bool `json:"-"`
	KeepLogs bool `json:"-"`
	// linkFlags is -link-rtt or -link-mbps given without -matrix distance: an error.
	linkFlags bool
}

// mm2Tuning is what MM2 gets beyond its defaults. It is written into every properties file,
// so Strait reads the same keys (those that mean nothing to it produce a warning).
type mm2Tuning struct {
	Heap string `json:"heap"`
	// TasksMax is tasks.max; 0 means "the partition count".
	TasksMax          int  `json:"tasks_max"`
	BatchSize         int  `json:"producer_batch_size"`
	LingerMs          int  `json:"producer_linger_ms"`
	MaxInFlight       int  `json:"producer_max_in_flight"`
	MaxRequestSize    int  `json:"producer_max_request_size"`
	FetchMaxBytes     int  `json:"consumer_fetch_max_bytes"`
	PartitionFetch    int  `json:"consumer_max_partition_fetch_bytes"`
	MaxPollRecords    int  `json:"consumer_max_poll_records"`
	OffsetFlushMs     int  `json:"offset_flush_interval_ms"` // 0: leave each tool's default
	IdempotentProduce bool `json:"producer_enable_idempotence"`
}

func defaultParams() params {
	return params{
		Mode:                   modeCompare,
		Tools:                  []string{toolStrait, toolMM2},
		Phases:                 []string{phaseCopy, phaseLatency, phaseLimits},
		Runs:                   3,
		MatrixScale:            1,
		MatrixEOS:              []string{toolStrait},
		Nodes:                  []int{1, 2, 3},
		LinkRTTs:               []duration{{20 * time.Millisecond}, {80 * time.Millisecond}, {150 * time.Millisecond}},
		LinkMBps:               100,
		Records:                2_000_000,
		RecordSize:             1024,
		Partitions:             8,
		Codec:                  "none",
		TargetCodec:            "same",
		KeySpread:              10_000,
		LatencyRateMBps:        5,
		LatencyTimestamps:      stampCreate,
		Timestamps:             stampCreate,
		LatencyWarmup:          duration{30 * time.Second}, // also the brokers' JIT warm-up when no copy ran before
		LatencyDuration:        duration{60 * time.Second},
		LatencyGrace:           duration{30 * time.Second},
		CopyTimeout:            duration{5 * time.Minute},
		MemPartitions:          []int{100, 2000},
		MemRecordsPerPartition: 50,
		ScaleTopics:            []int{2000, 5000},
		ScalePartitions:        2,
		ScaleRecords:           20,
		MM2: mm2Tuning{
			Heap:              "2g",
			BatchSize:         262_144,
			LingerMs:          10,
			MaxInFlight:       5,
			MaxRequestSize:    1_048_576,
			FetchMaxBytes:     52_428_800,
			PartitionFetch:    4_194_304,
			MaxPollRecords:    2000,
			IdempotentProduce: true,
		},
		BrokerHeap:  "1g",
		ReadAheadKB: 128,
		OutDir:      "bench/results",
	}
}

// parseParams reads the command line; it returns flag.ErrHelp for -h.
func parseParams(args []string, stderr io.Writer) (params, error) {
	p := defaultParams()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: go run ./bench [flags]\n\nStrait versus Apache MirrorMaker 2 on two local Kafka clusters; see bench/README.md.\n\n")
		fs.PrintDefaults()
	}
	var tools, phases, memParts, matrixCells, matrixEOS, nodes, linkRTTs, scaleTopics string
	matrix := matrixFlag{}
	fs.StringVar(&p.Mode, "mode", p.Mode, "compare (copy, latency, client limits per tool), memory (Strait peak RSS versus partitions), nodes (Strait on 1, 2, 3 nodes sharing a flow; -nodes alone selects it), scale (Strait on thousands of topics: start time and peak RSS, -scale-*) or all (compare, then memory)")
	fs.StringVar(&tools, "tools", strings.Join(p.Tools, ","), "tools to measure, in this order: strait, mm2, their exactly-once variants strait-eos, mm2-eos, and mm2-default (MM2 without the tuning); -matrix distance: strait,mm2,mm2-default unless set")
	fs.StringVar(&phases, "phases", strings.Join(p.Phases, ","), "phases of the compare mode: copy, latency, limits")
	fs.IntVar(&p.Runs, "runs", p.Runs, "copies of each cell per tool, alternating the tools (strait, mm2, strait, ...); the report shows median and range")
	fs.Var(&matrix, "matrix", "run the workload matrix instead of one cell: -matrix (the reduced one, at most 15 minutes), -matrix full (every combination, hours) or -matrix distance (cluster A behind a latency proxy, -link-rtt, -link-mbps); see bench/README.md")
	fs.Float64Var(&p.MatrixScale, "matrix-scale", p.MatrixScale, "multiply every matrix cell's backlog by this (e.g. 0.05 for a quick trial of the matrix)")
	fs.StringVar(&matrixCells, "matrix-cells", "", "run only these matrix cells, by number (e.g. 1,4; -matrix lists them at the start)")
	fs.StringVar(&matrixEOS, "matrix-eos", strings.Join(p.MatrixEOS, ","), "replicators whose exactly-once variant also runs on cell 1's workload (1 KiB x 8p, uncompressed), the matrix's exactly-once row: strait, strait,mm2 or none")
	fs.StringVar(&linkRTTs, "link-rtt", joinDurations(p.LinkRTTs), "-matrix distance: round trips between the tools and cluster A, half of each added on each direction (whole, even milliseconds)")
	fs.Float64Var(&p.LinkMBps, "link-mbps", p.LinkMBps, "-matrix distance: the bandwidth cap of the capped cells, MB/s each direction over all connections to A together (100 ~ a 1 Gb/s link; 0: uncapped cells only)")
	fs.StringVar(&nodes, "nodes", joinInts(p.Nodes), "nodes mode: node counts sharing the flow, each -runs times, alternating (Strait only; giving -nodes selects -mode nodes)")
	fs.IntVar(&p.Records, "records", p.Records, "records in the backlog topic")
	fs.IntVar(&p.RecordSize, "record-size", p.RecordSize, "value size in bytes of each record")
	fs.IntVar(&p.Partitions, "partitions", p.Partitions, "partitions of the backlog and latency topics")
	fs.StringVar(&p.Codec, "codec", p.Codec, "producer compression of the source data: none, gzip, snappy, lz4, zstd")
	fs.StringVar(&p.TargetCodec, "target-codec", p.TargetCodec, "compression.type of the replicators' producer on B: none, gzip, snappy, lz4, zstd, same (as -codec) or unset (not written: MM2 writes uncompressed, Strait keeps each batch's codec)")
	fs.IntVar(&p.KeySpread, "keys", p.KeySpread, "distinct record keys (0: null keys); records go to partition key%partitions")
	fs.Float64Var(&p.LatencyRateMBps, "rate", p.LatencyRateMBps, "latency run: producer rate in MB/s of payload")
	fs.DurationVar(&p.LatencyWarmup.Duration, "latency-warmup", p.LatencyWarmup.Duration, "latency run: how long the producer writes before the measured window (those records are left out)")
	fs.DurationVar(&p.LatencyDuration.Duration, "latency-duration", p.LatencyDuration.Duration, "latency run: how long the measured window lasts (after the warm-up)")
	fs.StringVar(&p.LatencyTimestamps, "latency-timestamps", p.LatencyTimestamps, "latency run: the topic's timestamps, create (the producer's; Strait forwards its batches) or logappend (the source broker's; Strait rebuilds its batches as CreateTime)")
	fs.IntVar(&p.SourceTxn, "source-txn", 0, "copy: write the backlog in committed transactions of this many records (0: no transactions); single-topic cells only")
	fs.StringVar(&p.Timestamps, "timestamps", p.Timestamps, "copy: the backlog topics' timestamps, create (the producer's) or logappend (the source broker's; Strait rebuilds every batch as CreateTime)")
	fs.DurationVar(&p.LatencyGrace.Duration, "latency-grace", p.LatencyGrace.Duration, "latency run: how long consumers wait for the last records after the producer stops")
	fs.DurationVar(&p.CopyTimeout.Duration, "copy-timeout", p.CopyTimeout.Duration, "give up on a copy that is not complete after this long")
	fs.StringVar(&memParts, "memory-partitions", joinInts(p.MemPartitions), "memory mode: partition counts to measure")
	fs.IntVar(&p.MemRecordsPerPartition, "memory-records", p.MemRecordsPerPartition, "memory mode: records per partition")
	fs.StringVar(&scaleTopics, "scale-topics", joinInts(p.ScaleTopics), "scale mode: topic counts to measure, one after the other (5000 with -scale-partitions 2 is issue 23's 10,000 partitions)")
	fs.IntVar(&p.ScalePartitions, "scale-partitions", p.ScalePartitions, "scale mode: partitions of every topic")
	fs.IntVar(&p.ScaleRecords, "scale-records", p.ScaleRecords, "scale mode: records of -record-size bytes in every partition (at least 1: every partition must start)")
	fs.StringVar(&p.MM2.Heap, "mm2-heap", p.MM2.Heap, "MM2 JVM max heap (-Xmx)")
	fs.IntVar(&p.MM2.TasksMax, "mm2-tasks", p.MM2.TasksMax, "tasks.max (0: the partition count, at most 16)")
	fs.IntVar(&p.MM2.BatchSize, "mm2-batch-size", p.MM2.BatchSize, "<target>.producer.batch.size")
	fs.IntVar(&p.MM2.LingerMs, "linger-ms", p.MM2.LingerMs, "<target>.producer.linger.ms (both tools read it)")
	fs.IntVar(&p.MM2.OffsetFlushMs, "offset-flush-ms", p.MM2.OffsetFlushMs, "<target>.offset.flush.interval.ms (0: each tool's default, MM2 60000, Strait 1000)")
	fs.StringVar(&p.BrokerHeap, "broker-heap", p.BrokerHeap, "max heap of each Kafka broker")
	fs.IntVar(&p.ReadAheadKB, "read-ahead-kb", p.ReadAheadKB, "read-ahead of the disk under the brokers for the run, put back after it (Linux's default; 0 leaves the disk as it is)")
	fs.StringVar(&p.StraitBin, "strait-bin", "", "use this strait binary instead of building ./cmd/strait")
	fs.StringVar(&p.StraitProps, "strait-props", "", "extra properties for Strait's file only, key=value;key=value (e.g. strait.fast.path=false)")
	fs.StringVar(&p.OutDir, "out", p.OutDir, "directory for <timestamp>.md, <timestamp>.json and latest.md (relative to the repository root)")
	fs.BoolVar(&p.Docs, "docs", false, "rewrite the figures of README.md and docs/performance.md from the reports matrix-latest.md and distance-latest.md point at (no new measurement)")
	fs.BoolVar(&p.KeepLogs, "keep", false, "keep the clusters' dir, the tools' logs and each latency run's per-record latencies (CSV) after the run")
	fs.StringVar(&p.Rerender, "rerender", "", "rewrite the report of this stored <stamp>.json with the current path rules and targets (no new measurement)")
	if err := fs.Parse(args); err != nil {
		return p, err
	}
	// "-matrix full": a bool-style flag takes no separate value, so "full" (or
	// "distance") is the first argument left over.
	if matrix.v == matrixReduced && fs.NArg() > 0 && (fs.Arg(0) == matrixFull || fs.Arg(0) == matrixDistance) {
		matrix.v = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return p, err
		}
	}
	p.Matrix = matrix.v
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if fs.NArg() > 0 {
		return p, fmt.Errorf("unexpected arguments %q: every setting is a flag (see -h)", fs.Args())
	}
	p.Tools = splitList(tools)
	p.Phases = splitList(phases)
	var err error
	if p.MemPartitions, err = parseInts(memParts); err != nil {
		return p, fmt.Errorf("-memory-partitions %q: %w", memParts, err)
	}
	if p.MatrixCells, err = parseInts(matrixCells); err != nil {
		return p, fmt.Errorf("-matrix-cells %q: %w", matrixCells, err)
	}
	if p.ScaleTopics, err = parseInts(scaleTopics); err != nil {
		return p, fmt.Errorf("-scale-topics %q: %w", scaleTopics, err)
	}
	if p.Nodes, err = parseInts(nodes); err != nil {
		return p, fmt.Errorf("-nodes %q: %w", nodes, err)
	}
	if p.LinkRTTs, err = parseDurations(linkRTTs); err != nil {
		return p, fmt.Errorf("-link-rtt %q: %w", linkRTTs, err)
	}
	p.MatrixEOS = splitList(matrixEOS)
	if len(p.MatrixEOS) == 1 && p.MatrixEOS[0] == "none" {
		p.MatrixEOS = nil
	}
	if set["nodes"] && !set["mode"] {
		p.Mode = modeNodes
	}
	if p.Mode == modeNodes && !set["records"] {
		// A fresh backlog per run (nodes.go): 1 GB keeps nine runs within a few minutes.
		p.Records = nodesRecords
	}
	if p.Mode == modeNodes && !set["partitions"] {
		// 12 partitions split evenly over 1, 2, 3 (and 4, 6) nodes: an uneven share
		// would make the busiest node, not the node count, set the time.
		p.Partitions = nodesPartitions
	}
	if p.Mode == modeScale {
		p.scaleDefaults(set)
	}
	switch p.TargetCodec {
	case targetSame:
		p.TargetCodec = p.Codec
	case targetUnset:
		p.TargetCodec = ""
	}
	if p.Matrix != matrixNone {
		// The matrix's latency cell is shorter than a single comparison's, unless set.
		if !set["latency-warmup"] {
			p.LatencyWarmup.Duration = 5 * time.Second
		}
		if !set["latency-duration"] {
			p.LatencyDuration.Duration = 10 * time.Second // -runs windows per tool
		}
		if !set["latency-grace"] {
			p.LatencyGrace.Duration = 10 * time.Second
		}
		// Every cell's copy takes well under a minute; a stalled one should not eat the
		// matrix's 15 minutes.
		if !set["copy-timeout"] {
			p.CopyTimeout.Duration = 2 * time.Minute
		}
	}
	if p.Matrix == matrixDistance {
		// Three replicators (MM2 with and without its tuning), the copies and the
		// link's own limit; the latency phase runs on loopback and would measure
		// nothing of the link.
		if !set["tools"] {
			p.Tools = []string{toolStraitDefault, toolStrait, toolMM2, toolMM2Default}
		}
		if !set["phases"] {
			p.Phases = []string{phaseCopy, phaseLimits}
		}
		// MM2 at its defaults copies 500 MB across 150 ms in minutes, not seconds.
		if !set["copy-timeout"] {
			p.CopyTimeout.Duration = 5 * time.Minute
		}
		// A distance cell has no exactly-once row.
		p.MatrixEOS = nil
	} else {
		p.linkFlags = set["link-rtt"] || set["link-mbps"]
		p.LinkRTTs, p.LinkMBps = nil, 0 // no link: nothing to record in the results
	}
	return p, p.validate()
}

// validate collects every problem with the flags, each naming the flag and the fix.
func (p *params) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch p.Mode {
	case modeCompare, modeMemory, modeNodes, modeScale, modeAll:
	default:
		bad("-mode %q: use compare, memory, nodes, scale or all", p.Mode)
	}
	if len(p.Tools) == 0 && p.Mode != modeMemory && p.Mode != modeNodes {
		bad("-tools is empty: name strait, mm2 or both")
	}
	for _, t := range p.Tools {
		if !slices.Contains(allTools, t) {
			bad("-tools: unknown tool %q: use strait, mm2, strait-eos, mm2-eos, strait-keep, strait-default and/or mm2-default", t)
		}
	}
	for _, t := range p.MatrixEOS {
		if t != toolStrait && t != toolMM2 {
			bad("-matrix-eos: unknown replicator %q: use strait, strait,mm2 or none", t)
		}
	}
	if p.Mode == modeNodes {
		if len(p.Nodes) == 0 {
			bad("-nodes is empty: give node counts such as 1,2,3")
		}
		for _, n := range p.Nodes {
			if n < 1 || n > maxNodes {
				bad("-nodes: %d is not between 1 and %d", n, maxNodes)
			}
		}
	}
	for _, ph := range p.Phases {
		if ph != phaseCopy && ph != phaseLatency && ph != phaseLimits {
			bad("-phases: unknown phase %q: use copy, latency and/or limits", ph)
		}
	}
	if p.Records < 1 {
		bad("-records %d: must be at least 1", p.Records)
	}
	if p.RecordSize < 16 || p.RecordSize > 900_000 {
		bad("-record-size %d: use 16 to 900000 bytes (the broker's message.max.bytes is about 1 MB)", p.RecordSize)
	}
	if p.Partitions < 1 || p.Partitions > 10_000 {
		bad("-partitions %d: use 1 to 10000", p.Partitions)
	}
	if _, ok := codec(p.Codec); !ok {
		bad("-codec %q: use none, gzip, snappy, lz4 or zstd", p.Codec)
	}
	if _, ok := codec(p.TargetCodec); !ok && p.TargetCodec != "" {
		bad("-target-codec %q: use none, gzip, snappy, lz4, zstd, same or unset", p.TargetCodec)
	}
	if p.LatencyTimestamps != stampCreate && p.LatencyTimestamps != stampLogAppend {
		bad("-latency-timestamps %q: use create or logappend", p.LatencyTimestamps)
	}
	if p.SourceTxn < 0 {
		bad("-source-txn %d: give the records per source transaction, or 0 for none", p.SourceTxn)
	}
	if p.Timestamps != stampCreate && p.Timestamps != stampLogAppend {
		bad("-timestamps %q: use create or logappend", p.Timestamps)
	}
	if p.Runs < 1 || p.Runs > 50 {
		bad("-runs %d: use 1 to 50", p.Runs)
	}
	if p.MatrixScale <= 0 || p.MatrixScale > 100 {
		bad("-matrix-scale %g: use a factor above 0 and at most 100", p.MatrixScale)
	}
	if len(p.MatrixCells) > 0 && p.Matrix == matrixNone {
		bad("-matrix-cells needs -matrix (or -matrix full): it picks cells of the matrix")
	}
	if p.Matrix != matrixNone {
		n := len(p.matrixCells())
		for _, c := range p.MatrixCells {
			if c < 1 || c > n {
				bad("-matrix-cells: %d is not a cell of the %s matrix; use 1 to %d", c, p.Matrix, n)
			}
		}
		if p.Mode != modeCompare {
			bad("-matrix runs in -mode compare only; drop -mode %s or run the memory mode on its own", p.Mode)
		}
	}
	if p.linkFlags {
		bad("-link-rtt and -link-mbps shape the distance matrix: add -matrix distance")
	}
	if p.Matrix == matrixDistance {
		if len(p.LinkRTTs) == 0 {
			bad("-link-rtt is empty: give round trips such as 20ms,80ms,150ms")
		}
		for _, d := range p.LinkRTTs {
			if d.Duration < 2*time.Millisecond || d.Duration > 2*time.Second || d.Duration%(2*time.Millisecond) != 0 {
				bad("-link-rtt %s: use whole, even milliseconds from 2ms to 2s (half of it is added on each direction)", d.Duration)
			}
		}
		if p.LinkMBps < 0 || p.LinkMBps > 10_000 {
			bad("-link-mbps %g: use 0 (uncapped cells only) to 10000 MB/s", p.LinkMBps)
		}
	}
	if p.KeySpread < 0 {
		bad("-keys %d: must be 0 (null keys) or more", p.KeySpread)
	}
	if p.KeySpread > 0 && p.KeySpread < p.Partitions {
		bad("-keys %d is below -partitions %d: some partitions would get no records; use at least %d keys or 0", p.KeySpread, p.Partitions, p.Partitions)
	}
	if p.LatencyRateMBps <= 0 || p.LatencyRateMBps > 500 {
		bad("-rate %g: use a rate above 0 and at most 500 MB/s", p.LatencyRateMBps)
	}
	if p.LatencyDuration.Duration < time.Second {
		bad("-latency-duration %s: use at least 1s", p.LatencyDuration.Duration)
	}
	if p.LatencyWarmup.Duration < 0 {
		bad("-latency-warmup %s: must not be negative", p.LatencyWarmup.Duration)
	}
	if p.LatencyGrace.Duration < time.Second {
		bad("-latency-grace %s: use at least 1s", p.LatencyGrace.Duration)
	}
	if p.CopyTimeout.Duration < 10*time.Second {
		bad("-copy-timeout %s: use at least 10s", p.CopyTimeout.Duration)
	}
	if (p.Mode == modeMemory || p.Mode == modeAll) && len(p.MemPartitions) == 0 {
		bad("-memory-partitions is empty: give counts such as 100,2000")
	}
	for _, n := range p.MemPartitions {
		if n < 1 || n > 10_000 {
			bad("-memory-partitions: %d is not between 1 and 10000", n)
		}
	}
	if p.MemRecordsPerPartition < 1 {
		bad("-memory-records %d: must be at least 1", p.MemRecordsPerPartition)
	}
	p.validateScale(bad)
	if !heapSize(p.MM2.Heap) {
		bad("-mm2-heap %q: use a size such as 512m or 2g", p.MM2.Heap)
	}
	if p.ReadAheadKB < 0 || p.ReadAheadKB > 1<<20 {
		bad("-read-ahead-kb %d: use 0 (leave the disk as it is) or a size in KiB such as 128", p.ReadAheadKB)
	}
	if !heapSize(p.BrokerHeap) {
		bad("-broker-heap %q: use a size such as 512m or 1g", p.BrokerHeap)
	}
	if p.MM2.TasksMax < 0 {
		bad("-mm2-tasks %d: must be at least 1 (or 0 for the partition count, at most 16)", p.MM2.TasksMax)
	}
	if p.MM2.BatchSize < 1 || p.MM2.LingerMs < 0 || p.MM2.OffsetFlushMs < 0 {
		bad("-mm2-batch-size must be positive and -linger-ms, -offset-flush-ms not negative")
	}
	return errors.Join(errs...)
}

// matrixCells is the whole matrix of -matrix, before -matrix-cells picks from it.
func (p *params) matrixCells() []workload {
	var cells []workload
	switch p.Matrix {
	case matrixReduced:
		cells = reducedMatrix(p.MatrixScale)
	case matrixFull:
		cells = fullMatrix(p.MatrixScale)
	case matrixDistance:
		cells = distanceMatrix(p.MatrixScale, p.LinkRTTs, p.LinkMBps)
	}
	for i := range cells {
		cells[i].Cell = i + 1
		if cells[i].hasLimitTarget() {
			for _, t := range p.MatrixEOS {
				cells[i].EOS = append(cells[i].EOS, eosVariant(t))
			}
		}
	}
	return cells
}

// cells are the workloads the compare mode runs: the matrix's (those -matrix-cells picks),
// or the one the flags describe.
// targetMode is how the flags' target codec stands to the source codec:
// targetUnset, targetSame or targetDifferent.
func (p *params) targetMode() string {
	switch p.TargetCodec {
	case "":
		return targetUnset
	case p.Codec:
		return targetSame
	}
	return targetDifferent
}

func (p *params) cells() []workload {
	if p.Matrix == matrixNone {
		w := workload{Cell: 1, RecordSize: p.RecordSize, Partitions: p.Partitions, Topics: 1, Codec: p.Codec, Target: p.targetMode(),
			TargetCodec: p.TargetCodec, Records: p.Records, Limits: true}
		return []workload{w}
	}
	all := p.matrixCells()
	if len(p.MatrixCells) == 0 {
		return all
	}
	var out []workload
	for _, i := range p.MatrixCells {
		if i >= 1 && i <= len(all) {
			out = append(out, all[i-1])
		}
	}
	return out
}

// matrixFlag is -matrix: alone it means the reduced matrix, -matrix=full (or -matrix full,
// see parseParams) the full one.
type matrixFlag struct{ v string }

func (m *matrixFlag) String() string   { return m.v }
func (m *matrixFlag) IsBoolFlag() bool { return true }
func (m *matrixFlag) Set(s string) error {
	switch s {
	case "true", matrixReduced:
		m.v = matrixReduced
	case matrixFull, matrixDistance:
		m.v = s
	case "false":
		m.v = matrixNone
	default:
		return fmt.Errorf("use -matrix (reduced, at most 15 minutes), -matrix full or -matrix distance")
	}
	return nil
}

// hasLinks reports whether a cell of the run puts cluster A behind the link proxy.
func (p *params) hasLinks() bool {
	if p.Mode != modeCompare && p.Mode != modeAll {
		return false
	}
	return slices.ContainsFunc(p.cells(), func(w workload) bool { return w.Link != nil })
}

// has reports whether the compare mode runs phase.
func (p *params) has(phase string) bool { return slices.Contains(p.Phases, phase) }

func heapSize(s string) bool {
	if len(s) < 2 {
		return false
	}
	switch s[len(s)-1] {
	case 'm', 'M', 'g', 'G':
	default:
		return false
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	return err == nil && n > 0
}

func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseDurations reads a list of Go durations such as "20ms,80ms,150ms".
func parseDurations(s string) ([]duration, error) {
	var out []duration
	for _, f := range splitList(s) {
		d, err := time.ParseDuration(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a duration such as 80ms", f)
		}
		out = append(out, duration{d})
	}
	return out, nil
}

func joinDurations(ds []duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return strings.Join(s, ",")
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// duration is a time.Duration that reads as "60s" in the JSON results.
type duration struct{ time.Duration }

// MarshalJSON writes the duration as Go's string form.
func (d duration) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(d.String())), nil }

// UnmarshalJSON reads Go's string form, for -rerender.
func (d *duration) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	d.Duration, err = time.ParseDuration(s)
	return err
}
