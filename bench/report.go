package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// mm2JVM is how `scripts/kafka.sh mm2` starts the JVM (the heap maximum is -mm2-heap).
const mm2JVM = "-Xms128m -Xmx<heap> -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError"

// results is everything one run measured; it is written as JSON and rendered as markdown.
type results struct {
	Started   time.Time   `json:"started"`
	Finished  time.Time   `json:"finished"`
	Seconds   float64     `json:"seconds"`
	LoadStart string      `json:"load_avg_start"`
	LoadEnd   string      `json:"load_avg_end"`
	Machine   machineInfo `json:"machine"`
	// ReadAhead is the disk's read-ahead under the brokers (readahead.go).
	ReadAhead readAheadInfo `json:"read_ahead"`
	Params    params        `json:"params"`
	// Properties is the file of the first MM2 run, or of the first run if MM2 did not run;
	// all runs differ only in aliases and topic (and one line for Strait, see props.go).
	Properties string `json:"mm2_properties,omitempty"`
	mm2Props   bool
	// PropertiesMM2Default is the file of the first mm2-default run (MM2 without the
	// tuning), when one ran.
	PropertiesMM2Default string `json:"mm2_default_properties,omitempty"`
	MM2JVM               string `json:"mm2_jvm_flags"`
	// Warmup is the brokers' warm-up before the first cell (warmBrokers).
	Warmup *warmupResult `json:"warmup,omitempty"`
	// EstimateSeconds is the forecast of the compare mode printed at the start.
	EstimateSeconds float64         `json:"estimate_s,omitempty"`
	Cells           []cellResult    `json:"cells,omitempty"`
	Latency         []latencyResult `json:"latency,omitempty"`
	Memory          []copyResult    `json:"memory,omitempty"`
	// Scale is the scale mode: a run per topic count (scale.go).
	Scale []scaleRun `json:"scale,omitempty"`
	// Nodes is the nodes mode: Strait on several nodes sharing a flow.
	Nodes *nodesResult `json:"nodes,omitempty"`
	Error string       `json:"error,omitempty"`
	// Chart is the file name of the throughput chart beside the report, when one is drawn.
	Chart string `json:"chart,omitempty"`
}

// write stores <stamp>.md and <stamp>.json in dir, and latest.md, which points
// at that report (a pointer, not a copy: the report lives under one name). A
// matrix run also draws <stamp>-matrix.svg and points matrix-latest.md at it
// (distance-latest.md for the distance matrix), so that the loopback matrix's
// latest survives a distance run. It returns the report's markdown.
func (res *results) write(dir string) (string, []string, error) {
	res.MM2JVM = strings.Replace(mm2JVM, "<heap>", res.Params.MM2.Heap, 1)
	stamp := res.Started.Format("20060102-150405")
	matrix := res.Params.Matrix != matrixNone && res.anyCopies()
	if matrix {
		res.Chart = stamp + "-matrix.svg"
	}
	md := res.markdown()
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return md, nil, fmt.Errorf("encoding the results: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return md, nil, fmt.Errorf("creating the results dir: %w", err)
	}
	title, _, _ := strings.Cut(strings.TrimPrefix(md, "# "), "\n")
	pointer := fmt.Sprintf("# Latest report\n\n[%s.md](%s.md): %s\n", stamp, stamp, title)
	out := map[string][]byte{stamp + ".md": []byte(md), stamp + ".json": append(js, '\n'), "latest.md": []byte(pointer)}
	if matrix {
		latest := "matrix-latest"
		if res.Params.Matrix == matrixDistance {
			latest = "distance-latest"
		}
		out[res.Chart] = []byte(res.chartSVG())
		out[latest+".md"] = []byte(pointer + "\n![throughput per cell](" + res.Chart + ")\n")
	}
	var files []string
	for _, name := range slices.Sorted(maps.Keys(out)) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, out[name], 0o644); err != nil {
			return md, nil, fmt.Errorf("writing the results: %w", err)
		}
		files = append(files, path)
	}
	return md, files, nil
}

