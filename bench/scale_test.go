package main

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

func TestParseParamsScale(t *testing.T) {
	tests := []paramsCase{
		{
			name: "defaults: issue 23's 10,000 partitions and the 2,000-topic copy, Strait alone, 2 GB brokers",
			args: []string{"-mode", "scale"},
			check: func(p params) bool {
				return p.Mode == modeScale && slices.Equal(p.ScaleTopics, []int{2000, 5000}) && p.ScalePartitions == 2 && p.ScaleRecords == 20 &&
					slices.Equal(p.Tools, []string{toolStrait}) && p.BrokerHeap == scaleBrokerHeap
			},
		},
		{
			name: "own counts, MM2 too, own heap",
			args: []string{"-mode", "scale", "-scale-topics", "200", "-scale-partitions", "3", "-scale-records", "5", "-tools", "strait,mm2", "-broker-heap", "1g"},
			check: func(p params) bool {
				return slices.Equal(p.ScaleTopics, []int{200}) && p.ScalePartitions == 3 && p.ScaleRecords == 5 &&
					slices.Equal(p.Tools, []string{toolStrait, toolMM2}) && p.BrokerHeap == "1g"
			},
		},
		{
			name: "the scale flags change nothing in the other modes",
			args: []string{"-scale-topics", "10"},
			check: func(p params) bool {
				return p.Mode == modeCompare && slices.Equal(p.Tools, []string{toolStrait, toolMM2}) && p.BrokerHeap == "1g"
			},
		},
		{name: "no topic counts", args: []string{"-mode", "scale", "-scale-topics", ""}, wantErr: "-scale-topics is empty: give topic counts such as 5000 or 2000,5000"},
		{name: "topic count not a number", args: []string{"-mode", "scale", "-scale-topics", "5k"}, wantErr: `-scale-topics "5k": "5k" is not a whole number`},
		{name: "topic counts out of range", args: []string{"-mode", "scale", "-scale-topics", "0,10001"}, wantErr: "-scale-topics: 0 is not between 1 and 10000\n-scale-topics: 10001 is not between 1 and 10000"},
		{name: "no partitions", args: []string{"-mode", "scale", "-scale-partitions", "0"}, wantErr: "-scale-partitions 0: use 1 to 1000 partitions per topic"},
		{name: "no records", args: []string{"-mode", "scale", "-scale-records", "0"}, wantErr: "-scale-records 0: must be at least 1: every partition needs a record to be seen starting"},
		{name: "too many partitions", args: []string{"-mode", "scale", "-scale-topics", "5000", "-scale-partitions", "5"}, wantErr: "-scale-topics 5000 × -scale-partitions 5 is 25000 partitions: use at most 20000"},
		{name: "too large a backlog", args: []string{"-mode", "scale", "-scale-topics", "5000", "-scale-records", "500"}, wantErr: "-scale-records 500: 5000 topics × 2 partitions × 500 records of 1024 B is 5120 MB; use at most 2000 MB"},
		{name: "matrix in scale mode", args: []string{"-mode", "scale", "-matrix"}, wantErr: "-matrix runs in -mode compare only; drop -mode scale"},
	}
	runParamsCases(t, tests)
}

func TestStartedPartitions(t *testing.T) {
	tests := []struct {
		name      string
		got, want []int64
		n, of     int
	}{
		{name: "nothing on B yet: the topics do not exist", got: []int64{-1, -1, -1}, want: []int64{2, 2, 2}, n: 0, of: 3},
		{name: "created, empty", got: []int64{0, 0, 0}, want: []int64{2, 2, 2}, n: 0, of: 3},
		{name: "some started", got: []int64{1, 0, 2}, want: []int64{2, 2, 2}, n: 2, of: 3},
		{name: "every partition started, none complete", got: []int64{1, 1, 1}, want: []int64{2, 2, 2}, n: 3, of: 3},
		{name: "an empty source partition never starts and is not waited for", got: []int64{1, 0, 3}, want: []int64{2, 0, 3}, n: 2, of: 2},
		{name: "a failed poll", got: nil, want: []int64{2, 2}, n: 0, of: 2},
		{name: "a short answer counts what it holds", got: []int64{5}, want: []int64{2, 2}, n: 1, of: 2},
		{name: "no source records at all", got: []int64{0}, want: []int64{0}, n: 0, of: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n, of := startedPartitions(tt.got, tt.want); n != tt.n || of != tt.of {
				t.Errorf("startedPartitions(%v, %v) = %d of %d, want %d of %d", tt.got, tt.want, n, of, tt.n, tt.of)
			}
		})
	}
}

