package main

import (
	"encoding/xml"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReducedMatrixCoversEveryAxis checks the promise of -matrix: every value of every axis
// at least once, within 15 minutes by the estimate.
func TestReducedMatrixCoversEveryAxis(t *testing.T) {
	cells := reducedMatrix(1)
	has := func(f func(workload) bool) bool { return slices.ContainsFunc(cells, f) }
	for _, size := range []int{100, 1024, 16384} {
		if !has(func(w workload) bool { return w.RecordSize == size }) {
			t.Errorf("no cell with %d B records", size)
		}
	}
	for _, parts := range []int{8, 64, 512} {
		if !has(func(w workload) bool { return w.Partitions == parts && w.Topics == 1 }) {
			t.Errorf("no cell with %d partitions", parts)
		}
	}
	for _, c := range codecs {
		if !has(func(w workload) bool { return w.Codec == c && !w.Mixed }) {
			t.Errorf("no cell with source codec %s", c)
		}
	}
	for _, tg := range []string{targetUnset, targetSame, targetDifferent} {
		if !has(func(w workload) bool { return w.Target == tg }) {
			t.Errorf("no cell with compression.type %s", tg)
		}
	}
	if !has(func(w workload) bool { return w.Mixed }) {
		t.Error("no mixed-codec cell")
	}
	if !has(func(w workload) bool { return w.Topics == 2000 && w.Partitions == 1 }) {
		t.Error("no cell of 2,000 topics of 1 partition")
	}
	if !has(func(w workload) bool { return w.Limits && w.RecordSize == 1024 && w.Codec == "none" }) {
		t.Error("no produce-only limit for 1 KiB uncompressed")
	}
	p := defaultParams()
	p.Matrix = matrixReduced
	p.LatencyWarmup.Duration, p.LatencyDuration.Duration = 5*time.Second, 10*time.Second // the matrix defaults (params.go)
	// The matrix as -matrix runs it: cell 1's workload also runs Strait in exactly-once mode.
	cells = p.matrixCells()
	if got := cells[0].tools(p.Tools); !slices.Equal(got, []string{toolStrait, toolStraitEOS, toolMM2}) {
		t.Errorf("cell 1 runs %v, want strait, strait-eos, mm2 (the exactly-once row)", got)
	}
	for _, w := range cells[1:] {
		if len(w.EOS) > 0 {
			t.Errorf("cell %d (%s) runs exactly-once variants %v: only cell 1's workload should", w.Cell, w.name(), w.EOS)
		}
	}
	est := estimate(cells, 3, p.Tools, latencyEstimate(p))
	if est > 15*time.Minute {
		t.Errorf("the reduced matrix is estimated at %s, more than 15 minutes", est)
	}
	t.Logf("reduced matrix: %d cells, estimated %s; full matrix: %s", len(cells), est, estimate(fullMatrix(1), 3, p.Tools, latencyEstimate(p)))
}

func TestFullMatrix(t *testing.T) {
	cells := fullMatrix(1)
	if len(cells) != 3*3*5*3+2 {
		t.Errorf("%d cells, want %d", len(cells), 3*3*5*3+2)
	}
	names := map[string]bool{}
	for _, w := range cells {
		if names[w.name()] {
			t.Errorf("two cells named %q", w.name())
		}
		names[w.name()] = true
		if w.Target == targetDifferent && w.TargetCodec == w.Codec {
			t.Errorf("%s: the different codec is the source's", w.name())
		}
	}
}

func TestWorkload(t *testing.T) {
	tests := []struct {
		w        workload
		name     string
		codec    string
		path     string
		straitKV string
	}{
		{w: newWorkload(1024, 8, 1, "none", false, targetUnset, 10), name: "1 KiB × 8p, none → unset", codec: "", path: "fast"},
		{w: newWorkload(100, 64, 1, "lz4", false, targetSame, 10), name: "100 B × 64p, lz4 → lz4 (same)", codec: "lz4", path: "fast"},
		{w: newWorkload(16384, 8, 1, "zstd", false, targetDifferent, 10), name: "16 KiB × 8p, zstd → lz4 (different)", codec: "lz4", path: "fast"},
		{w: newWorkload(1024, 64, 1, "snappy", true, targetSame, 10), name: "1 KiB × 64p, none+snappy mixed → snappy (same)", codec: "snappy", path: "fast"},
		{w: newWorkload(1024, 1, 2000, "lz4", false, targetUnset, 10), name: "1 KiB × 2000 topics × 1p, lz4 → unset", codec: "", path: "fast"},
		{w: newWorkload(1024, 8, 1, "none", false, targetUnset, 10), name: "1 KiB × 8p, none → unset", codec: "", path: "record", straitKV: "strait.fast.path = false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.w.name(); got != tt.name {
				t.Errorf("name() = %q, want %q", got, tt.name)
			}
			if tt.w.TargetCodec != tt.codec {
				t.Errorf("TargetCodec = %q, want %q", tt.w.TargetCodec, tt.codec)
			}
			if got := tt.w.straitPath(tt.straitKV); got != tt.path {
				t.Errorf("straitPath() = %q, want %q", got, tt.path)
			}
		})
	}
}

