//go:build faults

package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"strait/internal/api"
	"strait/internal/kafkatest"
)

// flow is one Strait flow alias->B of a test, from a source cluster to the target.
type flow struct {
	alias string // the source's alias: the prefix of remote topics and of Strait's group
	src   *kafkatest.Cluster
	dst   *kafkatest.Cluster
	// exactlyOnce runs the flow in exactly-once mode (strait.exactly.once): it copies
	// in transactions, and the tests read the target read_committed.
	exactlyOnce bool
	// to is the target's alias, "B" when empty; identity says the flow keeps topic names
	// (IdentityReplicationPolicy). Both are for the two flows of an active-active pair.
	to       string
	identity bool
}

// name is the flow's name, as Strait's API and logs give it: "A->B".
func (f flow) name() string {
	if f.to == "" {
		return f.alias + "->B"
	}
	return f.alias + "->" + f.to
}

// flowA is the flow from the one-broker source; flowC from the three-broker one.
func flowA() flow { return flow{alias: "A", src: source(), dst: target()} }
func flowC() flow { return flow{alias: "C", src: threeBrokers(), dst: target()} }

// group is the consumer group on the target in which Strait stores the flow's progress.
func (f flow) group() string { return "strait-" + f.alias }

// remote is the name of topic's replica on the target.
func (f flow) remote(topic string) string {
	if f.identity {
		return topic
	}
	return f.alias + "." + topic
}

// config writes Strait's configuration for the flow, replicating the topics that match
// the regex topics, through the brokers' proxies, and returns its path. extra lines are
// appended (later keys win).
func (f flow) config(t *testing.T, topics string, extra ...string) string {
	t.Helper()
	if f.exactlyOnce {
		extra = append([]string{"B.exactly.once.source.support = enabled"}, extra...)
	}
	props := fmt.Sprintf(`clusters = %[1]s, B
%[1]s.bootstrap.servers = %[2]s
B.bootstrap.servers = %[3]s
%[1]s->B.enabled = true
topics = %[4]s
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
refresh.topics.interval.seconds = 1
sync.topic.configs.enabled = false
sync.topic.acls.enabled = false
%[5]s
`, f.alias, f.src.ProxyBootstrap(), f.dst.ProxyBootstrap(), topics, strings.Join(extra, "\n"))
	path := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(path, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// strait is a running strait process.
type strait struct {
	cmd  *exec.Cmd
	out  *kafkatest.SyncBuffer
	done chan struct{}
	err  error // the exit, once done is closed
}

// startStrait runs the strait binary with args (JSON logs added for `run`). The process is
// killed when the test ends if it still runs; its last kafkatest.SyncBuffer is logged if the test failed.
func startStrait(t *testing.T, args ...string) *strait {
	t.Helper()
	if len(args) > 0 && args[0] == "run" {
		args = append(args, "--log-format", "json")
	}
	s := &strait{out: &kafkatest.SyncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(straitBin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("strait %s, last kafkatest.SyncBuffer:\n%s", strings.Join(args, " "), tail(s.out.String(), 60))
		}
	})
	return s
}

// stop sends sig and waits up to timeout for the exit; it returns the exit code.
func (s *strait) stop(t *testing.T, sig syscall.Signal, timeout time.Duration) int {
	t.Helper()
	_ = s.cmd.Process.Signal(sig)
	return s.wait(t, timeout)
}

// wait waits up to timeout for the process to exit and returns its exit code (-1 for a
// signal), failing the test if it still runs.
func (s *strait) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-s.done:
	case <-timer.C:
		t.Fatalf("strait did not exit within %v", timeout)
		return 0
	}
	var exit *exec.ExitError
	switch {
	case s.err == nil:
		return 0
	case errors.As(s.err, &exit):
		return exit.ExitCode()
	default:
		t.Fatalf("waiting for strait: %v", s.err)
		return 0
	}
}

// exited reports whether the process has ended.
func (s *strait) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// peakRSS returns the process's peak resident set size (VmHWM) in bytes, while it runs.
func (s *strait) peakRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Fatalf("reading strait's memory use: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("parsing %q: %v", line, err)
			}
			return kib << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", s.cmd.Process.Pid)
	return 0
}

// logLine is one JSON log line of strait.
type logLine struct {
	raw   string
	attrs map[string]any
}

func (l logLine) level() string { s, _ := l.attrs["level"].(string); return s }

// logs parses the JSON log lines of the kafkatest.SyncBuffer so far; other lines are left out.
func (s *strait) logs() []logLine {
	var out []logLine
	sc := bufio.NewScanner(strings.NewReader(s.out.String()))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var attrs map[string]any
		if json.Unmarshal(sc.Bytes(), &attrs) == nil {
			out = append(out, logLine{raw: sc.Text(), attrs: attrs})
		}
	}
	return out
}

// logged reports whether Strait logged msg about topic's partition.
func (s *strait) logged(msg, topic string, partition int32) bool {
	for _, l := range s.logs() {
		if l.attrs["msg"] == msg && l.attrs["topic"] == topic {
			if p, ok := l.attrs["partition"].(float64); ok && int32(p) == partition {
				return true
			}
		}
	}
	return false
}

// errorAbout returns the first ERROR log line that names topic and partition and matches
// what, or "" if there is none.
func (s *strait) errorAbout(topic string, partition int32, what *regexp.Regexp) string {
	for _, l := range s.logs() {
		if l.level() != "ERROR" || !strings.Contains(l.raw, topic) || !what.MatchString(l.raw) {
			continue
		}
		if p, ok := l.attrs["partition"].(float64); ok && int32(p) == partition {
			return l.raw
		}
		if strings.Contains(l.raw, fmt.Sprintf("%s[%d]", topic, partition)) {
			return l.raw
		}
	}
	return ""
}

// apiURL is the base URL of the process's API, once it logged it ("" before).
func (s *strait) apiURL() string {
	for _, l := range s.logs() {
		if l.attrs["msg"] == "api listening" {
			u, _ := l.attrs["url"].(string)
			return u
		}
	}
	return ""
}

// flowView reads flow f as the process's API shows it (/api/v1/flows): its share of a
// flow shared by several nodes, its transactions in exactly-once mode.
func (s *strait) flowView(ctx context.Context, f flow) (api.FlowView, error) {
	base := s.apiURL()
	if base == "" {
		return api.FlowView{}, errors.New("the API's address is not logged yet")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/flows", nil)
	if err != nil {
		return api.FlowView{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return api.FlowView{}, fmt.Errorf("reading the flows: %w", err)
	}
	defer resp.Body.Close()
	var v api.FlowsView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return api.FlowView{}, fmt.Errorf("decoding the flows (HTTP %s): %w", resp.Status, err)
	}
	for _, fl := range v.Flows {
		if fl.Name == f.name() {
			return fl, nil
		}
	}
	return api.FlowView{}, fmt.Errorf("no flow %s", f.name())
}

func tail(s string, lines int) string {
	parts := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(parts) > lines {
		parts = append([]string{fmt.Sprintf("[%d lines before]", len(parts)-lines)}, parts[len(parts)-lines:]...)
	}
	return strings.Join(parts, "\n")
}