func (res *results) markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	m, p := res.Machine, res.Params
	dirty := ""
	if m.StraitDirty {
		dirty = ", uncommitted changes"
	}
	if p.Mode == modeNodes {
		w("# Strait on several nodes sharing a flow, %s", res.Started.Format("2006-01-02 15:04 UTC"))
	} else if p.Mode == modeScale {
		w("# Strait at scale on one node, %s", res.Started.Format("2006-01-02 15:04 UTC"))
	} else {
		w("# Strait vs Apache MirrorMaker 2, %s", res.Started.Format("2006-01-02 15:04 UTC"))
	}
	w("")
	w("Strait %s (commit %.12s%s) · Apache Kafka and MM2 %s · %s, %d cores, %.1f GiB · Linux %s · %s · %s",
		m.StraitVersion, m.StraitCommit, dirty, m.KafkaVersion, m.CPUModel, m.Cores, float64(m.MemoryBytes)/(1<<30), m.Kernel, m.GoVersion, m.JavaVersion)
	w("")
	if res.ReadAhead != (readAheadInfo{}) {
		w("Disk read-ahead under the brokers: %s.", res.ReadAhead.text())
		w("")
	}
	if res.EstimateSeconds > 0 {
		w("Estimated duration at the start %.0f s (%.1f min); measured %.0f s (%.1f min).", res.EstimateSeconds, res.EstimateSeconds/60, res.Seconds, res.Seconds/60)
		w("")
	}
	w("Mode %s, run time %.0f s. Load average (1/5/15 min) at start %s, at end %s: other work shares this machine, so timings are noisy; each phase notes its own load average.",
		p.Mode, res.Seconds, res.LoadStart, res.LoadEnd)
	if res.Error != "" {
		w("")
		w("**The run failed; the tables hold what finished.** Error: `%s`", firstLine(res.Error))
	}
	if wu := res.Warmup; wu != nil && p.Mode == modeScale {
		w("")
		w("Before the first topic count Strait copied %.0f MB of 1 KiB records once, unmeasured (%.1f s), so that the first copy does not meet brokers whose JIT is still compiling. Every copy starts once the machine's dirty pages are written back (sync(2)).", float64(wu.Bytes)/1e6, wu.Seconds)
	} else if wu != nil && p.Mode == modeNodes {
		w("")
		w("Before the first run Strait copied %.0f MB of 1 KiB records once, unmeasured (%.1f s), so that the first run does not meet brokers whose JIT is still compiling. Every run then starts its nodes once the machine's dirty pages are written back (sync(2)).", float64(wu.Bytes)/1e6, wu.Seconds)
	} else if wu != nil {
		w("")
		w("Before the first cell Strait copied %.0f MB of 1 KiB records once, unmeasured (%.1f s), so that the first run of the first cell, a Strait run, does not meet brokers whose JIT is still compiling (MM2's first run already came after one). Every copy run then starts once the machine's dirty pages are written back (sync(2)): the preload and the previous run leave up to a gigabyte of writeback, which throttled the run right after them, always Strait's first.", float64(wu.Bytes)/1e6, wu.Seconds)
	}
	res.matrixTable(w)
	res.distanceTable(w)
	res.ceilingsTable(w)
	res.brokerLoadTable(w)
	res.eosTable(w)
	if len(res.Cells) == 1 {
		res.copyTable(w, &res.Cells[0])
	}
	res.limitsTable(w)
	res.latencyTable(w)
	res.memoryTable(w)
	res.nodesTable(w)
	res.scaleTable(w)
	res.tuning(w)
	return b.String()
}

