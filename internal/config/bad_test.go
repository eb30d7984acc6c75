package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadConfigs parses every testdata/bad/*.properties file and checks that
// it fails with exactly the error text of the .err file next to it.
func TestBadConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.properties")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 25 {
		t.Fatalf("only %d bad configs; keep at least 25", len(files))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".properties"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(name, data, testOptions())
			if err == nil {
				t.Fatal("Parse succeeded; want an error")
			}
			asErrors(t, err)
			golden(t, strings.TrimSuffix(path, ".properties")+".err", err.Error()+"\n")
		})
	}
}

// TestClustersOption covers the --clusters selection errors, which depend on
// an option rather than the file.
func TestClustersOption(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		clusters []string
		want     []string // flows kept
		wantErr  string
	}{
		{
			name:     "keeps flows by target",
			src:      base + "B->A.enabled = true\n",
			clusters: []string{"B"},
			want:     []string{"A->B"},
		},
		{
			name:     "all targets",
			src:      base + "B->A.enabled = true\n",
			clusters: []string{"A", "B"},
			want:     []string{"A->B", "B->A"},
		},
		{
			name:     "unknown alias",
			src:      base,
			clusters: []string{"C", "B"},
			wantErr:  `mm2.properties: --clusters names "C", which is not in clusters (A, B)`,
		},
		{
			name:     "no flow targets the selection",
			src:      base + "emit.heartbeats.enabled = false\n",
			clusters: []string{"A"},
			wantErr:  "mm2.properties: No source->target replication flows. --clusters A keeps only the flows whose target it names, and none does (flows: A->B)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse(t, tt.src, tt.clusters...)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v\nwant %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(flowNames(c), " "); got != strings.Join(tt.want, " ") {
				t.Errorf("flows = %s, want %s", got, strings.Join(tt.want, " "))
			}
		})
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		wantErr string
	}{
		{name: "example", path: "testdata/examples/active-active.properties"},
		{name: "missing file", path: "testdata/nope.properties", wantErr: `testdata/nope.properties: file "testdata/nope.properties" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(tt.path, LoadOptions{Env: testOptions().Env})
			if got := errText(err); got != tt.wantErr {
				t.Fatalf("error = %q, want %q", got, tt.wantErr)
			}
			if tt.wantErr != "" {
				asErrors(t, err)
				return
			}
			if c.Path != tt.path || len(c.Flows) != 2 {
				t.Errorf("path %q flows %v", c.Path, flowNames(c))
			}
		})
	}
}
