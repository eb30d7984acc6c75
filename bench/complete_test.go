package main

import (
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

// fetched is one record a read_committed reader of B received: its partition, its offset
// and whether it is a transaction marker.
type fetched struct {
	p       int
	offset  int64
	control bool
}

// txnLog lays out one partition written in transactions: each element is a transaction
// of that many records followed by its marker; a negative count is an aborted one (its
// records take offsets, a read_committed reader does not get them, its marker it does).
func txnLog(p int, txns ...int) []fetched {
	var out []fetched
	var off int64
	for _, n := range txns {
		for range max(n, -n) {
			if n > 0 {
				out = append(out, fetched{p: p, offset: off})
			}
			off++
		}
		out = append(out, fetched{p: p, offset: off, control: true})
		off++
	}
	return out
}

func TestCommittedTally(t *testing.T) {
	type round struct {
		limits  []int64   // the LSOs of a candidate
		read    []fetched // what the reader gets in this round
		reached bool      // every offset below the limits read
		counts  []int64
	}
	tests := []struct {
		name   string
		rounds []round
	}{
		{
			name: "plain log: one record per offset",
			rounds: []round{{
				limits:  []int64{3, 2},
				read:    []fetched{{0, 0, false}, {0, 1, false}, {0, 2, false}, {1, 0, false}, {1, 1, false}},
				reached: true, counts: []int64{3, 2},
			}},
		},
		{
			name: "markers take offsets: the LSO passes the record count before the last commit",
			// Partition 0 wants 5 records: transactions of 2 and 2 leave the LSO at 6
			// (4 records and 2 markers), past 5, with one record still to come.
			rounds: []round{
				{limits: []int64{6}, read: txnLog(0, 2, 2), reached: true, counts: []int64{4}},
				// The last transaction (1 record) commits: the LSO moves to 8.
				{limits: []int64{8}, read: txnLog(0, 2, 2, 1)[6:], reached: true, counts: []int64{5}},
			},
		},
		{
			name: "an aborted transaction's records are not counted, its marker is read",
			rounds: []round{{
				limits: []int64{8}, read: txnLog(0, 2, -2, 2), reached: true, counts: []int64{4},
			}},
		},
		{
			name: "records read past the limit count from the next limit on",
			rounds: []round{
				// The reader got the second transaction too (committed meanwhile):
				// it is not below the first candidate's LSO.
				{limits: []int64{3}, read: txnLog(0, 2, 3), reached: true, counts: []int64{2}},
				{limits: []int64{7}, reached: true, counts: []int64{5}},
			},
		},
		{
			name: "not reached until the marker at the limit's last offset is read",
			rounds: []round{
				{limits: []int64{3, 3}, read: append(txnLog(0, 2), txnLog(1, 2)[:2]...), reached: false, counts: []int64{2, 2}},
				{limits: []int64{3, 3}, read: txnLog(1, 2)[2:], reached: true, counts: []int64{2, 2}},
			},
		},
		{
			name:   "a partition with nothing to read is reached at once",
			rounds: []round{{limits: []int64{0, 3}, read: txnLog(1, 2), reached: true, counts: []int64{0, 2}}},
		},
		{
			name: "a lower limit later changes nothing",
			rounds: []round{
				{limits: []int64{3}, read: txnLog(0, 2), reached: true, counts: []int64{2}},
				{limits: []int64{1}, reached: true, counts: []int64{2}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tally := newCommittedTally(len(tt.rounds[0].limits))
			for i, r := range tt.rounds {
				tally.raise(r.limits)
				for _, f := range r.read {
					tally.add(f.p, f.offset, f.control)
				}
				if got := tally.reached(); got != r.reached {
					t.Errorf("round %d: reached() = %v, want %v", i+1, got, r.reached)
				}
				if got := tally.counts(); !slices.Equal(got, r.counts) {
					t.Errorf("round %d: counts() = %v, want %v", i+1, got, r.counts)
				}
			}
		})
	}
}

func TestCheckTransactional(t *testing.T) {
	tests := []struct {
		name    string
		records []int64
		ends    []int64
		wantErr string
	}{
		{name: "a marker in every partition", records: []int64{10, 10}, ends: []int64{12, 11}},
		{name: "an empty partition needs none", records: []int64{10, 0}, ends: []int64{11, 0}},
		{name: "plain writes", records: []int64{10, 10}, ends: []int64{10, 11}, wantErr: "strait-eos: 1 partitions on B hold no transaction marker"},
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkTransactional(log, toolStraitEOS, tt.records, tt.ends)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("checkTransactional: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("checkTransactional error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestTools(t *testing.T) {
	tests := []struct {
		tool        string
		straitProps string
		base        string
		eos         bool
	}{
		{tool: toolStrait, base: toolStrait},
		{tool: toolStraitEOS, base: toolStrait, eos: true},
		{tool: toolMM2, base: toolMM2},
		{tool: toolMM2EOS, base: toolMM2, eos: true},
		{tool: toolStrait, straitProps: "strait.fast.path=false; strait.exactly.once = true", base: toolStrait, eos: true},
		{tool: toolMM2, straitProps: "strait.exactly.once=true", base: toolMM2},
	}
	for _, tt := range tests {
		if got := baseTool(tt.tool); got != tt.base {
			t.Errorf("baseTool(%q) = %q, want %q", tt.tool, got, tt.base)
		}
		if got := isEOS(tt.tool, tt.straitProps); got != tt.eos {
			t.Errorf("isEOS(%q, %q) = %v, want %v", tt.tool, tt.straitProps, got, tt.eos)
		}
	}
	w := workload{EOS: []string{toolStraitEOS, toolMM2EOS}}
	for _, tt := range []struct {
		base, want []string
	}{
		{base: []string{toolStrait, toolMM2}, want: []string{toolStrait, toolStraitEOS, toolMM2, toolMM2EOS}},
		{base: []string{toolMM2}, want: []string{toolMM2, toolMM2EOS}},
		{base: []string{toolStrait, toolStraitEOS}, want: []string{toolStrait, toolStraitEOS}}, // not twice
	} {
		if got := w.tools(tt.base); !slices.Equal(got, tt.want) {
			t.Errorf("tools(%v) = %v, want %v", tt.base, got, tt.want)
		}
	}
}
