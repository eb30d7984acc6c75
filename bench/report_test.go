package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// sampleResults is a fixed result set covering every table.
func sampleResults(t *testing.T) *results {
	t.Helper()
	p := defaultParams()
	p.Mode, p.MM2.TasksMax, p.TargetCodec = modeAll, 8, "none"
	progress := 7.8
	res := &results{
		Started: time.Date(2026, 11, 29, 15, 58, 17, 0, time.UTC), Seconds: 223, LoadStart: "2.09 6.36 5.22", LoadEnd: "9.03 7.58 5.93",
		Machine: machineInfo{CPUModel: "AMD EPYC", Cores: 2, MemoryBytes: 24 << 30, Kernel: "6.18", GoVersion: "go1.26.8",
			JavaVersion: "openjdk 17", KafkaVersion: "4.1.1", StraitVersion: "dev", StraitCommit: "f696af874078aaaa"},
		Params:     p,
		Properties: "clusters = A2, B2\n",
		Cells: []cellResult{{
			Index: 1, Workload: newWorkload(1024, 8, 1, "none", false, targetSame, 2_000_000), StraitPath: "fast",
			Preload: &preloadResult{Topic: backlogTopic, Topics: 1, produceResult: produceResult{Records: 2_000_000, PayloadBytes: 2_064_000_000, Seconds: 4.75, ClientCPU: 2.1}, DiskBytes: 2_083_776_942, LoadAvg: "2.31 6.26 5.20"},
			Limits:  []limitResult{{Name: "produce-only", Cluster: "b", RecordsPerSec: 293023, MBPerSec: 302.4, ClientCPU: 2.2, LoadAvg: "11.23 7.90 6.00"}},
			Copies: []copyResult{
				{Tool: toolStrait, Flow: "A1->B1", Partitions: 8, Records: 2_000_000, PayloadBytes: 2_064_000_000, FirstRecordSeconds: 1.05, WallSeconds: 7.07,
					ProgressSeconds: &progress, TargetRecords: 2_000_000, Process: procStats{UserSeconds: 2, SysSeconds: 1.15, PeakRSSBytes: 400 << 20},
					SteadyCPUSeconds: 3, BrokerCPU: map[string]float64{"a": 1.9, "b": 6.6}, LoadAvg: "2.61 6.26 5.21"},
				{Tool: toolMM2, Flow: "A2->B2", Partitions: 8, Records: 2_000_000, PayloadBytes: 2_064_000_000, FirstRecordSeconds: 8.81, WallSeconds: 34.59,
					TargetRecords: 2_000_000, Process: procStats{Comm: "java", UserSeconds: 35, SysSeconds: 5.66, PeakRSSBytes: 2387 << 20},
					SteadyCPUSeconds: 27.3, BrokerCPU: map[string]float64{"a": 7.9, "b": 17.5}, LoadAvg: "2.28 6.07 5.15"},
			},
		}},
		Latency: []latencyResult{
			{Tool: toolStrait, Warmup: 48446, Produced: 290732, ProducedMBs: 5, ReadySeconds: 0.6, ToolCPUSeconds: 12.1,
				Source: latencyStats{P50Ms: 1.2, P99Ms: 4.4, MaxMs: 30.3}, Target: latencyStats{P50Ms: 9.4, P99Ms: 18.6, MaxMs: 48.8},
				AddedP50Ms: 8.2, AddedP99Ms: 14.2, AddedMaxMs: 18.5, Process: procStats{PeakRSSBytes: 22 << 20}, LoadAvg: "6.94 6.87 5.46",
				Run: 1, BrokerGC: map[string]gcPauses{"a": {Count: 3, TotalMs: 30, MaxMs: 12}, "b": {Count: 2, TotalMs: 20.5, MaxMs: 11}}},
			{Tool: toolMM2, Warmup: 48440, Produced: 290739, ProducedMBs: 5, ReadySeconds: 10, ToolCPUSeconds: 48.3,
				Source: latencyStats{P50Ms: 2.4, P99Ms: 12.1, MaxMs: 51.1}, Target: latencyStats{P50Ms: 13.5, P99Ms: 58.4, MaxMs: 161.8},
				AddedP50Ms: 11.1, AddedP99Ms: 46.3, AddedMaxMs: 110.7, Process: procStats{PeakRSSBytes: 1659 << 20}, LoadAvg: "5.64 5.99 5.31",
				Run: 1, BrokerGC: map[string]gcPauses{"a": {Count: 4, TotalMs: 41, MaxMs: 14}, "b": {Count: 5, TotalMs: 60, MaxMs: 19}}},
			{Tool: toolStrait, Warmup: 48446, Produced: 290730, ProducedMBs: 5, ReadySeconds: 0.7, ToolCPUSeconds: 12.5,
				Source: latencyStats{P50Ms: 1.3, P99Ms: 5.0, MaxMs: 31.0}, Target: latencyStats{P50Ms: 9.9, P99Ms: 21.0, MaxMs: 60.0},
				AddedP50Ms: 8.6, AddedP99Ms: 16.0, AddedMaxMs: 29.0, Process: procStats{PeakRSSBytes: 23 << 20}, LoadAvg: "6.10 6.50 5.40",
				Run: 2, BrokerGC: map[string]gcPauses{"a": {Count: 3, TotalMs: 33, MaxMs: 13}, "b": {Count: 2, TotalMs: 18, MaxMs: 10}}},
			// A machine stall: the baseline's tail beats the target's; left out of the summary.
			{Tool: toolStrait, Warmup: 48446, Produced: 290730, ProducedMBs: 5, ReadySeconds: 0.7, ToolCPUSeconds: 7.9,
				Source: latencyStats{Received: 290730, P50Ms: 4.4, P99Ms: 12522.1, MaxMs: 13350.1}, Target: latencyStats{Received: 290730, P50Ms: 24.0, P99Ms: 12461.1, MaxMs: 13295.1},
				AddedP50Ms: 19.6, AddedP99Ms: -60.9, AddedMaxMs: -54.9, Process: procStats{PeakRSSBytes: 100 << 20}, LoadAvg: "8.81 6.48 4.71", Run: 3},
		},
		Memory: []copyResult{
			{Partitions: 100, Records: 5000, Process: procStats{PeakRSSBytes: 44 << 20}, WallSeconds: 2.2},
			{Partitions: 2000, Records: 100000, Process: procStats{PeakRSSBytes: 671 << 20}, WallSeconds: 9.2},
		},
	}
	c := &res.Cells[0]
	c.Name = c.Workload.name()
	for i := range c.Copies {
		c.Copies[i].Run = 1
		c.Copies[i].derive()
	}
	// A second run per tool, so the tables show ranges.
	for _, cp := range slices.Clone(c.Copies) {
		cp.Run, cp.WallSeconds, cp.SteadyCPUSeconds = 2, cp.WallSeconds*1.1, cp.SteadyCPUSeconds*0.9
		cp.derive()
		c.Copies = append(c.Copies, cp)
	}
	c.summarizeCell()
	res.MM2JVM = strings.Replace(mm2JVM, "<heap>", p.MM2.Heap, 1)
	return res
}

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*results)
		want   string // golden file
	}{
		{name: "every table", mutate: func(*results) {}, want: "report.md"},
		{name: "strait only, failed", mutate: func(r *results) {
			c := &r.Cells[0]
			c.Copies, c.Limits, r.Latency, r.Memory = c.Copies[:1], nil, nil, nil
			c.summarizeCell()
			r.Error = "copy run of mm2: exited\nmore"
		}, want: "report-strait-only.md"},
		{name: "matrix with the exactly-once row", mutate: func(r *results) {
			r.Params.Matrix, r.Latency, r.Memory = matrixReduced, nil, nil
			c := &r.Cells[0]
			c.Workload.EOS = []string{toolStraitEOS, toolMM2EOS}
			for _, cp := range slices.Clone(c.Copies) {
				cp.Tool = eosVariant(cp.Tool)
				cp.WallSeconds, cp.SteadyCPUSeconds = cp.WallSeconds*1.25, cp.SteadyCPUSeconds*1.3
				cp.TargetOffsets = cp.TargetRecords + 80
				if cp.Tool == toolStraitEOS {
					// Costs broker B more than MM2 exactly-once (by overlapping runs), so
					// the broker load table flags the row.
					cp.BrokerCPU = map[string]float64{"a": cp.BrokerCPU["a"], "b": cp.BrokerCPU["b"] * (2 + 0.5*float64(cp.Run))}
				}
				cp.derive()
				c.Copies = append(c.Copies, cp)
			}
			c.summarizeCell()
		}, want: "report-eos.md"},
		{name: "distance matrix", mutate: func(r *results) {
			r.Params.Matrix, r.Latency, r.Memory = matrixDistance, nil, nil
			r.Params.Tools = []string{toolStraitDefault, toolStrait, toolMM2, toolMM2Default}
			r.PropertiesMM2Default = "clusters = A3, B3\n"
			c := &r.Cells[0]
			c.Workload = newWorkload(1024, 8, 1, "none", false, targetUnset, 2_000_000)
			c.Workload.Link = &linkSpec{RTT: duration{150 * time.Millisecond}, MBps: 100}
			c.Name = c.Workload.name()
			c.Limits = []limitResult{{Name: limitLink, Cluster: "a via proxy", RecordsPerSec: 90000, MBPerSec: 80.1, SteadyMBPerSec: 92.9, Seconds: 22.2, FirstRecordSeconds: 0.9, LoadAvg: "2.00 2.00 2.00"}}
			for i := range c.Copies {
				c.Copies[i].LinkBytesDown = c.Copies[i].PayloadBytes * 1021 / 1000
			}
			// The first run of each replicator again, at its defaults.
			atDefaults := map[string]string{toolMM2: toolMM2Default, toolStrait: toolStraitDefault}
			slower := map[string]float64{toolMM2: 4, toolStrait: 0.8}
			for _, cp := range slices.Clone(c.Copies[:2]) {
				cp.Tool, cp.WallSeconds = atDefaults[cp.Tool], cp.WallSeconds*slower[cp.Tool]
				cp.derive()
				c.Copies = append(c.Copies, cp)
			}
			c.Copies = append(c.Copies, copyResult{Tool: toolMM2Default, Run: 2, Error: "stalled"})
			c.summarizeCell()
			// A second cell, uncapped, where only Strait ran, and the probe read the
			// backlog in one fetch.
			c2 := cellResult{Index: 2, Workload: newWorkload(1024, 64, 1, "none", false, targetUnset, 2_000_000), Copies: c.Copies[:1],
				Limits: []limitResult{{Name: limitLink, Cluster: "a via proxy", MBPerSec: 30, SteadyMBPerSec: 4000, Seconds: 1.7, FirstRecordSeconds: 1.69}}}
			c2.Workload.Link = &linkSpec{RTT: duration{150 * time.Millisecond}}
			c2.Name = c2.Workload.name()
			c2.summarizeCell()
			r.Cells = append(r.Cells, c2)
		}, want: "report-distance.md"},
		{name: "nodes mode", mutate: func(r *results) {
			r.Params.Mode, r.Params.Records, r.Params.Nodes = modeNodes, 1_000_000, []int{1, 2, 3}
			r.Cells, r.Latency, r.Memory = nil, nil, nil
			r.Warmup = &warmupResult{Bytes: 307_200_000, Seconds: 4.1}
			r.Nodes = sampleNodes()
			r.Properties = "clusters = A2, B2\n\n"
		}, want: "report-nodes.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := sampleResults(t)
			tt.mutate(res)
			golden(t, tt.want, res.markdown())
		})
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	res := sampleResults(t)
	md, files, err := res.write(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"20261129-155817.json", "20261129-155817.md", "latest.md"}
	for i, f := range files {
		if filepath.Base(f) != want[i] {
			t.Errorf("file %d = %s, want %s", i, filepath.Base(f), want[i])
		}
	}
	latest, err := os.ReadFile(filepath.Join(dir, "latest.md"))
	if title, _, _ := strings.Cut(md, "\n"); err != nil || !strings.Contains(string(latest), "[20261129-155817.md](20261129-155817.md): "+strings.TrimPrefix(title, "# ")) {
		t.Errorf("latest.md does not point at the report (err %v):\n%s", err, latest)
	}
	b, err := os.ReadFile(filepath.Join(dir, "20261129-155817.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("the JSON does not parse: %v", err)
	}
	params := back["params"].(map[string]any)
	if params["latency_duration"] != "1m0s" || back["mm2_jvm_flags"] == "" {
		t.Errorf("JSON params = %v, mm2_jvm_flags = %v", params, back["mm2_jvm_flags"])
	}
}
