package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strait/internal/config"
)

// TestImportStrimzi runs `strait import strimzi` as a user does: the
// properties on stdout, one line per finding on stderr, and the exit code
// saying whether everything was mapped.
func TestImportStrimzi(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout bool     // properties printed
		wantErr    []string // in stderr
		notErr     []string // never in stderr
	}{
		{
			name:       "complete",
			args:       []string{"import", "strimzi", "testdata/strimzi-complete.yaml"},
			wantCode:   ExitOK,
			wantStdout: true,
			wantErr:    []string{"strimzi-complete.yaml:12: note: spec.replicas:", `note: mount Secret "eu-north1-cluster-ca-cert" at /etc/strait/strimzi-secrets/eu-north1-cluster-ca-cert`},
			notErr:     []string{"unmapped", "strait:"},
		},
		{
			name:       "unmapped fields still print the properties and exit 1",
			args:       []string{"import", "strimzi", "--secrets-dir", "/mnt/s", "testdata/strimzi-unmapped.yaml"},
			wantCode:   ExitFailure,
			wantStdout: true,
			wantErr: []string{
				"strimzi-unmapped.yaml:8: note: spec.replicas: run 3 Strait processes with these properties",
				"strimzi-unmapped.yaml:9: unmapped: spec.resources:",
				"unmapped: spec.mirrors[0].sourceConnector.state: state paused",
				`unmapped: spec.mirrors[0].topicsPatern: unknown field, not in Strimzi's KafkaMirrorMaker2 API here; not converted (did you mean "topicsPattern"?)`,
				"strait: 3 fields of testdata/strimzi-unmapped.yaml have no equivalent",
			},
			notErr: []string{"Run 'strait"},
		},
		{
			name:     "no KafkaMirrorMaker2 in the file",
			args:     []string{"import", "strimzi", "testdata/not-mm2.yaml"},
			wantCode: ExitUsage,
			wantErr:  []string{`note: document 1 (KafkaTopic "orders") skipped`, "strait: testdata/not-mm2.yaml: no KafkaMirrorMaker2 resource in the file"},
			notErr:   []string{"Run 'strait"},
		},
		{
			name:     "no file",
			args:     []string{"import", "strimzi"},
			wantCode: ExitUsage,
			wantErr:  []string{"strait: give one file: strait import strimzi FILE.yaml (got 0 arguments)\nRun 'strait import strimzi --help' for usage.\n"},
		},
		{
			name:     "missing file",
			args:     []string{"import", "strimzi", "testdata/nowhere.yaml"},
			wantCode: ExitUsage,
			wantErr:  []string{"strait: reading testdata/nowhere.yaml: open testdata/nowhere.yaml: no such file or directory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstderr:\n%s", code, tt.wantCode, errOut)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			for _, w := range tt.notErr {
				if strings.Contains(errOut, w) {
					t.Errorf("stderr has %q:\n%s", w, errOut)
				}
			}
			if !tt.wantStdout {
				if out != "" {
					t.Errorf("stdout:\n%s", out)
				}
				return
			}
			// What stdout holds is a configuration Strait loads (the
			// Secrets' files do not exist here: only parse errors count).
			opts := config.LoadOptions{
				ReadFile: func(string) ([]byte, error) { return []byte("x"), nil },
				Stat:     statAnything,
			}
			if _, err := config.Parse("stdout", []byte(out), opts); err != nil {
				t.Errorf("stdout is not a configuration Strait accepts: %v\n%s", err, out)
			}
			if strings.Contains(tt.name, "unmapped") && !strings.Contains(out, "/mnt/s") && strings.Contains(out, "strimzi-secrets") {
				t.Errorf("--secrets-dir was not used:\n%s", out)
			}
		})
	}
}

// TestImportedStrimziChecksWithoutWarnings: a KafkaMirrorMaker2 with
// replicas: 3 and tasksMax imports into a file that check accepts without a
// warning (no tasks.max, which Strait would only warn it has no tasks for),
// and the notes say how to run it on three nodes.
func TestImportedStrimziChecksWithoutWarnings(t *testing.T) {
	cr := filepath.Join(t.TempDir(), "mm2.yaml")
	if err := os.WriteFile(cr, []byte(`apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaMirrorMaker2
metadata:
  name: a-to-b
spec:
  replicas: 3
  connectCluster: b
  clusters:
    - alias: a
      bootstrapServers: a-kafka-bootstrap:9092
    - alias: b
      bootstrapServers: b-kafka-bootstrap:9092
  mirrors:
    - sourceCluster: a
      targetCluster: b
      sourceConnector:
        tasksMax: 4
        config:
          replication.factor: -1
      checkpointConnector:
        tasksMax: 2
      topicsPattern: ".*"
      groupsPattern: ".*"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, props, errOut := run(t, "import", "strimzi", cr)
	if code != ExitOK {
		t.Fatalf("import: exit %d\nstderr:\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "run 3 Strait processes with these properties") {
		t.Errorf("the notes do not say how to run three nodes:\n%s", errOut)
	}
	code, out, errOut := run(t, "check", "--offline", writeFile(t, props))
	if code != ExitOK || !strings.Contains(out, "Warnings: none") || strings.Contains(strings.ToLower(out), "warning:") {
		t.Fatalf("check of the imported file: exit %d\nproperties:\n%s\nstdout:\n%s\nstderr:\n%s", code, props, out, errOut)
	}
}
