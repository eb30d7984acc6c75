package main

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Poll intervals of the copy watch: fine until the first record shows up on the target
// (that time is a result), coarser afterwards to load broker B less.
const (
	pollBeforeFirst = 10 * time.Millisecond
	pollAfterFirst  = 50 * time.Millisecond
	progressTimeout = 60 * time.Second
	// copyStall fails a run whose target gained no record for this long after the first:
	// a stalled tool (MM2's producer stuck on OUT_OF_ORDER_SEQUENCE_NUMBER, say) would
	// otherwise hold the matrix until -copy-timeout.
	copyStall = 30 * time.Second
	// pollPartitions is the most partitions polled at those intervals: one ListOffsets
	// request costs broker B about 2 ms of CPU for 2,000 partitions, and more with more,
	// so above it both intervals grow in proportion (pollIntervals).
	pollPartitions = 2000
)

// pollIntervals returns the copy watch's intervals before and after the first record for
// a copy of partitions partitions: pollBeforeFirst and pollAfterFirst up to
// pollPartitions (every matrix cell), in proportion above (50 and 250 ms at 10,000), so
// the harness's polls do not take a growing share of broker B's CPU while a replicator
// starts thousands of partitions.
func pollIntervals(partitions int) (before, after time.Duration) {
	k := time.Duration(max(1, (partitions+pollPartitions-1)/pollPartitions))
	return k * pollBeforeFirst, k * pollAfterFirst
}

// copyResult is one tool copying a backlog from A to a fresh remote topic on B.
type copyResult struct {
	Tool string `json:"tool"`
	// WritebackSeconds is how long the dirty pages took to be written back
	// before the run started (settleWriteback).
	WritebackSeconds float64 `json:"writeback_s"`
	// Run numbers the runs of a cell per tool, from 1.
	Run         int    `json:"run"`
	Flow        string `json:"flow"`
	Topic       string `json:"source_topic"`
	RemoteTopic string `json:"remote_topic"`
	// Topics is the number of source topics (Topic and RemoteTopic name the first).
	Topics       int   `json:"topics"`
	Partitions   int   `json:"partitions"`
	Records      int64 `json:"records"`
	PayloadBytes int64 `json:"payload_bytes"`

	// FirstRecordSeconds is process start to the first record on B (end offsets polled).
	FirstRecordSeconds float64 `json:"first_record_s"`
	// AllStartedSeconds is process start to every partition of B's remote topics holding
	// at least one record (of those whose source partition holds any), from the same polls
	// as FirstRecordSeconds; nil if that never happened.
	AllStartedSeconds *float64 `json:"all_partitions_started_s,omitempty"`
	// HalfStartedSeconds and P90StartedSeconds are the same for half and for 90 % of
	// those partitions: whether a few trail the rest.
	HalfStartedSeconds *float64 `json:"half_partitions_started_s,omitempty"`
	P90StartedSeconds  *float64 `json:"p90_partitions_started_s,omitempty"`
	// WallSeconds is process start to every partition of B's remote topic holding as many
	// records as the source partition.
	WallSeconds float64 `json:"wall_s"`
	// ProgressSeconds is process start to Strait's progress group covering the whole
	// backlog (Strait only; nil for MM2).
	ProgressSeconds *float64 `json:"progress_committed_s,omitempty"`
	// TargetRecords is the records on B at completion: the sum of B's end offsets, or in
	// exactly-once mode the records a read_committed reader sees (complete.go); more
	// than Records means duplicates.
	TargetRecords int64 `json:"target_records"`
	// TargetOffsets is the sum of B's high watermarks at completion in exactly-once
	// mode: the records plus the transaction markers (and any aborted records).
	TargetOffsets int64 `json:"target_offsets,omitempty"`

	RecordsPerSec float64 `json:"records_per_s"`
	MBPerSec      float64 `json:"mb_per_s"`
	// SteadyMBPerSec leaves out startup: payload over (wall - first record).
	SteadyMBPerSec float64 `json:"steady_mb_per_s"`
	CPUSeconds     float64 `json:"cpu_s"`
	CPUPerGB       float64 `json:"cpu_s_per_gb"`
	// SteadyCPUSeconds is the CPU used from the first record on B to completion: without
	// process startup (JVM start and JIT warm-up for MM2). Read when the first record shows,
	// so it includes a little of the copy's own start.
	SteadyCPUSeconds float64 `json:"steady_cpu_s"`
	SteadyCPUPerGB   float64 `json:"steady_cpu_s_per_gb"`

	Process procStats `json:"process"`
	// BrokerCPU is the CPU seconds each broker (a, b) used from tool start to completion.
	BrokerCPU   map[string]float64 `json:"broker_cpu_s"`
	StopSeconds float64            `json:"stop_s"`
	Killed      bool               `json:"killed_after_timeout"`
	LoadAvg     string             `json:"load_avg_at_start"`
	// MM2Settings is what MM2's log says its data producer and source consumers used of
	// each setting the harness wrote (MM2 only).
	MM2Settings []settingCheck `json:"mm2_settings,omitempty"`
	// LinkBytesDown is what crossed the link proxy from A during the copy, in a
	// distance cell (records, with their batch headers, and the tool's other reads).
	LinkBytesDown int64 `json:"link_bytes_down,omitempty"`
	// StraitRecordPath counts the partitions Strait's log says continued on the record
	// path (Strait only).
	StraitRecordPath int `json:"strait_record_path_partitions"`
	// Error is why the run failed (a matrix goes on with the next run); a failed run is
	// left out of the medians and ranges.
	Error string `json:"error,omitempty"`
}

