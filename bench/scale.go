package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"
)

// The scale mode (issue 23, "Scale on one node"): thousands of topics, a few records in
// every partition, copied by one Strait process (and MM2 with -tools strait,mm2). It
// measures how long the copy takes to start, to start every partition and to finish,
// and Strait's peak RSS, against the targets for 10,000 partitions (5,000 topics
// × 2) on one node.
const (
	scaleGoalFirstRecord = 5 * time.Second
	scaleGoalAllStarted  = 60 * time.Second
	scaleGoalPeakRSSMiB  = 200

	// scaleMaxTopics keeps topic names in manyTopics' four digits (and the test bed sane).
	scaleMaxTopics = 10_000
	// scaleMaxPartitions is the most partitions one set may have: every broker keeps a
	// file open and two index maps per partition (and B as many again per tool run).
	scaleMaxPartitions = 20_000
	// scaleMaxPayloadMB bounds the backlog: the mode measures start and memory, not bulk
	// copying, which the matrix covers.
	scaleMaxPayloadMB = 2_000
	// scaleBrokerHeap is the brokers' heap in the scale mode unless -broker-heap says
	// otherwise: see scaleDefaults.
	scaleBrokerHeap = "2g"
	// scaleFilesPerBroker is what a broker holds open besides its partitions' logs:
	// jars, sockets, checkpoint files, the JVM's own.
	scaleFilesPerBroker = 10_000
)

// scaleRun is one topic count of the scale mode: its backlog on A and a copy per tool.
type scaleRun struct {
	Topics              int            `json:"topics"`
	PartitionsPerTopic  int            `json:"partitions_per_topic"`
	RecordsPerPartition int            `json:"records_per_partition"`
	Preload             *preloadResult `json:"preload,omitempty"`
	Copies              []copyResult   `json:"copies"`
	// Targets are issue 23's targets checked for every good copy.
	Targets []scaleCheck `json:"targets,omitempty"`
}

// scaleCheck is one figure of one copy against its target.
type scaleCheck struct {
	Tool  string  `json:"tool"`
	Name  string  `json:"name"` // first_record_s, all_partitions_started_s, peak_rss_mib
	Goal  string  `json:"goal"`
	Value float64 `json:"value"`
	Met   bool    `json:"met"`
}

// partitions is the partitions of every topic of the run together.
func (s scaleRun) partitions() int { return s.Topics * s.PartitionsPerTopic }

// scaleChecks checks a good copy's start times and peak RSS against issue 23's targets;
// a failed copy has none. Every partition started is missing (nil) only for a copy
// that never saw it, which then cannot have met it.
func scaleChecks(c copyResult) []scaleCheck {
	if c.Error != "" {
		return nil
	}
	rss := float64(c.Process.PeakRSSBytes) / (1 << 20)
	all, allMet := -1.0, false
	if c.AllStartedSeconds != nil {
		all, allMet = *c.AllStartedSeconds, *c.AllStartedSeconds < scaleGoalAllStarted.Seconds()
	}
	return []scaleCheck{
		{Tool: c.Tool, Name: "first_record_s", Goal: fmt.Sprintf("< %.0f s", scaleGoalFirstRecord.Seconds()), Value: c.FirstRecordSeconds,
			Met: c.FirstRecordSeconds < scaleGoalFirstRecord.Seconds()},
		{Tool: c.Tool, Name: "all_partitions_started_s", Goal: fmt.Sprintf("< %.0f s", scaleGoalAllStarted.Seconds()), Value: all, Met: allMet},
		{Tool: c.Tool, Name: "peak_rss_mib", Goal: fmt.Sprintf("< %d MiB", scaleGoalPeakRSSMiB), Value: rss, Met: rss > 0 && rss < scaleGoalPeakRSSMiB},
	}
}

