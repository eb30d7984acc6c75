package config

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// Values that must never appear in output: secrets held by the fake
// environment and file system below.
const (
	envSecret   = "env-s3cr3t-Kx91"
	fileSecret  = "file-s3cr3t-Qz27"
	dirSecret   = "dir-s3cr3t-Wm55"
	plainSecret = "plain-s3cr3t-Hb13"
)

// testEnv is the environment tests see through LoadOptions.Env.
var testEnv = map[string]string{
	"KAFKA_PASSWORD":        envSecret,
	"STRAIT_TOPICS":         "orders.*",
	"STRAIT_BAD_REGEX":      "(" + envSecret,
	"STRAIT_BAD_ISOLATION":  envSecret,
	"STRAIT_BAD_BOOTSTRAP":  envSecret,
	"STRAIT_EMPTY":          "",
	"STRAIT_TRUSTSTORE_LOC": "/etc/kafka/truststore.jks",
}

// testFS is the file system tests see through ReadFile and Stat.
var testFS = fstest.MapFS{
	"etc/strait/secrets.properties": {Data: []byte(
		"# secrets for the test configs\n" +
			"truststore.password = " + fileSecret + "\n" +
			"sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required \\\n" +
			"    username=\"strait\" password=\"" + fileSecret + "\";\n")},
	"run/secrets/keystore-password": {Data: []byte(dirSecret + "\n")},
	"etc/kafka/truststore.jks":      {Data: []byte("not really a trust store")},
	"etc/kafka/keystore.jks":        {Data: []byte("not really a key store")},
	"etc/kafka/conf.d/readme":       {Data: []byte("a directory entry")},
}

// testOptions returns LoadOptions backed by testEnv and testFS, so tests
// never read the real environment or file system.
func testOptions() LoadOptions {
	return LoadOptions{
		Env: func(k string) (string, bool) {
			v, ok := testEnv[k]
			return v, ok
		},
		ReadFile: func(p string) ([]byte, error) {
			return fs.ReadFile(testFS, fsPath(p))
		},
		Stat: func(p string) (fs.FileInfo, error) {
			return fs.Stat(testFS, fsPath(p))
		},
	}
}

func fsPath(p string) string {
	p = strings.TrimPrefix(filepath.Clean(p), "/")
	if p == "" {
		return "."
	}
	return p
}

// parse parses src with testOptions (and the given --clusters).
func parse(t *testing.T, src string, clusters ...string) (*Config, error) {
	t.Helper()
	opts := testOptions()
	opts.Clusters = clusters
	return Parse("mm2.properties", []byte(src), opts)
}

// mustParse parses src and fails the test on any error.
func mustParse(t *testing.T, src string, clusters ...string) *Config {
	t.Helper()
	c, err := parse(t, src, clusters...)
	if err != nil {
		t.Fatalf("Parse: unexpected error:\n%v", err)
	}
	return c
}

// flowOf returns the flow named name ("A->B") or fails.
func flowOf(t *testing.T, c *Config, name string) *Flow {
	t.Helper()
	for _, f := range c.Flows {
		if f.Name() == name {
			return f
		}
	}
	t.Fatalf("no flow %s; flows: %v", name, flowNames(c))
	return nil
}

func flowNames(c *Config) []string {
	var n []string
	for _, f := range c.Flows {
		n = append(n, f.Name())
	}
	return n
}

// warningsText joins the warnings, one per line.
func warningsText(c *Config) string {
	var b strings.Builder
	for _, w := range c.Warnings {
		b.WriteString(w.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// asErrors returns the problems of err, which must be an *Errors.
func asErrors(t *testing.T, err error) Errors {
	t.Helper()
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v (%T) is not an *Errors", err, err)
	}
	return *errs
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update after checking the change):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// base is a valid two-cluster configuration with A->B enabled.
const base = `clusters = A, B
A.bootstrap.servers = a.example:9092
B.bootstrap.servers = b.example:9092
A->B.enabled = true
`