// copyRun starts tool on a new flow for the topics of src and waits until B holds the whole
// backlog (srcEnds per partition, flattened as endOffsetsAll; for a tool in exactly-once
// mode, until a read_committed reader sees it all, see complete.go). CPU and peak RSS are
// read at completion, then the tool stops.
//
// Each run starts once the page cache holds nothing dirty (settleWriteback):
// the preload, the client limits and the previous run leave up to a
// gigabyte for the kernel to write back, which throttled the writes of the
// run right after them. That was always the first Strait run of a cell: in
// cell 1 it took 3.0 s for 300 MB against 0.6 s for the next two.
//
// srcEnds are the source's end offsets and records its records, per partition: the same
// but for a source written in transactions (-source-txn), whose markers take offsets. A
// copy is complete when B holds the records, or for strait-keep, when B ends where A does.
func (r *runner) copyRun(ctx context.Context, tool string, src topicSet, targetCodec string, srcEnds, records []int64, payload int64) (copyResult, error) {
	settled := settleWriteback()
	f := r.nextFlow(src, targetCodec)
	remotes := f.remoteTopics()
	partitions := src.partitions
	res := copyResult{
		WritebackSeconds: settled.Seconds(),
		Tool:             tool, Flow: f.source + "->" + f.target, Topic: src.names[0], RemoteTopic: remotes[0], Topics: len(src.names),
		Partitions: partitions * len(src.names), Records: sum(records), PayloadBytes: payload, LoadAvg: loadAvg(),
	}
	broker0 := r.brokerCPU()
	var down0 int64
	if r.viaLink {
		down0 = r.link.bytesDown()
	}
	pr, err := r.launch(tool, f)
	if err != nil {
		return res, err
	}
	defer pr.stop(stopTimeoutTool) // on every error path; a no-op once stopped below

	eos := isEOS(tool, r.p.StraitProps)
	want := records
	if tool == toolStraitKeep {
		want = srcEnds
	}
	seen, err := r.watchCopy(ctx, copyWatch{tool: tool, remotes: remotes, partitions: partitions, want: want,
		procs: []*proc{pr}, deadline: pr.started.Add(r.p.CopyTimeout.Duration), committed: eos})
	if err != nil {
		return res, err
	}
	st := seen.atDone[0]
	res.Process = st
	res.SteadyCPUSeconds = st.CPUSeconds() - seen.atFirst[0].CPUSeconds()
	res.FirstRecordSeconds = seen.first.Sub(pr.started).Seconds()
	res.WallSeconds = seen.done.Sub(pr.started).Seconds()
	since := func(t time.Time) *float64 {
		if t.IsZero() {
			return nil
		}
		s := t.Sub(pr.started).Seconds()
		return &s
	}
	res.HalfStartedSeconds, res.P90StartedSeconds, res.AllStartedSeconds = since(seen.started[0]), since(seen.started[1]), since(seen.allStarted())
	res.TargetRecords = sum(seen.records)
	res.BrokerCPU = map[string]float64{}
	for k, v := range seen.brokerAt {
		res.BrokerCPU[k] = v - broker0[k]
	}
	res.derive()
	if r.viaLink {
		// The tool's configuration names only the proxy for A, and A advertises the
		// proxy; this makes sure the records did cross it.
		res.LinkBytesDown = r.link.bytesDown() - down0
		if res.LinkBytesDown < payload {
			return res, pr.failure("copied %d bytes of payload but only %d bytes crossed the link proxy from A: it bypassed the link", payload, res.LinkBytesDown)
		}
	}
	r.log.Info("copy complete", "tool", tool, "wall_s", res.WallSeconds, "mb_per_s", res.MBPerSec, "cpu_s", res.CPUSeconds, "peak_rss_mb", float64(st.PeakRSSBytes)/1e6)
	if res.TargetRecords != res.Records && tool != toolStraitKeep { // strait-keep's ends count its filler
		r.log.Warn("the target holds more records than the source: duplicates", "tool", tool, "target", res.TargetRecords, "source", res.Records)
	}
	if eos {
		res.TargetOffsets = sum(seen.ends)
		if err := checkTransactional(r.log, tool, seen.records, seen.ends); err != nil {
			return res, pr.failure("%v", err)
		}
	}

	if baseTool(tool) == toolStrait {
		// Strait's progress trails the data by its flush interval; its arrival shows the
		// copy is complete in Strait's own books too.
		adm := kadm.NewClient(r.dst)
		group := "strait-" + f.source
		err := waitFor(ctx, progressTimeout, pollAfterFirst, func() error {
			got, err := committedOffsets(ctx, adm, group, remotes, partitions)
			if err != nil {
				return err
			}
			if ok, n := covered(got, srcEnds); !ok {
				return fmt.Errorf("group %q on cluster b has progress %d of %d for %q", group, n, res.Records, res.RemoteTopic)
			}
			return nil
		})
		if err != nil {
			return res, pr.failure("the data is on the target but the progress group lags: %v", err)
		}
		s := time.Since(pr.started).Seconds()
		res.ProgressSeconds = &s
	}
	stopped, killed := pr.stop(stopTimeoutTool)
	res.StopSeconds, res.Killed = stopped.Seconds(), killed
	switch baseTool(tool) {
	case toolMM2:
		// MM2 logs every client's configuration when it creates the client: the data
		// producer and the source consumers exist by now.
		want := f.wantedMM2Settings(tool == toolMM2EOS)
		if tool == toolMM2Default {
			want = f.wantedMM2Defaults()
		}
		checks, err := checkMM2Settings(pr.mm2Log, want)
		res.MM2Settings = checks
		if err != nil {
			return res, fmt.Errorf("MM2 did not run with the settings both tools were given (%s): %w", pr.mm2Log, err)
		}
	case toolStrait:
		res.StraitRecordPath = countRecordPath(pr.logPath)
	}
	return res, nil
}

// derive fills in the rates from the measured times and counts.
func (c *copyResult) derive() {
	c.CPUSeconds = c.Process.CPUSeconds()
	if c.WallSeconds > 0 {
		c.RecordsPerSec = float64(c.Records) / c.WallSeconds
		c.MBPerSec = mbps(c.PayloadBytes, c.WallSeconds)
	}
	c.SteadyMBPerSec = mbps(c.PayloadBytes, c.WallSeconds-c.FirstRecordSeconds)
	if c.PayloadBytes > 0 {
		c.CPUPerGB = c.CPUSeconds / (float64(c.PayloadBytes) / 1e9)
		c.SteadyCPUPerGB = c.SteadyCPUSeconds / (float64(c.PayloadBytes) / 1e9)
	}
}

// settleWriteback writes every dirty page of the machine back (sync(2))
// and returns how long it took.
func settleWriteback() time.Duration {
	began := time.Now()
	syscall.Sync()
	return time.Since(began)
}