// scaleDefaults are the scale mode's defaults for flags the user did not set (set holds
// the flags given). Strait alone: MM2 joins with -tools strait,mm2. The brokers get a
// 2 GB heap instead of 1 GB: each of 10,000 partitions (and on B as many again per tool
// run, until a deleted topic's files go) costs a broker heap for its log, segment,
// producer state and the per-topic metrics, and a full heap would stall the broker
// exactly while the partitions start, the figure measured.
func (p *params) scaleDefaults(set map[string]bool) {
	if !set["tools"] {
		p.Tools = []string{toolStrait}
	}
	if !set["broker-heap"] {
		p.BrokerHeap = scaleBrokerHeap
	}
}

// validateScale checks the -scale-* flags; bad collects every problem.
func (p *params) validateScale(bad func(string, ...any)) {
	if p.Mode == modeScale && len(p.ScaleTopics) == 0 {
		bad("-scale-topics is empty: give topic counts such as 5000 or 2000,5000")
	}
	for _, n := range p.ScaleTopics {
		if n < 1 || n > scaleMaxTopics {
			bad("-scale-topics: %d is not between 1 and %d", n, scaleMaxTopics)
		}
	}
	if p.ScalePartitions < 1 || p.ScalePartitions > 1000 {
		bad("-scale-partitions %d: use 1 to 1000 partitions per topic", p.ScalePartitions)
	}
	if p.ScaleRecords < 1 {
		bad("-scale-records %d: must be at least 1: every partition needs a record to be seen starting", p.ScaleRecords)
	}
	if p.Mode != modeScale || p.ScalePartitions < 1 || p.ScaleRecords < 1 {
		return
	}
	for _, n := range p.ScaleTopics {
		if n < 1 || n > scaleMaxTopics {
			continue
		}
		parts := n * p.ScalePartitions
		if parts > scaleMaxPartitions {
			bad("-scale-topics %d × -scale-partitions %d is %d partitions: use at most %d on this one-broker test bed", n, p.ScalePartitions, parts, scaleMaxPartitions)
			continue
		}
		if mb := float64(parts) * float64(p.ScaleRecords) * float64(p.RecordSize) / 1e6; mb > scaleMaxPayloadMB {
			bad("-scale-records %d: %d topics × %d partitions × %d records of %d B is %.0f MB; use at most %d MB (the mode measures the start, not bulk copying)",
				p.ScaleRecords, n, p.ScalePartitions, p.ScaleRecords, p.RecordSize, mb, scaleMaxPayloadMB)
		}
	}
}

// scaleOpenFiles is how many files a broker may hold open at worst in the scale mode:
// every partition of every set on A, every remote partition of every tool run on B
// (a deleted topic's files stay open until the broker removes them, a minute later),
// and scaleFilesPerBroker.
func (p *params) scaleOpenFiles() uint64 {
	total := 0
	for _, n := range p.ScaleTopics {
		total += n * p.ScalePartitions
	}
	return uint64(total*max(1, len(p.Tools))) + scaleFilesPerBroker
}

// raiseOpenFiles raises this process's open-files limit to at least need, raising the
// hard limit too when allowed (root), so the brokers that scripts/kafka.sh starts inherit
// it: a broker that runs out of files stops. Go restores the soft limit it found at start
// for its children unless the program sets the limit itself, as here. It returns the
// soft limit now in force.
func raiseOpenFiles(need uint64) (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("reading the open-files limit: %w", err)
	}
	if rl.Cur >= need {
		// Set it anyway (unchanged): Go would otherwise hand the children the soft
		// limit it found at start rather than the one it raised itself to.
		return rl.Cur, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
	want := syscall.Rlimit{Cur: need, Max: max(rl.Max, need)}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		// Not root: as far as the hard limit goes.
		rl.Cur = rl.Max
		if err2 := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err2 != nil {
			return 0, fmt.Errorf("raising the open-files limit to %d: %w", need, err2)
		}
		return rl.Cur, fmt.Errorf("raising the open-files limit to %d: %w; it stays at %d", need, err, rl.Cur)
	}
	return need, nil
}