func TestStatOf(t *testing.T) {
	tests := []struct {
		in   []float64
		want stat
	}{
		{in: nil, want: stat{}},
		{in: []float64{5}, want: stat{Median: 5, Min: 5, Max: 5}},
		{in: []float64{3, 1, 2}, want: stat{Median: 2, Min: 1, Max: 3}},
		{in: []float64{4, 1, 3, 2}, want: stat{Median: 2.5, Min: 1, Max: 4}},
	}
	for _, tt := range tests {
		if got := statOf(tt.in); got != tt.want {
			t.Errorf("statOf(%v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestSummarizeCellTargets(t *testing.T) {
	c := cellResult{StraitPath: "record", Copies: []copyResult{
		{Tool: toolStrait, SteadyMBPerSec: 300, SteadyCPUPerGB: 2, Process: procStats{PeakRSSBytes: 100 << 20}},
		{Tool: toolMM2, SteadyMBPerSec: 90, SteadyCPUPerGB: 10, Process: procStats{PeakRSSBytes: 1000 << 20}},
		{Tool: toolStrait, SteadyMBPerSec: 200, SteadyCPUPerGB: 3, Process: procStats{PeakRSSBytes: 120 << 20}},
		{Tool: toolMM2, SteadyMBPerSec: 110, SteadyCPUPerGB: 10, Process: procStats{PeakRSSBytes: 1000 << 20}},
		{Tool: toolMM2, Error: "copy incomplete after -copy-timeout 2m0s"}, // left out of the medians
		{Tool: toolStrait, Run: 3, Records: 10, TargetRecords: 12, SteadyMBPerSec: 250, SteadyCPUPerGB: 2.5, Process: procStats{PeakRSSBytes: 110 << 20}},
	}}
	c.summarizeCell()
	if c.Failed[toolMM2] != 1 || c.Summary[toolMM2].Runs != 2 {
		t.Errorf("failed %v, MM2 runs %d: want 1 failed, 2 counted", c.Failed, c.Summary[toolMM2].Runs)
	}
	if got := failedText(c); got != "; **mm2: 1 of 3 runs failed**, **strait run 3: 2 duplicates on B**" {
		t.Errorf("failedText = %q", got)
	}
	if got := c.Ratios.SteadyMBps; got != 2.5 { // 250 / 100
		t.Errorf("throughput ratio %g, want 2.5", got)
	}
	met := map[string]bool{}
	for _, tg := range c.Targets {
		met[tg.Name] = tg.Met
	}
	// 2.5× < 3×; CPU 2.5/10 = 1/4 on the record path; RSS 110/1000 < 1/8.
	if met["throughput"] || !met["cpu"] || !met["rss"] {
		t.Errorf("targets %+v", c.Targets)
	}
	if got := targetsText(c.Targets); got != "met: CPU/GB ≤ 1/4 (record path), RSS ≤ 1/8; **missed: throughput ≥ 3×**" {
		t.Errorf("targetsText = %q", got)
	}
}

// TestBrokerLoad checks the CPU per GB each broker costs per tool (over the runs that read
// it, failed runs left out) and broker B's comparison of Strait with MM2.
func TestBrokerLoad(t *testing.T) {
	const gb = 2_000_000_000 // 2 GB of payload per run
	c := cellResult{Copies: []copyResult{
		{Tool: toolStrait, PayloadBytes: gb, BrokerCPU: map[string]float64{"a": 1, "b": 6}},
		{Tool: toolMM2, PayloadBytes: gb, BrokerCPU: map[string]float64{"a": 4, "b": 10}},
		{Tool: toolStrait, PayloadBytes: gb, BrokerCPU: map[string]float64{"b": 2}}, // broker A not read
		{Tool: toolMM2, PayloadBytes: gb, BrokerCPU: map[string]float64{"a": 6, "b": 14}},
		{Tool: toolMM2, Error: "stalled", PayloadBytes: gb, BrokerCPU: map[string]float64{"a": 90, "b": 90}}, // left out
		{Tool: toolStrait, PayloadBytes: gb, BrokerCPU: map[string]float64{"a": 3, "b": 4}},
	}}
	c.summarizeCell()
	s, m := c.Summary[toolStrait], c.Summary[toolMM2]
	want := map[string]stat{"a": {Median: 1, Min: 0.5, Max: 1.5}, "b": {Median: 2, Min: 1, Max: 3}}
	if len(s.BrokerCPUPerGB) != 2 || s.BrokerCPUPerGB["a"] != want["a"] || s.BrokerCPUPerGB["b"] != want["b"] {
		t.Errorf("Strait's broker CPU per GB %+v, want %+v", s.BrokerCPUPerGB, want)
	}
	if got := m.BrokerCPUPerGB["b"]; got != (stat{Median: 6, Min: 5, Max: 7}) {
		t.Errorf("MM2's broker B CPU per GB %+v, want 6 [5–7]", got)
	}
	if got := c.Ratios.BrokerBCPUPerGB; got != 2.0/6 {
		t.Errorf("broker B ratio %g, want 1/3", got)
	}
	tests := []struct {
		name               string
		strait, mm2        stat
		ratio              float64
		above, overlap, ok bool
		text               string
	}{
		{name: "lower, apart", strait: stat{Median: 2, Min: 1, Max: 3}, mm2: stat{Median: 8, Min: 6, Max: 9}, ratio: 0.25, ok: true, text: "0.25"},
		{name: "equal", strait: stat{Median: 4, Min: 4, Max: 4}, mm2: stat{Median: 4, Min: 4, Max: 4}, ratio: 1, overlap: true, ok: true, text: "1.00"},
		{name: "higher, apart", strait: stat{Median: 15, Min: 15, Max: 16}, mm2: stat{Median: 12, Min: 10, Max: 13}, ratio: 1.25, above: true, ok: true, text: "**1.25, higher**"},
		{name: "higher, overlapping", strait: stat{Median: 5, Min: 3, Max: 6}, mm2: stat{Median: 4, Min: 3.5, Max: 7}, ratio: 1.25, above: true, overlap: true, ok: true, text: "**1.25, higher** (ranges overlap)"},
		{name: "MM2 without the figure", strait: stat{Median: 5, Min: 5, Max: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := toolSummary{Runs: 1, BrokerCPUPerGB: map[string]stat{"b": tt.strait}}
			mt := toolSummary{Runs: 1}
			if tt.mm2 != (stat{}) {
				mt.BrokerCPUPerGB = map[string]stat{"b": tt.mm2}
			}
			ratio, above, overlap, ok := brokerBLoad(st, mt)
			if ratio != tt.ratio || above != tt.above || overlap != tt.overlap || ok != tt.ok {
				t.Errorf("brokerBLoad = %g, above %v, overlap %v, ok %v; want %g, %v, %v, %v", ratio, above, overlap, ok, tt.ratio, tt.above, tt.overlap, tt.ok)
			}
			if ok {
				if got := brokerBRatioText(ratio, above, overlap); got != tt.text {
					t.Errorf("brokerBRatioText = %q, want %q", got, tt.text)
				}
			}
		})
	}
}

func TestChartSVG(t *testing.T) {
	res := sampleResults(t)
	res.Params.Matrix = matrixReduced
	svg := res.chartSVG()
	if err := xml.Unmarshal([]byte(svg), new(struct{ XMLName xml.Name })); err != nil {
		t.Fatalf("the chart is not well-formed XML: %v\n%s", err, svg)
	}
	for _, s := range []string{"1. 1 KiB × 8p, none → none (same)", ">Strait<", ">MM2<"} {
		if !strings.Contains(svg, s) {
			t.Errorf("the chart lacks %q", s)
		}
	}
}

func TestNiceCeil(t *testing.T) {
	for in, want := range map[float64]float64{0.3: 0.5, 1: 1, 7: 10, 12: 20, 342.9: 500, 1001: 2000} {
		if got := niceCeil(in); got != want {
			t.Errorf("niceCeil(%g) = %g, want %g", in, got, want)
		}
	}
}
