package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDescribe compares Describe with golden files under testdata/describe
// (rewrite them with go test -update).
func TestDescribe(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		src      string // used when path is empty
		clusters []string
	}{
		{name: "active-active", path: "testdata/examples/active-active.properties"},
		{name: "active-passive", path: "testdata/examples/active-passive.properties"},
		{name: "active-passive-north", path: "testdata/examples/active-passive.properties", clusters: []string{"eu-west1"}},
		{name: "seed-guide", path: "testdata/examples/seed-guide.properties"},
		{name: "secrets", src: secretsConfig},
		{name: "exactly-once", src: exactlyOnceConfig},
		{name: "exactly-once-off", src: base + "emit.heartbeats.enabled = false\nB.exactly.once.source.support = preparing\nstrait.exactly.once = false\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.src)
			name := "mm2.properties"
			if tt.path != "" {
				var err error
				if data, err = os.ReadFile(tt.path); err != nil {
					t.Fatal(err)
				}
				name = filepath.Base(tt.path)
			}
			opts := testOptions()
			opts.Clusters = tt.clusters
			c, _ := Parse(name, data, opts)
			var b bytes.Buffer
			c.Describe(&b)
			golden(t, filepath.Join("testdata/describe", tt.name+".golden"), b.String())
			if strings.Contains(b.String(), "\t") {
				t.Error("output contains a tab")
			}
		})
	}
}
