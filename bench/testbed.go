package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	startTimeout = 5 * time.Minute // includes a first fetch of the Kafka jars
	stopTimeout  = 2 * time.Minute
)

// testbed is the pair of single-node Kafka clusters (source a, target b) that
// scripts/kafka.sh started for this run in its own temporary dir.
type testbed struct {
	script       string
	dir          string
	kafkaVersion string
	a, b         cluster
}

// cluster is one running single-node cluster of the test bed.
type cluster struct {
	name      string // a or b, the script's names (the MM2 aliases are chosen per run)
	bootstrap string
	dir       string
	// external is the broker's EXTERNAL listener (start --external), where the link
	// proxy forwards; "" without one.
	external string
}

// brokerPid returns the pid of the cluster's broker, written by scripts/kafka.sh.
func (c cluster) brokerPid() (int, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, "pid"))
	if err != nil {
		return 0, fmt.Errorf("reading the broker pid of cluster %s: %w", c.name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("broker pid file of cluster %s holds %q, not a pid", c.name, b)
	}
	return pid, nil
}

// startTestbed starts two clusters with `kafka.sh start`. The script's watchdog (--owner)
// stops them should this process die without calling stop. Cancelling ctx sends SIGTERM to
// the script, whose exit trap kills the brokers it launched so far. With externalPort,
// broker A also gets an EXTERNAL listener that it advertises as 127.0.0.1:externalPort,
// where the harness runs the link proxy (link.go).
func startTestbed(ctx context.Context, log *slog.Logger, script, heap, externalPort string) (*testbed, error) {
	dir, err := os.MkdirTemp("", "strait-bench-")
	if err != nil {
		return nil, fmt.Errorf("creating the test bed dir: %w", err)
	}
	log.Info("starting two Kafka clusters", "dir", dir, "heap", heap)
	began := time.Now()
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	args := []string{"start", "-n", "2", "-d", dir, "--heap", heap, "--heap-min", heap, "--owner", strconv.Itoa(os.Getpid())}
	if externalPort != "" {
		args = append(args, "--external", "a="+externalPort)
	}
	stdout, stderr, err := runScript(sctx, script, args...)
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "a", "server.log")); statErr != nil {
			_ = os.RemoveAll(dir) // nothing started: no logs worth keeping
			dir = ""
		}
		return nil, fmt.Errorf("starting the Kafka clusters with %s start: %w\n%s%s(logs kept in %q)", script, err, stdout, stderr, dir)
	}
	tb := &testbed{script: script, dir: dir}
	tb.a, tb.b = parseStartOutput(stdout)
	if tb.a.bootstrap == "" || tb.b.bootstrap == "" {
		_ = tb.stop(false)
		return nil, fmt.Errorf("could not read clusters a and b from the output of %s start:\n%s", script, stdout)
	}
	tb.kafkaVersion = readEnvFile(filepath.Join(dir, "testbed.env"))["KAFKA_VERSION"]
	log.Info("clusters up", "a", tb.a.bootstrap, "b", tb.b.bootstrap, "kafka", tb.kafkaVersion, "seconds", time.Since(began).Seconds())
	return tb, nil
}

// parseStartOutput reads clusters a and b from the "<name> <bootstrap> <dir>" lines of
// `kafka.sh start`, and broker A's external listener from its "node a:1 <address>
// <external listener|-> <advertised|-> <dir>" line (start --external); other lines are
// skipped. A cluster it does not find is the zero cluster.
func parseStartOutput(stdout string) (a, b cluster) {
	external := ""
	for line := range strings.Lines(stdout) {
		f := strings.Fields(line)
		switch {
		case len(f) == 6 && f[0] == "node" && f[1] == "a:1" && f[3] != "-":
			external = f[3]
		case len(f) == 3 && f[0] == "a":
			a = cluster{name: f[0], bootstrap: f[1], dir: f[2]}
		case len(f) == 3 && f[0] == "b":
			b = cluster{name: f[0], bootstrap: f[1], dir: f[2]}
		}
	}
	if a.bootstrap != "" {
		a.external = external
	}
	return a, b
}

// stop stops both clusters and removes their dir unless keep. It runs on its own deadline:
// it is called while the run's context may already be cancelled.
func (t *testbed) stop(keep bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	args := []string{"stop", "-d", t.dir}
	if keep {
		args = append(args, "--keep")
	}
	if stdout, stderr, err := runScript(ctx, t.script, args...); err != nil {
		return fmt.Errorf("stopping the clusters in %s: %w\n%s%s", t.dir, err, stdout, stderr)
	}
	return nil
}

// runScript runs scripts/kafka.sh with args. On cancellation it sends SIGTERM, not SIGKILL,
// so the script's traps can take down what it started.
func runScript(ctx context.Context, script string, args ...string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, script, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// readEnvFile reads KEY=VALUE lines; a missing file gives an empty map.
func readEnvFile(path string) map[string]string {
	out := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// findRoot walks up from dir to the directory holding go.mod with module strait.
func findRoot(dir string) (string, error) {
	for d := dir; ; {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module strait")) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("not inside the strait repository (no go.mod with module strait above the working dir): run `go run ./bench` from the repository")
		}
		d = parent
	}
}
