package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestAPIURL(t *testing.T) {
	tests := []struct {
		name string
		log  string
		want string
	}{
		{
			name: "text log",
			log: "time=2026-12-02T03:50:59.728Z level=INFO msg=\"soft memory limit for the Go runtime\" bytes=167772160\n" +
				"time=2026-12-02T03:50:59.729Z level=INFO msg=\"api listening\" url=http://127.0.0.1:44621 token=false\n",
			want: "http://127.0.0.1:44621",
		},
		{
			name: "json log",
			log:  `{"time":"2026-12-02T03:50:59.729Z","level":"INFO","msg":"api listening","url":"http://127.0.0.1:44621","token":false}` + "\n",
			want: "http://127.0.0.1:44621",
		},
		{
			name: "not listening yet",
			log:  "time=2026-12-02T03:50:59.728Z level=WARN msg=config warning=\"key \\\"tasks.max\\\" (line 17): not honoured\"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := apiURL([]byte(tt.log)); got != tt.want {
				t.Errorf("apiURL = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCheckShares(t *testing.T) {
	tests := []struct {
		name    string
		shares  []nodeShare
		wantErr string
	}{
		{name: "one node owns all", shares: []nodeShare{{Generation: 2, Partitions: []int32{0, 1, 2, 3}}}},
		{name: "three nodes", shares: []nodeShare{{Generation: 3, Partitions: []int32{2}}, {Generation: 3, Partitions: []int32{0, 3}}, {Generation: 3, Partitions: []int32{1}}}},
		{name: "a node lags a generation", shares: []nodeShare{{Generation: 3, Partitions: []int32{0, 1}}, {Generation: 2, Partitions: []int32{2, 3}}},
			wantErr: "node 2 is in generation 2, node 1 in 3"},
		{name: "two owners", shares: []nodeShare{{Generation: 3, Partitions: []int32{0, 1, 2}}, {Generation: 3, Partitions: []int32{2, 3}}},
			wantErr: "partition 2 is owned by nodes 1 and 2"},
		{name: "a partition without owner", shares: []nodeShare{{Generation: 4, Partitions: []int32{0}}, {Generation: 4, Partitions: []int32{3}}},
			wantErr: "partitions [1 2] have no owner in generation 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkShares(tt.shares, 4)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("checkShares: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("checkShares error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// sampleNodes is a nodes mode of 2 runs each of 1, 2 and 3 nodes, one of which failed.
func sampleNodes() *nodesResult {
	mib := int64(1 << 20)
	member := func(node string, parts []int32, control bool, records int64, cpu float64, rss int64) nodeMember {
		return nodeMember{Node: node, Partitions: parts, Units: len(parts), Control: control, Records: records, SteadyCPUSeconds: cpu,
			Process: procStats{UserSeconds: cpu, PeakRSSBytes: rss * mib}}
	}
	all := []int32{0, 1, 2, 3, 4, 5, 6, 7}
	flows := 1 // the warm-up was A1->B1
	run := func(n, r int, steady, wall, first float64, members ...nodeMember) nodesRun {
		flows++
		nr := nodesRun{Nodes: n, Run: r, Flow: fmt.Sprintf("A%d->B%d", flows, flows), Partitions: 8, Records: 1_000_000,
			PayloadBytes: 1_032_000_000, ShareSeconds: 0.5 * float64(n), FirstRecordSeconds: first, WallSeconds: wall,
			SteadyMBPerSec: steady, MBPerSec: 1032 / wall, BrokerCPU: map[string]float64{"a": 1, "b": 3}, TargetRecords: 1_000_000,
			Members: members, LoadAvg: "1.00 1.00 1.00"}
		for _, m := range members {
			nr.SteadyCPUSeconds += m.SteadyCPUSeconds
		}
		nr.SteadyCPUPerGB = nr.SteadyCPUSeconds / 1.032
		nr.CoresBusy = (nr.SteadyCPUSeconds + 4) / (wall - first)
		return nr
	}
	nr := &nodesResult{
		Workload: workload{Cell: 1, RecordSize: 1024, Partitions: 8, Topics: 1, Codec: "none", Target: targetSame, TargetCodec: "none", Records: 1_000_000},
		Runs: []nodesRun{
			run(1, 1, 200, 5.4, 0.24, member("n1", all, true, 1_000_000, 1.2, 80)),
			run(2, 1, 180, 6.0, 0.26, member("n1", all[:4], true, 500_000, 0.8, 60), member("n2", all[4:], false, 500_000, 0.7, 58)),
			run(3, 1, 160, 6.7, 0.25, member("n1", []int32{0, 3, 6}, false, 375_000, 0.6, 50), member("n2", []int32{1, 4, 7}, true, 375_000, 0.6, 52),
				member("n3", []int32{2, 5}, false, 250_000, 0.4, 47)),
			run(1, 2, 220, 5.0, 0.23, member("n1", all, true, 1_000_000, 1.1, 82)),
			run(2, 2, 170, 6.3, 0.25, member("n1", all[:4], false, 500_000, 0.8, 61), member("n2", all[4:], true, 500_000, 0.8, 59)),
			{Nodes: 3, Run: 2, Flow: "A7->B7", Error: "the nodes did not share the flow: still not done after 2m0s: partitions [2] have no owner in generation 3"},
		},
	}
	nr.Runs[4].ShareChanged = true
	nr.summarize()
	return nr
}

func TestNodesSummary(t *testing.T) {
	nr := sampleNodes()
	if len(nr.Summary) != 3 {
		t.Fatalf("%d summaries, want 3 (1, 2, 3 nodes)", len(nr.Summary))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	one, two, three := nr.Summary[0], nr.Summary[1], nr.Summary[2]
	if one.Nodes != 1 || one.Runs != 2 || one.SteadyMBps.Median != 210 || one.Scaling != 1 {
		t.Errorf("1 node: %+v", one)
	}
	if two.Runs != 2 || two.SteadyMBps.Median != 175 || !near(two.Scaling, 175.0/210) || two.ShareMoved != 1 {
		t.Errorf("2 nodes: %+v", two)
	}
	if two.PartitionsPerNode != (stat{Median: 4, Min: 4, Max: 4}) || two.LargestShare.Median != 0.5 {
		t.Errorf("2 nodes: partitions per node %+v, largest share %+v", two.PartitionsPerNode, two.LargestShare)
	}
	if three.Runs != 1 || three.Failed != 1 || three.PartitionsPerNode != (stat{Median: 3, Min: 2, Max: 3}) || three.LargestShare.Median != 0.375 {
		t.Errorf("3 nodes: %+v", three)
	}
	// Peak RSS takes every node of every run: 60, 58, 61, 59.
	if two.PeakRSSMiB != (stat{Median: 59.5, Min: 58, Max: 61}) {
		t.Errorf("2 nodes: peak RSS per node %+v", two.PeakRSSMiB)
	}
	// Cores busy split: the nodes' steady CPU over the steady window.
	if want := 1.6 / (6.3 - 0.25); !near(two.CoresNodes.Max, want) {
		t.Errorf("2 nodes: cores of the nodes %+v, want max %g", two.CoresNodes, want)
	}
}