// copyTable renders one cell in detail: every figure as median [min–max] over the runs.
func (res *results) copyTable(w func(string, ...any), c *cellResult) {
	if len(c.Copies) == 0 {
		return
	}
	p := res.Params
	wl := c.Workload
	w("")
	w("## Backlog copy, A -> B: %s", c.Name)
	w("")
	pl := c.Preload
	if pl == nil {
		pl = &preloadResult{}
	}
	runs := 0
	for _, s := range c.Summary {
		runs = max(runs, s.Runs)
	}
	w("%d records of %d B values (%.0f MB payload; %.0f MB on A's disk), %s, %s, source codec %s, target compression.type %s; %d runs per tool, alternating. Each figure is the median [min–max] of the runs. Wall time runs from process start until every partition on B holds as many records as on A (end offsets polled every 10 ms until the first record, then every 50 ms).",
		pl.Records, wl.RecordSize, float64(pl.PayloadBytes)/1e6, float64(pl.DiskBytes)/1e6, partitionsText(wl), keysText(p.KeySpread), sourceCodecText(wl), targetCodecText(wl), runs)
	if p.Timestamps == stampLogAppend {
		w("")
		w("The source topics stamp `LogAppendTime`: Strait rebuilds every batch as CreateTime with the broker's append times, as MM2 copies them.")
	}
	w("")
	var tools []string
	for _, t := range allTools {
		if _, ok := c.Summary[t]; ok {
			tools = append(tools, t)
		}
	}
	_, okS := c.Summary[toolStrait]
	_, okM := c.Summary[toolMM2]
	both := okS && okM
	head, sep := "| |", "|---|"
	for _, t := range tools {
		head += " " + t + " |"
		sep += "--:|"
	}
	if both {
		head += " strait/mm2 (medians) |"
		sep += "--:|"
	}
	w("%s", head)
	w("%s", sep)
	row := func(label string, v func(toolSummary) stat, format string, ratio bool) {
		line := "| " + label + " |"
		for _, t := range tools {
			line += " " + statText(v(c.Summary[t]), format) + " |"
		}
		if both {
			if m := v(c.Summary[toolMM2]).Median; ratio && m != 0 {
				line += fmt.Sprintf(" %.2f |", v(c.Summary[toolStrait]).Median/m)
			} else {
				line += " |"
			}
		}
		w("%s", line)
	}
	cols := len(tools)
	if both {
		cols++
	}
	w("| **steady state, from the first record on B** |%s", strings.Repeat(" |", cols))
	row("throughput (MB/s of payload)", func(s toolSummary) stat { return s.SteadyMBps }, "%.1f", true)
	row("CPU per GB (s/GB)", func(s toolSummary) stat { return s.SteadyCPUPerGB }, "%.2f", true)
	row("peak RSS (MiB)", func(s toolSummary) stat { return s.PeakRSSMiB }, "%.0f", true)
	w("| **totals, including startup** |%s", strings.Repeat(" |", cols))
	row("throughput, start to complete copy (MB/s)", func(s toolSummary) stat { return s.MBps }, "%.1f", true)
	row("CPU per GB, including startup (s/GB)", func(s toolSummary) stat { return s.CPUPerGB }, "%.2f", true)
	row("wall time, start to complete copy (s)", func(s toolSummary) stat { return s.WallS }, "%.1f", false)
	row("time to first record on B (s)", func(s toolSummary) stat { return s.FirstRecordS }, "%.2f", false)
	w("")
	w("Every run, in the order they ran:")
	w("")
	w("| run | tool | flow | steady MB/s | steady CPU s/GB | peak RSS MiB | total MB/s | CPU s/GB with startup | first record (s) | wall (s) | broker A / B CPU (s) | records on B | load average |")
	w("|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, cp := range c.Copies {
		w("| %d | %s | %s | %.1f | %.2f | %.0f | %.1f | %.2f | %.2f | %.1f | %.1f / %.1f | %d | %s |", cp.Run, cp.Tool, cp.Flow, cp.SteadyMBPerSec, cp.SteadyCPUPerGB,
			float64(cp.Process.PeakRSSBytes)/(1<<20), cp.MBPerSec, cp.CPUPerGB, cp.FirstRecordSeconds, cp.WallSeconds, cp.BrokerCPU["a"], cp.BrokerCPU["b"], cp.TargetRecords, cp.LoadAvg)
	}
	res.settingsNote(w, c)
}

// settingsNote says what the MM2 log check found for the cell.
func (res *results) settingsNote(w func(string, ...any), c *cellResult) {
	var checks, clients int
	seen := map[string]bool{}
	for _, cp := range c.Copies {
		for _, s := range cp.MM2Settings {
			checks++
			if !seen[s.Client] {
				seen[s.Client] = true
				clients++
			}
		}
	}
	if checks == 0 {
		return
	}
	w("")
	w("MM2 applied every setting the file gave it: %d checks in the logged ProducerConfig of its MirrorSourceConnector task producers and the ConsumerConfig of its source consumers (%d clients over the runs).", checks, clients)
}

func statText(s stat, format string) string {
	if s.Min == s.Max {
		return fmt.Sprintf(format, s.Median)
	}
	return fmt.Sprintf(format+" ["+format+"–"+format+"]", s.Median, s.Min, s.Max)
}