// scale runs the scale mode: for each of -scale-topics, a backlog of -scale-records
// records in every partition of that many topics on A, copied once by each tool.
func (r *runner) scale(ctx context.Context) error {
	if err := r.warmUp(ctx); err != nil {
		return err
	}
	if r.res.Warmup != nil {
		// The report shows the file of the first measured copy, not the warm-up's.
		r.res.Properties, r.res.mm2Props = "", false
	}
	var errs []error
	for _, topics := range r.p.ScaleTopics {
		run, err := r.scaleRun(ctx, topics)
		r.res.Scale = append(r.res.Scale, run)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("scale run with %d topics: %w", topics, err))
			if run.Preload == nil {
				return errors.Join(errs...) // the clusters are in trouble: stop here
			}
		}
	}
	return errors.Join(errs...)
}

// scaleRun preloads topics × -scale-partitions partitions and copies them once with each
// tool, each on its own flow. A failed copy is recorded with its error and the next tool
// goes on. The remote topics are deleted after each copy and the source topics after the
// run, so the next topic count meets brokers without them (see runCell).
func (r *runner) scaleRun(ctx context.Context, topics int) (scaleRun, error) {
	p := r.p
	run := scaleRun{Topics: topics, PartitionsPerTopic: p.ScalePartitions, RecordsPerPartition: p.ScaleRecords}
	ts := manyTopics(fmt.Sprintf("bench-scale-%d", topics), topics, p.ScalePartitions)
	parts := run.partitions()
	// Null keys and runs of -scale-records records per partition, one partition after
	// the other: every partition gets its records, in whole batches.
	g := newGenerator(p.RecordSize, 0, parts)
	g.contiguous = p.ScaleRecords
	load, ends, err := r.preload(ctx, g, ts, parts*p.ScaleRecords, p.Codec, false, 0)
	if err != nil {
		return run, err
	}
	run.Preload = &load
	defer r.deleteTopics(ctx, r.src, ts.names)
	var errs []error
	for _, tool := range p.Tools {
		c, err := r.copyRun(ctx, tool, ts, p.TargetCodec, ends, ends, load.PayloadBytes)
		c.Run = 1
		if err != nil {
			if ctx.Err() != nil {
				return run, ctx.Err()
			}
			c.Error = err.Error()
			errs = append(errs, fmt.Errorf("copy of %s: %w", tool, err))
			r.log.Error("scale copy failed; going on with the next", "topics", topics, "tool", tool, "err", firstLine(err.Error()))
		} else {
			r.log.Info("scale copy complete", "topics", topics, "partitions", parts, "tool", tool, "first_record_s", c.FirstRecordSeconds,
				"half_started_s", secondsText(c.HalfStartedSeconds), "p90_started_s", secondsText(c.P90StartedSeconds),
				"all_started_s", secondsText(c.AllStartedSeconds), "wall_s", c.WallSeconds, "peak_rss_mib", float64(c.Process.PeakRSSBytes)/(1<<20))
		}
		run.Copies = append(run.Copies, c)
		run.Targets = append(run.Targets, scaleChecks(c)...)
		r.deleteRemotes(ctx, c.Flow, ts)
	}
	return run, errors.Join(errs...)
}

