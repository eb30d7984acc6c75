package main

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseParams(t *testing.T) {
	tests := []paramsCase{
		{
			name: "defaults",
			args: nil,
			check: func(p params) bool {
				return p.Records == 2_000_000 && p.TargetCodec == "none" && p.MM2.TasksMax == 0 && p.Runs == 3 && p.Matrix == matrixNone && len(p.cells()) == 1
			},
		},
		{
			name: "codec sets the target codec",
			args: []string{"-codec", "lz4", "-partitions", "3", "-keys", "3"},
			check: func(p params) bool {
				return p.Codec == "lz4" && p.TargetCodec == "lz4" && p.cells()[0].Target == targetSame
			},
		},
		{
			name: "target codec unset",
			args: []string{"-codec", "lz4", "-target-codec", "unset"},
			check: func(p params) bool {
				return p.TargetCodec == "" && p.cells()[0].Target == targetUnset
			},
		},
		{
			name: "reduced matrix with shorter latency",
			args: []string{"-matrix", "-runs", "2"},
			check: func(p params) bool {
				return p.Matrix == matrixReduced && p.Runs == 2 && len(p.cells()) == len(reducedMatrix(1)) && p.LatencyDuration.Duration == 10*time.Second
			},
		},
		{
			name:  "full matrix, space separated",
			args:  []string{"-matrix", "full", "-runs", "1"},
			check: func(p params) bool { return p.Matrix == matrixFull && p.Runs == 1 && len(p.cells()) == 137 },
		},
		{
			name:  "full matrix with =",
			args:  []string{"-matrix=full"},
			check: func(p params) bool { return p.Matrix == matrixFull },
		},
		{
			name: "matrix cells and scale",
			args: []string{"-matrix", "-matrix-cells", "2,7", "-matrix-scale", "0.5", "-latency-duration", "30s"},
			check: func(p params) bool {
				c := p.cells()
				return len(c) == 2 && c[0].RecordSize == 100 && c[0].Cell == 2 && c[1].Topics == 2000 && c[1].Cell == 7 && p.LatencyDuration.Duration == 30*time.Second
			},
		},
		{
			name: "nodes alone selects the nodes mode with its own backlog",
			args: []string{"-nodes", "1,2,3"},
			check: func(p params) bool {
				return p.Mode == modeNodes && slices.Equal(p.Nodes, []int{1, 2, 3}) && p.Records == nodesRecords && p.Partitions == 12
			},
		},
		{
			name: "nodes mode with records set",
			args: []string{"-mode", "nodes", "-nodes", "2", "-records", "5000", "-runs", "1", "-partitions", "8"},
			check: func(p params) bool {
				return p.Mode == modeNodes && slices.Equal(p.Nodes, []int{2}) && p.Records == 5000 && p.Partitions == 8
			},
		},
		{
			name:  "nodes mode with the default counts",
			args:  []string{"-mode", "nodes"},
			check: func(p params) bool { return slices.Equal(p.Nodes, []int{1, 2, 3}) && p.Records == nodesRecords },
		},
		{
			name:  "nodes only matter in the nodes mode",
			args:  []string{"-mode", "compare", "-nodes", "4"},
			check: func(p params) bool { return p.Mode == modeCompare && p.Records == 2_000_000 && p.Partitions == 8 },
		},
		{name: "bad node count", args: []string{"-nodes", "1,0,9"}, wantErr: "-nodes: 0 is not between 1 and 8\n-nodes: 9 is not between 1 and 8"},
		{name: "node count not a number", args: []string{"-nodes", "two"}, wantErr: `-nodes "two": "two" is not a whole number`},
		{name: "nodes mode and matrix", args: []string{"-nodes", "2", "-matrix"}, wantErr: "-matrix runs in -mode compare only; drop -mode nodes"},
		{
			name: "the matrix's exactly-once row runs Strait by default",
			args: []string{"-matrix", "-matrix-cells", "1,2"},
			check: func(p params) bool {
				c := p.cells()
				return slices.Equal(c[0].EOS, []string{toolStraitEOS}) && len(c[1].EOS) == 0 &&
					slices.Equal(c[0].tools(p.Tools), []string{toolStrait, toolStraitEOS, toolMM2})
			},
		},
		{
			name: "the exactly-once row with MM2's too",
			args: []string{"-matrix", "-matrix-eos", "strait,mm2"},
			check: func(p params) bool {
				return slices.Equal(p.cells()[0].tools(p.Tools), []string{toolStrait, toolStraitEOS, toolMM2, toolMM2EOS})
			},
		},
		{
			name:  "no exactly-once row",
			args:  []string{"-matrix", "-matrix-eos", "none"},
			check: func(p params) bool { return len(p.MatrixEOS) == 0 && len(p.cells()[0].EOS) == 0 },
		},
		{
			name: "exactly-once variants as tools of one cell",
			args: []string{"-tools", "strait,strait-eos", "-phases", "copy"},
			check: func(p params) bool {
				return slices.Equal(p.cells()[0].tools(p.Tools), []string{toolStrait, toolStraitEOS})
			},
		},
		{name: "bad exactly-once replicator", args: []string{"-matrix", "-matrix-eos", "strait-eos"}, wantErr: `-matrix-eos: unknown replicator "strait-eos": use strait, strait,mm2 or none`},
		{name: "bad runs", args: []string{"-runs", "0"}, wantErr: "-runs 0: use 1 to 50"},
		{name: "bad read-ahead", args: []string{"-read-ahead-kb", "-1"}, wantErr: "-read-ahead-kb -1: use 0 (leave the disk as it is) or a size in KiB"},
		{name: "bad matrix value", args: []string{"-matrix=huge"}, wantErr: "use -matrix (reduced, at most 15 minutes), -matrix full or -matrix distance"},
		{
			name: "distance matrix",
			args: []string{"-matrix", "distance"},
			check: func(p params) bool {
				c := p.cells()
				return p.Matrix == matrixDistance && len(c) == 7 && slices.Equal(p.Tools, []string{toolStraitDefault, toolStrait, toolMM2, toolMM2Default}) &&
					slices.Equal(p.Phases, []string{phaseCopy, phaseLimits}) && p.CopyTimeout.Duration == 5*time.Minute &&
					c[0].Link.RTT.Duration == 20*time.Millisecond && c[0].Link.MBps == 0 && c[1].Link.MBps == 100 &&
					c[6].Partitions == 64 && c[6].Link.RTT.Duration == 150*time.Millisecond && c[6].Link.MBps == 0 &&
					len(c[0].EOS) == 0 && c[0].Limits && c[0].Records == recordsFor(500, 1024) && p.hasLinks()
			},
		},
		{
			name: "distance trial: one cell, scaled, own tools",
			args: []string{"-matrix=distance", "-matrix-cells", "5", "-matrix-scale", "0.05", "-runs", "1", "-tools", "strait,mm2", "-link-mbps", "50"},
			check: func(p params) bool {
				c := p.cells()
				return len(c) == 1 && c[0].Cell == 5 && c[0].Link.RTT.Duration == 150*time.Millisecond && c[0].Link.MBps == 0 &&
					c[0].Records == recordsFor(25, 1024) && slices.Equal(p.Tools, []string{toolStrait, toolMM2}) && p.LinkMBps == 50
			},
		},
		{
			name: "distance axes",
			args: []string{"-matrix", "distance", "-link-rtt", "40ms, 1s", "-link-mbps", "0", "-phases", "copy"},
			check: func(p params) bool {
				c := p.cells()
				return len(c) == 3 && c[0].Link.RTT.Duration == 40*time.Millisecond && c[1].Link.RTT.Duration == time.Second &&
					c[2].Partitions == 64 && c[2].Link.RTT.Duration == time.Second && !p.has(phaseLimits)
			},
		},
		{
			name:  "no link in the other matrices",
			args:  []string{"-matrix"},
			check: func(p params) bool { return !p.hasLinks() && p.cells()[0].Link == nil },
		},
		{name: "link flags without the distance matrix", args: []string{"-link-rtt", "20ms"}, wantErr: "-link-rtt and -link-mbps shape the distance matrix: add -matrix distance"},
		{name: "link cap without the distance matrix", args: []string{"-matrix", "-link-mbps", "10"}, wantErr: "add -matrix distance"},
		{name: "odd round trip", args: []string{"-matrix", "distance", "-link-rtt", "25ms,0s"}, wantErr: "-link-rtt 25ms: use whole, even milliseconds from 2ms to 2s (half of it is added on each direction)\n-link-rtt 0s:"},
		{name: "round trip not a duration", args: []string{"-matrix", "distance", "-link-rtt", "80"}, wantErr: `-link-rtt "80": "80" is not a duration such as 80ms`},
		{name: "negative cap", args: []string{"-matrix", "distance", "-link-mbps", "-1"}, wantErr: "-link-mbps -1: use 0 (uncapped cells only) to 10000 MB/s"},
		{name: "distance cell out of range", args: []string{"-matrix", "distance", "-matrix-cells", "8"}, wantErr: "-matrix-cells: 8 is not a cell of the distance matrix; use 1 to 7"},
		{
			name:  "mm2 at its defaults as a tool",
			args:  []string{"-tools", "strait,mm2-default", "-phases", "copy"},
			check: func(p params) bool { return slices.Equal(p.Tools, []string{toolStrait, toolMM2Default}) },
		},
		{name: "cells without matrix", args: []string{"-matrix-cells", "1"}, wantErr: "-matrix-cells needs -matrix"},
		{name: "cell out of range", args: []string{"-matrix", "-matrix-cells", "9"}, wantErr: "-matrix-cells: 9 is not a cell of the reduced matrix; use 1 to 7"},
		{name: "matrix in memory mode", args: []string{"-matrix", "-mode", "memory"}, wantErr: "-matrix runs in -mode compare only"},
		{
			name: "explicit target codec and tools",
			args: []string{"-codec", "zstd", "-target-codec", "none", "-tools", "mm2", "-phases", "copy"},
			check: func(p params) bool {
				return p.TargetCodec == "none" && slices.Equal(p.Tools, []string{"mm2"}) && p.has(phaseCopy) && !p.has(phaseLatency)
			},
		},
		{
			name:  "memory partitions",
			args:  []string{"-mode", "memory", "-memory-partitions", "10, 20"},
			check: func(p params) bool { return slices.Equal(p.MemPartitions, []int{10, 20}) },
		},
		{
			name:  "durations",
			args:  []string{"-latency-duration", "90s"},
			check: func(p params) bool { return p.LatencyDuration.Duration == 90*time.Second },
		},
		{name: "bad codec", args: []string{"-codec", "brotli"}, wantErr: `-codec "brotli": use none, gzip, snappy, lz4 or zstd`},
		{name: "bad tool", args: []string{"-tools", "strait,ureplicator"}, wantErr: `unknown tool "ureplicator"`},
		{name: "bad phase", args: []string{"-phases", "soak"}, wantErr: `unknown phase "soak"`},
		{name: "fewer keys than partitions", args: []string{"-keys", "4"}, wantErr: "-keys 4 is below -partitions 8"},
		{name: "bad heap", args: []string{"-mm2-heap", "lots"}, wantErr: `-mm2-heap "lots"`},
		{name: "bad memory partitions", args: []string{"-memory-partitions", "10,x"}, wantErr: `"x" is not a whole number`},
		{name: "stray argument", args: []string{"now"}, wantErr: "unexpected arguments"},
		{name: "every problem at once", args: []string{"-records", "0", "-mode", "soak"}, wantErr: "-mode \"soak\": use compare, memory, nodes, scale or all\n-records 0: must be at least 1"},
	}
	runParamsCases(t, tests)
}

// paramsCase is one parseParams case: the flags, and the error they
// give (a substring) or a check of the params they make.
type paramsCase struct {
	name    string
	args    []string
	check   func(params) bool
	wantErr string // substring; "" for success
}

func runParamsCases(t *testing.T, tests []paramsCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parseParams(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseParams(%q) error = %v, want it to contain %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseParams(%q): %v", tt.args, err)
			}
			if !tt.check(p) {
				t.Errorf("parseParams(%q) = %+v: check failed", tt.args, p)
			}
		})
	}
}

func TestParseParamsHelp(t *testing.T) {
	if _, err := parseParams([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("parseParams(-h) error = %v, want flag.ErrHelp", err)
	}
}