func partitionsText(w workload) string {
	if w.Topics > 1 {
		return fmt.Sprintf("%d topics of %d partition(s)", w.Topics, w.Partitions)
	}
	return fmt.Sprintf("%d partitions", w.Partitions)
}

func sourceCodecText(w workload) string {
	if w.Mixed {
		return fmt.Sprintf("%s with every partition's batches alternating between none and %s", w.Codec, w.Codec)
	}
	return w.Codec
}

func targetCodecText(w workload) string {
	if w.Target == targetUnset {
		return "unset (MM2 writes uncompressed, Strait keeps each batch's source codec)"
	}
	return w.TargetCodec + " (" + w.Target + ")"
}

func (res *results) latencyTable(w func(string, ...any)) {
	if len(res.Latency) == 0 {
		return
	}
	p := res.Params
	w("")
	w("## Steady-state latency, %.0f MB/s for %s", p.LatencyRateMBps, p.LatencyDuration.Duration)
	w("")
	w("Each tool replicates a fresh source topic (%d partitions) that a producer writes at a fixed rate: %s of warm-up (left out), then the measured window.", p.Partitions, p.LatencyWarmup.Duration)
	w("")
	from := "the producer's timestamp (CreateTime, the same clock as the consumers': one machine; Strait copies such topics on its fast path)"
	if p.LatencyTimestamps == stampLogAppend {
		from = "the source broker's append (the topic uses `message.timestamp.type=LogAppendTime`, whose batches Strait rebuilds as CreateTime)"
	}
	w("Latency is end to end: from %s to a franz-go consumer on B receiving the record (fetch.max.wait 10 ms, polling continuously); replicators keep the timestamp. The same consumer reads the source topic at the same time: that is the baseline, and \"added\" is target minus baseline per statistic. Timestamps have millisecond resolution.", from)
	w("")
	res.latencySummary(w)
	var tools []*latencyResult
	for i := range res.Latency {
		tools = append(tools, &res.Latency[i])
	}
	w("Every run:")
	w("")
	w("| | %s |", joinNonNil(tools, func(l *latencyResult) string { return fmt.Sprintf("%s #%d", l.Tool, max(l.Run, 1)) }, " | "))
	w("|---|%s", strings.Repeat("--:|", len(tools)))
	row := func(label string, v func(*latencyResult) string) {
		w("| %s | %s |", label, joinNonNil(tools, v, " | "))
	}
	trio := func(s latencyStats) string { return fmt.Sprintf("%.1f / %.1f / %.1f", s.P50Ms, s.P99Ms, s.MaxMs) }
	row("on B: p50 / p99 / max (ms)", func(l *latencyResult) string { return trio(l.Target) })
	row("baseline on A: p50 / p99 / max (ms)", func(l *latencyResult) string { return trio(l.Source) })
	row("added by replication: p50 / p99 / max (ms)", func(l *latencyResult) string {
		return fmt.Sprintf("%.1f / %.1f / %.1f", l.AddedP50Ms, l.AddedP99Ms, l.AddedMaxMs)
	})
	row("records measured / missing on B / duplicates", func(l *latencyResult) string {
		return fmt.Sprintf("%d (after %d warm-up) / %d / %d", l.Produced, l.Warmup, l.Target.Missing, l.Target.Duplicates)
	})
	row("rate reached (MB/s)", func(l *latencyResult) string { return fmt.Sprintf("%.2f", l.ProducedMBs) })
	row("replicator CPU during the run (s)", func(l *latencyResult) string { return fmt.Sprintf("%.1f", l.ToolCPUSeconds) })
	row("replicator peak RSS (MiB)", func(l *latencyResult) string { return fmt.Sprintf("%.0f", float64(l.Process.PeakRSSBytes)/(1<<20)) })
	row("replicating every partition after start (s)", func(l *latencyResult) string { return fmt.Sprintf("%.1f", l.ReadySeconds) })
	row("timestamp mismatches A vs B", func(l *latencyResult) string { return fmt.Sprint(l.TimestampMismatches) })
	row("load average at start", func(l *latencyResult) string { return l.LoadAvg })
	for _, c := range []string{"a", "b"} {
		row(fmt.Sprintf("broker %s GC pauses: count / total / max (ms)", strings.ToUpper(c)), func(l *latencyResult) string {
			g, ok := l.BrokerGC[c]
			if !ok {
				return "–"
			}
			return fmt.Sprintf("%d / %.0f / %.1f", g.Count, g.TotalMs, g.MaxMs)
		})
	}
}

