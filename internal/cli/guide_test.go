package cli

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"strait/internal/config"
	"strait/internal/kafkatest/certs"
)

// statAnything says every file exists, for tests whose store paths are
// not real.
func statAnything(string) (fs.FileInfo, error) { return os.Stat("testdata/not-mm2.yaml") }

// guideFiles writes the MM2 guide's three files into a directory: the main
// file with its own SOURCE and TARGET blocks, and one file per cluster with
// SSL keys. Only the paths, passwords and hosts are the test's; the stores
// are real, so the clients can be planned.
func guideFiles(t *testing.T) (dir string) {
	t.Helper()
	dir = t.TempDir()
	ca, err := certs.NewAuthority("guide CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue(certs.LeafOptions{CommonName: "mm2"})
	if err != nil {
		t.Fatal(err)
	}
	trust, err := certs.JKSTruststore("changeit", ca)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := leaf.JKSKeystore("changeit", "changeit")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"source.truststore.jks": trust, "source.keystore.jks": keys,
		"target.truststore.jks": trust, "target.keystore.jks": keys,
		"mirror-maker.properties": []byte(`clusters=SOURCE, TARGET
SOURCE.bootstrap.servers=source-kafka-broker1:9093,source-kafka-broker2:9093
TARGET.bootstrap.servers=target-kafka-broker1:9093,target-kafka-broker2:9093
replication.factor=3
topics=.*
emit.heartbeats.enabled=true
sync.group.offsets.enabled=true
tasks.max=4
`),
	}
	for _, side := range []string{"source", "target"} {
		files[side+"-cluster.properties"] = []byte("bootstrap.servers=" + side + "-kafka-1:9093," + side + "-kafka-2:9093\n" +
			"security.protocol=SSL\n" +
			"ssl.truststore.location=" + filepath.Join(dir, side+".truststore.jks") + "\n" +
			"ssl.truststore.password=changeit\n" +
			"ssl.keystore.location=" + filepath.Join(dir, side+".keystore.jks") + "\n" +
			"ssl.keystore.password=changeit\n" +
			"ssl.key.password=changeit\n")
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadFlags parses args as `strait run` does and loads the configuration.
func loadFlags(t *testing.T, args ...string) (*configFlags, *config.Config, error) {
	t.Helper()
	var cf configFlags
	cmd := &cobra.Command{Use: "run"}
	cf.register(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	if err := cf.resolve(cmd, cmd.Flags().Args()); err != nil {
		return &cf, nil, err
	}
	cfg, _, err := cf.load()
	return &cf, cfg, err
}

// TestGuideCommandLine reads the MM2 guide's command line: each per-cluster
// file's keys become that alias's keys (SSL stores included), --whitelist
// becomes topics, the pair the files name is enabled, and where the main
// file sets the same key the command line wins, with a warning naming both.
func TestGuideCommandLine(t *testing.T) {
	dir := guideFiles(t)
	t.Chdir(dir)
	cf, cfg, err := loadFlags(t, "--clusters", "SOURCE,TARGET",
		"--source-cluster-config", "source-cluster.properties",
		"--target-cluster-config", "target-cluster.properties",
		"--whitelist", `orders\..*`, "--config", "mirror-maker.properties")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range cfg.Flows {
		names = append(names, f.Name())
	}
	// --clusters SOURCE,TARGET in MM2's meaning keeps the flows whose target
	// is one of them: both; the data flow is the one the files name.
	if !slices.Equal(names, []string{"SOURCE->TARGET", "TARGET->SOURCE"}) {
		t.Fatalf("flows %v", names)
	}
	f := cfg.Flows[0]
	if !f.Enabled || cfg.Flows[1].Enabled {
		t.Errorf("enabled: SOURCE->TARGET %v, TARGET->SOURCE %v; want true, false", f.Enabled, cfg.Flows[1].Enabled)
	}
	if !slices.Equal(f.Topics, []string{`orders\..*`}) || f.Origins["topics"].File != "--whitelist" {
		t.Errorf("topics %q from %+v, want orders\\..* from --whitelist", f.Topics, f.Origins["topics"])
	}
	for _, c := range []struct {
		client config.Client
		key    string
		want   string
		file   string
		line   int
	}{
		{f.SourceConsumer, "bootstrap.servers", "source-kafka-1:9093,source-kafka-2:9093", "source-cluster.properties", 1},
		{f.SourceConsumer, "security.protocol", "SSL", "source-cluster.properties", 2},
		{f.SourceConsumer, "ssl.truststore.location", filepath.Join(dir, "source.truststore.jks"), "source-cluster.properties", 3},
		{f.SourceAdmin, "ssl.keystore.location", filepath.Join(dir, "source.keystore.jks"), "source-cluster.properties", 5},
		{f.TargetProducer, "ssl.truststore.location", filepath.Join(dir, "target.truststore.jks"), "target-cluster.properties", 3},
		{f.TargetProducer, "ssl.keystore.location", filepath.Join(dir, "target.keystore.jks"), "target-cluster.properties", 5},
		{f.TargetConsumer, "ssl.key.password", "changeit", "target-cluster.properties", 7},
	} {
		p, ok := c.client.Prop(c.key)
		if !ok {
			t.Errorf("%s: %s not set", c.client.Cluster, c.key)
			continue
		}
		if got := p.Value.Reveal(); got != c.want || p.Origin.File != c.file || p.Origin.Line != c.line {
			t.Errorf("%s: %s = %q from %+v, want %q from %s line %d", c.client.Cluster, c.key, got, p.Origin, c.want, c.file, c.line)
		}
	}
	warnings := ""
	for _, w := range cfg.Warnings {
		warnings += w.String() + "\n"
	}
	for _, want := range []string{
		`key "SOURCE.bootstrap.servers" (source-cluster.properties, line 1): replaces the value on line 2 of mirror-maker.properties`,
		`key "TARGET.bootstrap.servers" (target-cluster.properties, line 1): replaces the value on line 3 of mirror-maker.properties`,
		`key "topics" (--whitelist, line 1): replaces the value on line 5 of mirror-maker.properties`,
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("no warning %q in:\n%s", want, warnings)
		}
	}

	// The notice: what to add to the file, no secret shown.
	var log bytes.Buffer
	cf.logNotice(slog.New(slog.NewTextHandler(&log, nil)))
	for _, want := range []string{
		`SOURCE.ssl.truststore.location=` + filepath.Join(dir, "source.truststore.jks"),
		`SOURCE.ssl.truststore.password = [redacted]`,
		`TARGET.ssl.key.password = [redacted]`,
		`SOURCE->TARGET.enabled = true`,
		`topics = orders\\\\..*`, // the properties text, as slog quotes it
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("notice lacks %q:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), "changeit") {
		t.Errorf("notice shows a password:\n%s", log.String())
	}
}

// TestGuideFlagsKeepClustersMeaning: with more clusters in the file,
// --clusters still selects by target, as MM2's dedicated mode does.
func TestGuideFlagsKeepClustersMeaning(t *testing.T) {
	dir := guideFiles(t)
	t.Chdir(dir)
	main := "clusters = SOURCE, TARGET, BACKUP\n" +
		"SOURCE.bootstrap.servers = s:9092\nTARGET.bootstrap.servers = t:9092\nBACKUP.bootstrap.servers = b:9092\n" +
		"SOURCE->BACKUP.enabled = true\n"
	if err := os.WriteFile("three.properties", []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	_, cfg, err := loadFlags(t, "three.properties", "--clusters", "SOURCE,TARGET", "--target-cluster-config", "target-cluster.properties")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range cfg.Flows {
		if f.Enabled {
			names = append(names, f.Name())
		}
	}
	if !slices.Equal(names, []string{"SOURCE->TARGET"}) {
		t.Errorf("enabled flows %v: want only SOURCE->TARGET (SOURCE->BACKUP targets a cluster --clusters does not name)", names)
	}
}

func TestGuideFlagsNeedTheirClusters(t *testing.T) {
	dir := guideFiles(t)
	t.Chdir(dir)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "mirror-maker.properties", "--source-cluster-config", "source-cluster.properties"},
			"--source-cluster-config and --target-cluster-config need --clusters SOURCE,TARGET: the two aliases, source first (got 0: [])"},
		{[]string{"-c", "mirror-maker.properties", "--clusters", "SOURCE,TARGET,X", "--target-cluster-config", "target-cluster.properties"},
			`(got 3: ["SOURCE" "TARGET" "X"])`},
		{[]string{"-c", "mirror-maker.properties", "--clusters", "SOURCE,TARGET", "--source-cluster-config", "nowhere.properties"},
			"--source-cluster-config nowhere.properties: open nowhere.properties: no such file or directory"},
	} {
		_, _, err := loadFlags(t, tt.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err %v, want a usage error with %q", tt.args, err, tt.want)
		}
	}
}

// TestUsageErrorsPointToHelp: a bad command line prints the error and one
// line naming the command's --help, for every command, never the help
// itself; a configuration file with problems prints its problems only.
func TestUsageErrorsPointToHelp(t *testing.T) {
	bad := writeFile(t, "clusters = A\n")
	for _, tt := range []struct {
		args []string
		cmd  string
	}{
		{[]string{"run", "--bogus"}, "strait run"},
		{[]string{"run", "--source-cluster-config"}, "strait run"},
		{[]string{"run"}, "strait run"},
		{[]string{"check", "--timeout", "soon", "f"}, "strait check"},
		{[]string{"offsets", "translate", "-c", "f"}, "strait offsets translate"},
		{[]string{"demo", "--duration"}, "strait demo"},
		{[]string{"status", "--bogus"}, "strait status"},
		{[]string{"import", "strimzi", "a.yaml", "b.yaml"}, "strait import strimzi"},
		{[]string{"version", "extra"}, "strait version"},
		{[]string{"bogus"}, "strait"},
	} {
		code, out, errOut := run(t, tt.args...)
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != ExitUsage || len(lines) != 2 || !strings.HasPrefix(lines[0], "strait: ") ||
			lines[1] != "Run '"+tt.cmd+" --help' for usage." || out != "" {
			t.Errorf("strait %v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and two lines, the error and Run '%s --help' for usage.", tt.args, code, out, errOut, tt.cmd)
		}
		if strings.Contains(errOut, "Usage:") || strings.Contains(errOut, "Flags:") {
			t.Errorf("strait %v printed the help:\n%s", tt.args, errOut)
		}
	}
	code, _, errOut := run(t, "check", "--offline", bad)
	if code != ExitUsage || !strings.Contains(errOut, "has problems") || strings.Contains(errOut, "--help") {
		t.Errorf("a file with problems: exit %d, stderr:\n%s\nwant exit 2, its problems and no pointer to --help", code, errOut)
	}
}
