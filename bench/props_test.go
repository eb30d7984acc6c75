package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"strait/internal/config"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got, what a test rendered, with testdata/name, which
// -update rewrites.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./bench -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from what the test rendered:\n%s", path, got)
	}
}

func TestProperties(t *testing.T) {
	f := flowSpec{
		source: "A1", target: "B1", sourceBoot: "127.0.0.1:1111", destBoot: "127.0.0.1:2222",
		topic: "bench-backlog", tuning: defaultParams().MM2, targetCodec: "lz4",
	}
	f.tuning.TasksMax = 8
	flush := f
	flush.tuning.OffsetFlushMs = 1000
	eos := f
	eos.mm2RestPort = 18083
	shared := f
	shared.cluster = true
	tests := []struct {
		name string
		flow flowSpec
		tool string
		want string // golden file
	}{
		{name: "mm2", flow: f, tool: toolMM2, want: "mm2.properties"},
		{name: "strait", flow: f, tool: toolStrait, want: "strait.properties"},
		{name: "offset flush", flow: flush, tool: toolMM2, want: "mm2-flush.properties"},
		{name: "strait exactly-once", flow: eos, tool: toolStraitEOS, want: "strait-eos.properties"},
		{name: "mm2 exactly-once", flow: eos, tool: toolMM2EOS, want: "mm2-eos.properties"},
		{name: "strait nodes", flow: shared, tool: toolStrait, want: "strait-nodes.properties"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.want, tt.flow.properties(tt.tool))
		})
	}
	if got := f.remoteTopic(); got != "A1.bench-backlog" {
		t.Errorf("remoteTopic() = %q, want A1.bench-backlog", got)
	}
}

// TestStraitReadsProperties checks that Strait's own loader accepts the files the harness
// writes for it, so a benchmark run cannot fail on its configuration.
func TestStraitReadsProperties(t *testing.T) {
	tests := []struct {
		name string
		file string
		eos  bool
	}{
		{name: "strait", file: "strait.properties"},
		{name: "mm2 file with the max.in.flight key", file: "mm2.properties"},
		{name: "exactly-once", file: "strait-eos.properties", eos: true},
		{name: "several nodes", file: "strait-nodes.properties"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Load(filepath.Join("testdata", tt.file), config.LoadOptions{Clusters: []string{"B1"}})
			if err != nil {
				t.Fatalf("config.Load(%s): %v", tt.file, err)
			}
			flows := cfg.EnabledFlows()
			if len(flows) != 1 {
				t.Fatalf("config.Load(%s): %d flows, want 1", tt.file, len(flows))
			}
			if got := flows[0].ExactlyOnce; got != tt.eos {
				t.Errorf("config.Load(%s): exactly-once %v, want %v", tt.file, got, tt.eos)
			}
			for _, w := range cfg.Warnings {
				t.Logf("warning: %s", w.String())
			}
		})
	}
}