// latencySummary renders each tool's latency runs as median [min–max], and Strait's p99
// added latency against MM2's with the target.
func (res *results) latencySummary(w func(string, ...any)) {
	byTool := map[string][]latencyResult{}
	var order, disturbed []string
	for _, l := range res.Latency {
		if _, ok := byTool[l.Tool]; !ok {
			order = append(order, l.Tool)
		}
		if l.disturbed() {
			disturbed = append(disturbed, fmt.Sprintf("%s #%d (baseline p99 %.1f ms, on B %.1f ms)", l.Tool, max(l.Run, 1), l.Source.P99Ms, l.Target.P99Ms))
			continue
		}
		byTool[l.Tool] = append(byTool[l.Tool], l)
	}
	of := func(runs []latencyResult, f func(latencyResult) float64) stat {
		xs := make([]float64, len(runs))
		for i, l := range runs {
			xs[i] = f(l)
		}
		return statOf(xs)
	}
	w("Median [min–max] over each tool's runs, alternating the tools:")
	w("")
	if len(disturbed) > 0 {
		w("Left out: %s. In these runs the baseline consumer on A saw a worse p99 than the consumer on B, so a stall of the whole machine, not the replicator, set both tails.", strings.Join(disturbed, "; "))
		w("")
	}
	w("| tool | runs | added p50 (ms) | added p99 (ms) | added max (ms) | baseline p99 on A (ms) | broker B GC pause total (ms) |")
	w("|---|--:|--:|--:|--:|--:|--:|")
	p99 := map[string]float64{}
	for _, tool := range order {
		runs := byTool[tool]
		added := of(runs, func(l latencyResult) float64 { return l.AddedP99Ms })
		p99[tool] = added.Median
		w("| %s | %d | %s | %s | %s | %s | %s |", tool, len(runs),
			statText(of(runs, func(l latencyResult) float64 { return l.AddedP50Ms }), "%.1f"),
			statText(added, "%.1f"),
			statText(of(runs, func(l latencyResult) float64 { return l.AddedMaxMs }), "%.0f"),
			statText(of(runs, func(l latencyResult) float64 { return l.Source.P99Ms }), "%.1f"),
			statText(of(runs, func(l latencyResult) float64 { return l.BrokerGC["b"].TotalMs }), "%.0f"))
	}
	w("")
	if s, m := p99[toolStrait], p99[toolMM2]; s > 0 && m > 0 {
		met := "met"
		if s/m > 1.0/3 {
			met = "**missed**"
		}
		w("p99 added latency, Strait / MM2: %.2f× (target ≤ 1/3: %s).", s/m, met)
		w("")
	}
}

func (res *results) limitsTable(w func(string, ...any)) {
	var limits []limitResult
	var cell *cellResult
	// The cell of the 90% target, else the first that measured its limits.
	for i := range res.Cells {
		// A distance cell's limit is the link's, in the distance table.
		if c := &res.Cells[i]; len(c.Limits) > 0 && c.Workload.Link == nil && (cell == nil || c.Workload.hasLimitTarget()) {
			limits, cell = c.Limits, c
		}
	}
	if len(limits) == 0 {
		return
	}
	w("")
	w("## Client limits (franz-go alone, same records, codec and partitions as %s)", cell.Name)
	w("")
	w("What one client reaches producing into, or consuming from, one of these brokers while no replicator runs (measured right after the preload): a replicator does both at once on the same cores, so under the same load it stays below the lower of the two.")
	w("")
	w("| run | cluster | records/s | MB/s | client CPU (s) | load average at start |")
	w("|---|---|--:|--:|--:|---|")
	for _, l := range limits {
		w("| %s | %s | %.0f | %.1f | %.1f | %s |", l.Name, l.Cluster, l.RecordsPerSec, l.MBPerSec, l.ClientCPU, l.LoadAvg)
	}
	if s, ok := cell.Summary[toolStrait]; ok {
		for _, l := range limits {
			if l.Name == "produce-only" && l.MBPerSec > 0 {
				w("")
				w("Strait's steady throughput in that cell is %.0f%% of the produce-only limit into B (%.1f of %.1f MB/s; the target is at least 90%%).", 100*s.SteadyMBps.Median/l.MBPerSec, s.SteadyMBps.Median, l.MBPerSec)
			}
		}
	}
}

