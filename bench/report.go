package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	Params    params      `json:"params"`
	// Properties is the file of the first MM2 run, or of the first run if MM2 did not run;
	// all runs differ only in aliases and topic (and one line for Strait, see props.go).
	Properties string `json:"mm2_properties,omitempty"`
	mm2Props   bool
	MM2JVM     string          `json:"mm2_jvm_flags"`
	Preload    *preloadResult  `json:"preload,omitempty"`
	Copies     []copyResult    `json:"copies,omitempty"`
	Latency    []latencyResult `json:"latency,omitempty"`
	Limits     []limitResult   `json:"client_limits,omitempty"`
	Memory     []copyResult    `json:"memory,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// write stores <stamp>.md, <stamp>.json and latest.md in dir and returns the markdown.
func (res *results) write(dir string) (string, []string, error) {
	res.MM2JVM = strings.Replace(mm2JVM, "<heap>", res.Params.MM2.Heap, 1)
	md := res.markdown()
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return md, nil, fmt.Errorf("encoding the results: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return md, nil, fmt.Errorf("creating the results dir: %w", err)
	}
	stamp := res.Started.Format("20060102-150405")
	files := []string{filepath.Join(dir, stamp+".md"), filepath.Join(dir, stamp+".json"), filepath.Join(dir, "latest.md")}
	for i, b := range [][]byte{[]byte(md), append(js, '\n'), []byte(md)} {
		if err := os.WriteFile(files[i], b, 0o644); err != nil {
			return md, nil, fmt.Errorf("writing the results: %w", err)
		}
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
	w("# Strait vs Apache MirrorMaker 2, %s", res.Started.Format("2006-01-02 15:04 UTC"))
	w("")
	w("Strait %s (commit %.12s%s) · Apache Kafka and MM2 %s · %s, %d cores, %.1f GiB · Linux %s · %s · %s",
		m.StraitVersion, m.StraitCommit, dirty, m.KafkaVersion, m.CPUModel, m.Cores, float64(m.MemoryBytes)/(1<<30), m.Kernel, m.GoVersion, m.JavaVersion)
	w("")
	w("Mode %s, run time %.0f s. Load average (1/5/15 min) at start %s, at end %s: other work shares this machine, so timings are noisy; each phase notes its own load average.",
		p.Mode, res.Seconds, res.LoadStart, res.LoadEnd)
	if res.Error != "" {
		w("")
		w("**The run failed; the tables hold what finished.** Error: `%s`", firstLine(res.Error))
	}
	res.copyTable(w)
	res.limitsTable(w)
	res.latencyTable(w)
	res.memoryTable(w)
	res.tuning(w)
	return b.String()
}

// byTool finds the copy of tool, nil if it did not run.
func byTool[T any](xs []T, tool func(T) string, name string) *T {
	for i := range xs {
		if tool(xs[i]) == name {
			return &xs[i]
		}
	}
	return nil
}

func (res *results) copyTable(w func(string, ...any)) {
	if len(res.Copies) == 0 {
		return
	}
	p := res.Params
	w("")
	w("## Backlog copy, A -> B")
	w("")
	pl := res.Preload
	if pl == nil {
		pl = &preloadResult{}
	}
	w("%d records of %d B values (%.0f MB payload; %.0f MB on A's disk), %d partitions, %s, source codec %s, replicators' producer codec %s. Wall time runs from process start until every partition on B holds as many records as on A (end offsets polled every 10 ms until the first record, then every 50 ms).",
		pl.Records, p.RecordSize, float64(pl.PayloadBytes)/1e6, float64(pl.DiskBytes)/1e6, p.Partitions, keysText(p.KeySpread), p.Codec, p.TargetCodec)
	w("")
	s := byTool(res.Copies, func(c copyResult) string { return c.Tool }, toolStrait)
	mm := byTool(res.Copies, func(c copyResult) string { return c.Tool }, toolMM2)
	both := s != nil && mm != nil
	tools := []*copyResult{s, mm}
	head := "| | " + joinNonNil(tools, func(c *copyResult) string { return c.Tool }, " | ") + " |"
	sep := "|---|" + strings.Repeat("--:|", count(tools))
	if both {
		head += " strait/mm2 |"
		sep += "--:|"
	}
	w("%s", head)
	w("%s", sep)
	row := func(label string, v func(*copyResult) float64, format string, ratio bool) {
		line := "| " + label + " | " + joinNonNil(tools, func(c *copyResult) string { return fmt.Sprintf(format, v(c)) }, " | ") + " |"
		if both {
			if ratio && v(mm) != 0 {
				line += fmt.Sprintf(" %.2f |", v(s)/v(mm))
			} else {
				line += " |"
			}
		}
		w("%s", line)
	}
	row("wall time, start to complete copy (s)", func(c *copyResult) float64 { return c.WallSeconds }, "%.1f", false)
	row("time to first record on B (s)", func(c *copyResult) float64 { return c.FirstRecordSeconds }, "%.2f", false)
	row("throughput (records/s)", func(c *copyResult) float64 { return c.RecordsPerSec }, "%.0f", true)
	row("throughput (MB/s of payload)", func(c *copyResult) float64 { return c.MBPerSec }, "%.1f", true)
	row("throughput after the first record (MB/s)", func(c *copyResult) float64 { return c.SteadyMBPerSec }, "%.1f", true)
	row("CPU, user+sys (s)", func(c *copyResult) float64 { return c.CPUSeconds }, "%.1f", false)
	row("CPU per GB of payload (s/GB)", func(c *copyResult) float64 { return c.CPUPerGB }, "%.1f", true)
	row("CPU from the first record on (s)", func(c *copyResult) float64 { return c.SteadyCPUSeconds }, "%.1f", false)
	row("CPU per GB from the first record on (s/GB)", func(c *copyResult) float64 { return c.SteadyCPUPerGB }, "%.1f", true)
	row("peak RSS (MiB)", func(c *copyResult) float64 { return float64(c.Process.PeakRSSBytes) / (1 << 20) }, "%.0f", true)
	row("broker A CPU during the copy (s)", func(c *copyResult) float64 { return c.BrokerCPU["a"] }, "%.1f", false)
	row("broker B CPU during the copy (s)", func(c *copyResult) float64 { return c.BrokerCPU["b"] }, "%.1f", false)
	w("| records on B at completion | %s |%s", joinNonNil(tools, func(c *copyResult) string { return fmt.Sprint(c.TargetRecords) }, " | "), tern(both, " |", ""))
	w("| load average at start | %s |%s", joinNonNil(tools, func(c *copyResult) string { return c.LoadAvg }, " | "), tern(both, " |", ""))
	if s != nil && s.ProgressSeconds != nil {
		w("")
		w("Strait's progress group `strait-%s` on B covered the whole backlog %.1f s after start (progress is committed after the data is acknowledged, every second by default).", strings.Split(s.Flow, "->")[0], *s.ProgressSeconds)
	}
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
	w("Latency is end to end: from the source broker's append (the topic uses `message.timestamp.type=LogAppendTime`; replicators keep the timestamp) to a franz-go consumer on B receiving the record (fetch.max.wait 10 ms, polling continuously). The same consumer reads the source topic at the same time: that is the baseline, and \"added\" is target minus baseline per statistic. Timestamps have millisecond resolution.")
	w("")
	var tools []*latencyResult
	for i := range res.Latency {
		tools = append(tools, &res.Latency[i])
	}
	w("| | %s |", joinNonNil(tools, func(l *latencyResult) string { return l.Tool }, " | "))
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
}

func (res *results) limitsTable(w func(string, ...any)) {
	if len(res.Limits) == 0 {
		return
	}
	w("")
	w("## Client limits (franz-go alone, same records, codec and partitions)")
	w("")
	w("What one client reaches producing into, or consuming from, one of these brokers while no replicator runs (measured right after the preload): a replicator does both at once on the same cores, so under the same load it stays below the lower of the two.")
	w("")
	w("| run | cluster | records/s | MB/s | client CPU (s) | load average at start |")
	w("|---|---|--:|--:|--:|---|")
	for _, l := range res.Limits {
		w("| %s | %s | %.0f | %.1f | %.1f | %s |", l.Name, l.Cluster, l.RecordsPerSec, l.MBPerSec, l.ClientCPU, l.LoadAvg)
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
	w("Both tools read the same MM2 properties file per run; each run has its own cluster aliases (A1->B1, A2->B2, ...), so no remote topic, internal topic or group of one run can collide with another's. MM2 runs in dedicated mode (`org.apache.kafka.connect.mirror.MirrorMaker --clusters <target>`) through `scripts/kafka.sh mm2`, which execs the JVM with `%s`. Strait runs `strait run -c FILE --clusters <target>` with its defaults; keys it has no use for (batch.size, tasks.max) only produce a warning. See bench/README.md for why each setting.", res.MM2JVM)
	if res.Properties != "" {
		w("")
		w("```properties")
		w("%s```", res.Properties)
	}
	w("")
	w("Parameters: records %d, record size %d B, partitions %d, codec %s, target codec %s, %s, latency rate %.1f MB/s for %s (grace %s), copy timeout %s, memory partitions %s with %d records each, broker heap %s, MM2 heap %s.",
		p.Records, p.RecordSize, p.Partitions, p.Codec, p.TargetCodec, keysText(p.KeySpread), p.LatencyRateMBps, p.LatencyDuration.Duration, p.LatencyGrace.Duration,
		p.CopyTimeout.Duration, joinInts(p.MemPartitions), p.MemRecordsPerPartition, p.BrokerHeap, p.MM2.Heap)
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

func count[T any](xs []*T) int {
	n := 0
	for _, x := range xs {
		if x != nil {
			n++
		}
	}
	return n
}

func tern(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}