// scaleTable renders the scale mode: a row per topic count and tool, each figure with
// its target where issue 23 sets one.
func (res *results) scaleTable(w func(string, ...any)) {
	if len(res.Scale) == 0 {
		return
	}
	p := res.Params
	w("")
	w("## Scale on one node")
	w("")
	w("Every topic count is a fresh set of topics on A with %d partition(s) each and %d records of %d B in every partition (null keys, source codec %s), copied once by each replicator on a new flow with the file below. *First record*: process start to the first record on B. *Every partition started*: process start to the moment every remote partition on B holds at least one record (and when half and 90 %% of them did, to tell a slow start of all from a few that trail), from the same polls as the completion (one ListOffsets request for all partitions to B's broker, every 10 ms until the first record, then every 50 ms; above 2,000 partitions both in proportion, 50 and 250 ms at 10,000, so the polls do not load B more as the partitions grow). *Steady*: payload over the time from the first record to the complete copy. *With startup*: process start to the complete copy, what a user waits for. Peak RSS is VmHWM at completion. Issue 23's targets, for 10,000 partitions (5,000 topics × 2) on one node: first record under %.0f s, every partition started under %.0f s, peak RSS under %d MiB.",
		p.ScalePartitions, p.ScaleRecords, p.RecordSize, p.Codec, scaleGoalFirstRecord.Seconds(), scaleGoalAllStarted.Seconds(), scaleGoalPeakRSSMiB)
	w("")
	w("| topics × partitions | tool | records (MB) | first record (s), target < %.0f | half / 90 %% of the partitions started (s) | every partition started (s), target < %.0f | steady MB/s | with startup: wall (s) / MB/s | peak RSS (MiB), target < %d | CPU (s) | broker A / B CPU (s) | load average |",
		scaleGoalFirstRecord.Seconds(), scaleGoalAllStarted.Seconds(), scaleGoalPeakRSSMiB)
	w("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
	var failed []string
	for _, run := range res.Scale {
		shape := fmt.Sprintf("%d × %d = %d", run.Topics, run.PartitionsPerTopic, run.partitions())
		if len(run.Copies) == 0 {
			w("| %s | – | preload failed | – | – | – | – | – | – | – | – | – |", shape)
			continue
		}
		for _, c := range run.Copies {
			if c.Error != "" {
				w("| %s | %s | %d (%.0f) | **failed** | – | – | – | – | – | – | – | %s |", shape, c.Tool, c.Records, float64(c.PayloadBytes)/1e6, c.LoadAvg)
				failed = append(failed, fmt.Sprintf("%s on %d topics: `%s`", c.Tool, run.Topics, firstLine(c.Error)))
				continue
			}
			checks := scaleChecks(c)
			w("| %s | %s | %d (%.0f) | %s | %s / %s | %s | %.1f | %.1f / %.1f | %s | %.1f | %.1f / %.1f | %s |", shape, c.Tool, c.Records, float64(c.PayloadBytes)/1e6,
				checkText(checks[0], "%.2f"), secondsText(c.HalfStartedSeconds), secondsText(c.P90StartedSeconds), checkText(checks[1], "%.1f"),
				c.SteadyMBPerSec, c.WallSeconds, c.MBPerSec, checkText(checks[2], "%.0f"),
				c.CPUSeconds, c.BrokerCPU["a"], c.BrokerCPU["b"], c.LoadAvg)
		}
	}
	w("")
	for _, run := range res.Scale {
		if pl := run.Preload; pl != nil {
			w("- %d topics: the preload wrote %d records (%.0f MB payload, %.0f MB on A's disk) into %d partitions in %.1f s, load average %s.",
				run.Topics, pl.Records, float64(pl.PayloadBytes)/1e6, float64(pl.DiskBytes)/1e6, run.partitions(), pl.Seconds, pl.LoadAvg)
		}
	}
	for _, f := range failed {
		w("- Failed: %s", f)
	}
}

// secondsText is an optional time: "2.5", or "–" when it was not seen.
func secondsText(s *float64) string {
	if s == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f", *s)
}

// checkText is a checked figure with its verdict: "1.23 (met)" or "**7.10 (missed)**".
func checkText(c scaleCheck, format string) string {
	if c.Value < 0 {
		return "– **(missed)**"
	}
	v := fmt.Sprintf(format, c.Value)
	if c.Met {
		return v + " (met)"
	}
	return "**" + v + " (missed)**"
}

// scaleParameters is the scale mode's line of parameters under the tools' file.
func (res *results) scaleParameters(w func(string, ...any)) {
	p := res.Params
	w("")
	w("Parameters: topic counts %s, %d partition(s) per topic, %d records per partition, record size %d B, codec %s, target codec %s, tools %s, copy timeout %s, broker heap %s, MM2 heap %s.",
		joinInts(p.ScaleTopics), p.ScalePartitions, p.ScaleRecords, p.RecordSize, p.Codec, p.TargetCodec, strings.Join(p.Tools, ","),
		p.CopyTimeout.Duration, p.BrokerHeap, p.MM2.Heap)
}