func (res *results) memoryTable(w func(string, ...any)) {
	if len(res.Memory) == 0 {
		return
	}
	w("")
	w("## Strait memory versus partitions")
	w("")
	w("Strait alone copies %d records per partition (null keys, %d B values); peak RSS is VmHWM at completion.", res.Params.MemRecordsPerPartition, res.Params.RecordSize)
	w("")
	w("| partitions | records | peak RSS (MiB) | CPU (s) | wall time (s) | first record (s) |")
	w("|--:|--:|--:|--:|--:|--:|")
	for _, c := range res.Memory {
		w("| %d | %d | %.0f | %.1f | %.1f | %.2f |", c.Partitions, c.Records, float64(c.Process.PeakRSSBytes)/(1<<20), c.CPUSeconds, c.WallSeconds, c.FirstRecordSeconds)
	}
	if slope, ok := rssPerPartition(res.Memory); ok {
		w("")
		w("Slope: %.1f KiB of peak RSS per partition.", slope/1024)
	}
}

func (res *results) tuning(w func(string, ...any)) {
	p := res.Params
	w("")
	w("## How the tools ran")
	w("")
	if p.Mode == modeNodes {
		w("Every node of a run is `strait run -c FILE --clusters <target>` on the same file, Strait's defaults plus the lines below `# Strait only` (each run has its own cluster aliases, so no topic or group of one run collides with another's). The harness writes the file MM2 would read too, as in its comparisons; Strait warns about the keys it has no use for (batch.size, tasks.max). The file of the first run:")
		if res.Properties != "" {
			w("")
			w("```properties")
			w("%s```", res.Properties)
		}
		w("")
		w("Parameters: records %d, record size %d B, partitions %d, codec %s, target codec %s, %s, node counts %s, copy timeout %s, broker heap %s.",
			p.Records, p.RecordSize, p.Partitions, p.Codec, p.TargetCodec, keysText(p.KeySpread), joinInts(p.Nodes), p.CopyTimeout.Duration, p.BrokerHeap)
		return
	}
	w("Both tools read the same MM2 properties file per run; each run has its own cluster aliases (A1->B1, A2->B2, ...), so no remote topic, internal topic or group of one run can collide with another's. MM2 runs in dedicated mode (`org.apache.kafka.connect.mirror.MirrorMaker --clusters <target>`) through `scripts/kafka.sh mm2`, which execs the JVM with `%s`. Strait runs `strait run -c FILE --clusters <target>` with its defaults; keys it has no use for (batch.size, tasks.max) only produce a warning. See bench/README.md for why each setting.", res.MM2JVM)
	if res.Properties != "" {
		w("")
		w("```properties")
		w("%s```", res.Properties)
	}
	if res.PropertiesMM2Default != "" {
		w("")
		w("MM2 at its defaults (`mm2-default`) reads a file without the tuning:")
		w("")
		w("```properties")
		w("%s```", res.PropertiesMM2Default)
	}
	if p.Mode == modeScale {
		res.scaleParameters(w)
		return
	}
	w("")
	w("Parameters: records %d, record size %d B, partitions %d, codec %s, target codec %s, %s%s, latency rate %.1f MB/s for %s (grace %s), copy timeout %s, memory partitions %s with %d records each, broker heap %s, MM2 heap %s.",
		p.Records, p.RecordSize, p.Partitions, p.Codec, p.TargetCodec, keysText(p.KeySpread), sourceTxnText(p.SourceTxn), p.LatencyRateMBps, p.LatencyDuration.Duration, p.LatencyGrace.Duration,
		p.CopyTimeout.Duration, joinInts(p.MemPartitions), p.MemRecordsPerPartition, p.BrokerHeap, p.MM2.Heap)
}

// sourceTxnText describes -source-txn for the parameters line: nothing without it.
func sourceTxnText(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(", backlog written in committed source transactions of %d records (-source-txn)", n)
}

func keysText(n int) string {
	if n == 0 {
		return "null keys"
	}
	return fmt.Sprintf("%d distinct keys", n)
}

func joinNonNil[T any](xs []*T, f func(*T) string, sep string) string {
	var out []string
	for _, x := range xs {
		if x != nil {
			out = append(out, f(x))
		}
	}
	return strings.Join(out, sep)
}