func TestMarkStarted(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var seen copySeen
	// Polls of 10 partitions: 0, 4, 5 (half), 8, 9 (90 %), 10 (all), then a later poll.
	for i, n := range []int{0, 4, 5, 8, 9, 10, 10} {
		all := seen.markStarted(n, 10, at(i))
		if want := n == 10; all != want {
			t.Errorf("poll %d (%d of 10): all started = %v, want %v", i, n, all, want)
		}
	}
	want := [len(startFractions)]time.Time{at(2), at(4), at(5)}
	if seen.started != want {
		t.Errorf("started = %v, want %v (half, 90 %%, all: the first poll that reached each)", seen.started, want)
	}
	// A poll that jumps past every fraction at once sets them all to its time.
	var jump copySeen
	if !jump.markStarted(3, 3, at(7)) || jump.started != [len(startFractions)]time.Time{at(7), at(7), at(7)} {
		t.Errorf("a jump to all started = %v", jump.started)
	}
	// Nothing to start: never started.
	var none copySeen
	if none.markStarted(0, 0, at(1)) || !none.started[0].IsZero() {
		t.Errorf("with no partitions to start: %v", none.started)
	}
}

func TestPollIntervals(t *testing.T) {
	tests := []struct {
		partitions    int
		before, after time.Duration
	}{
		{1, 10 * time.Millisecond, 50 * time.Millisecond},
		{2000, 10 * time.Millisecond, 50 * time.Millisecond}, // matrix cell 7: as every cell
		{2001, 20 * time.Millisecond, 100 * time.Millisecond},
		{4000, 20 * time.Millisecond, 100 * time.Millisecond},
		{10_000, 50 * time.Millisecond, 250 * time.Millisecond}, // issue 23's 5,000 topics × 2
	}
	for _, tt := range tests {
		if before, after := pollIntervals(tt.partitions); before != tt.before || after != tt.after {
			t.Errorf("pollIntervals(%d) = %s, %s; want %s, %s", tt.partitions, before, after, tt.before, tt.after)
		}
	}
}

func TestScaleChecks(t *testing.T) {
	all := func(s float64) *float64 { return &s }
	tests := []struct {
		name string
		c    copyResult
		want []bool // first record, every partition started, peak RSS
	}{
		{name: "every target met", c: copyResult{FirstRecordSeconds: 1.2, AllStartedSeconds: all(20), Process: procStats{PeakRSSBytes: 150 << 20}}, want: []bool{true, true, true}},
		{name: "every target missed", c: copyResult{FirstRecordSeconds: 5, AllStartedSeconds: all(60), Process: procStats{PeakRSSBytes: 200 << 20}}, want: []bool{false, false, false}},
		{name: "every partition started never seen", c: copyResult{FirstRecordSeconds: 1, Process: procStats{PeakRSSBytes: 10 << 20}}, want: []bool{true, false, true}},
		{name: "no RSS read", c: copyResult{FirstRecordSeconds: 1, AllStartedSeconds: all(2)}, want: []bool{true, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.Tool = toolStrait
			checks := scaleChecks(tt.c)
			if len(checks) != 3 {
				t.Fatalf("scaleChecks = %+v, want 3 checks", checks)
			}
			for i, c := range checks {
				if c.Met != tt.want[i] || c.Tool != toolStrait {
					t.Errorf("check %s = %+v, want met %v", c.Name, c, tt.want[i])
				}
			}
		})
	}
	if got := scaleChecks(copyResult{Error: "exited"}); got != nil {
		t.Errorf("scaleChecks of a failed copy = %+v, want none", got)
	}
}

func TestScaleOpenFiles(t *testing.T) {
	p := defaultParams()
	p.Mode, p.Tools = modeScale, []string{toolStrait}
	if got, want := p.scaleOpenFiles(), uint64(2*7000+scaleFilesPerBroker); got != want {
		t.Errorf("scaleOpenFiles() = %d, want %d (every partition of both sets, once per tool run)", got, want)
	}
	p.Tools = []string{toolStrait, toolMM2}
	if got, want := p.scaleOpenFiles(), uint64(2*2*7000+scaleFilesPerBroker); got != want {
		t.Errorf("scaleOpenFiles() with MM2 = %d, want %d", got, want)
	}
}

// sampleScale is a scale-mode result: two topic counts, Strait and MM2, one MM2 copy failed.
func sampleScale(t *testing.T) *results {
	t.Helper()
	res := sampleResults(t)
	res.Params.Mode, res.Params.Tools, res.Params.BrokerHeap = modeScale, []string{toolStrait, toolMM2}, scaleBrokerHeap
	res.Cells, res.Latency, res.Memory = nil, nil, nil
	res.Warmup = &warmupResult{Bytes: 307_200_000, Seconds: 4.1}
	res.Properties = "clusters = A2, B2\n\n"
	started := func(s float64) *float64 { return &s }
	copyOf := func(tool string, parts int, first, all, wall float64, rssMiB int64) copyResult {
		c := copyResult{Tool: tool, Run: 1, Flow: "A2->B2", Topics: parts / 2, Partitions: parts, Records: int64(parts) * 20, PayloadBytes: int64(parts) * 20 * 1024,
			FirstRecordSeconds: first, HalfStartedSeconds: started(all / 2), P90StartedSeconds: started(all * 0.8), AllStartedSeconds: started(all), WallSeconds: wall, TargetRecords: int64(parts) * 20,
			Process: procStats{UserSeconds: 3, SysSeconds: 1, PeakRSSBytes: rssMiB << 20}, SteadyCPUSeconds: 3,
			BrokerCPU: map[string]float64{"a": 2.5, "b": 9.25}, LoadAvg: "2.00 2.10 2.20"}
		c.derive()
		return c
	}
	small := scaleRun{Topics: 2000, PartitionsPerTopic: 2, RecordsPerPartition: 20,
		Preload: &preloadResult{Topics: 2000, produceResult: produceResult{Records: 80_000, PayloadBytes: 81_920_000, Seconds: 9.5}, DiskBytes: 84_000_000, LoadAvg: "1.50 1.60 1.70"},
		Copies:  []copyResult{copyOf(toolStrait, 4000, 0.81, 6.4, 9.1, 61), copyOf(toolMM2, 4000, 14.2, 71.5, 80.3, 1900)}}
	large := scaleRun{Topics: 5000, PartitionsPerTopic: 2, RecordsPerPartition: 20,
		Preload: &preloadResult{Topics: 5000, produceResult: produceResult{Records: 200_000, PayloadBytes: 204_800_000, Seconds: 24.5}, DiskBytes: 210_000_000, LoadAvg: "2.50 2.60 2.70"},
		Copies:  []copyResult{copyOf(toolStrait, 10000, 1.43, 17.9, 21.2, 98), {Tool: toolMM2, Run: 1, Records: 200_000, PayloadBytes: 204_800_000, LoadAvg: "3.00 3.00 3.00", Error: "mm2: copy incomplete after -copy-timeout 5m0s\nlog tail"}}}
	for _, run := range []*scaleRun{&small, &large} {
		for _, c := range run.Copies {
			run.Targets = append(run.Targets, scaleChecks(c)...)
		}
	}
	res.Scale = []scaleRun{small, large}
	res.Error = "scale run with 5000 topics: copy of mm2: copy incomplete"
	return res
}

func TestScaleMarkdown(t *testing.T) {
	golden(t, "report-scale.md", sampleScale(t).markdown())
}

func TestScaleJSON(t *testing.T) {
	b, err := json.Marshal(sampleScale(t))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Params struct {
			ScaleTopics  []int `json:"scale_topics"`
			ScaleRecords int   `json:"scale_records_per_partition"`
		} `json:"params"`
		Scale []struct {
			Topics int `json:"topics"`
			Copies []struct {
				AllStarted *float64 `json:"all_partitions_started_s"`
			} `json:"copies"`
			Targets []scaleCheck `json:"targets"`
		} `json:"scale"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Params.ScaleTopics, []int{2000, 5000}) || back.Params.ScaleRecords != 20 || len(back.Scale) != 2 {
		t.Fatalf("JSON = %s", b)
	}
	large := back.Scale[1]
	if large.Topics != 5000 || large.Copies[0].AllStarted == nil || *large.Copies[0].AllStarted != 17.9 || large.Copies[1].AllStarted != nil {
		t.Errorf("the 5000-topic run in the JSON = %+v", large)
	}
	// Strait's three checks; the failed MM2 copy has none.
	if len(large.Targets) != 3 || large.Targets[1].Name != "all_partitions_started_s" || !large.Targets[1].Met || large.Targets[1].Value != 17.9 {
		t.Errorf("the 5000-topic run's targets = %+v", large.Targets)
	}
}
