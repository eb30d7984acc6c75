//go:build integration

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReadmeLocalCopy runs the README's "A copy between two local clusters,
// from a fresh clone" as a newcomer types it: each command of the block
// between the readme-test markers, in order, in one bash at the repository's
// root (so `&` and `kill %1` work as they do at a prompt). Every command
// must exit 0. The status and verify lines, which a person runs once the
// copy has had a moment, are run once B holds every record the producer
// line wrote; verify, run again until its index caught up, must then report
// all of them matched.
func TestReadmeLocalCopy(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, filepath.Join(root, "README.md"))
	sh := startShell(t, root)
	var pair, bootstrapB string
	var produced int64
	for _, c := range cmds {
		if strings.HasPrefix(c, "bin/strait status") || strings.HasPrefix(c, "bin/strait verify") {
			if produced == 0 {
				t.Fatalf("the README runs %q before a producer line with --num-records", c)
			}
			waitForRecords(t, bootstrapB, "a.orders", produced)
		}
		out := sh.run(t, c, 4*time.Minute)
		// verify checks up to what the offset index covers, which follows
		// the copy by a flush interval or two: a person would run it again.
		for deadline := time.Now().Add(time.Minute); strings.HasPrefix(c, "bin/strait verify") && verifiedRecords(out) < produced && time.Now().Before(deadline); {
			out = sh.run(t, c, 4*time.Minute)
		}
		switch {
		case strings.Contains(c, "scripts/kafka.sh start"):
			pair = sh.run(t, `echo "$pair"`, time.Second)
			pair = strings.TrimSpace(pair)
			t.Cleanup(func() { stopPair(t, root, pair) })
		case strings.HasPrefix(c, ". "):
			bootstrapB = strings.TrimSpace(sh.run(t, `echo "$KAFKA_B_BOOTSTRAP"`, time.Second))
		case strings.Contains(c, "ProducerPerformance"):
			m := regexp.MustCompile(`--num-records (\d+)`).FindStringSubmatch(c)
			if m == nil {
				t.Fatalf("no --num-records in %q", c)
			}
			produced, _ = strconv.ParseInt(m[1], 10, 64)
		case strings.HasPrefix(c, "bin/strait status"):
			if !strings.Contains(out, "Flow a->b: ") {
				t.Errorf("status shows no flow a->b:\n%s", out)
			}
		case strings.HasPrefix(c, "bin/strait verify"):
			if matched := verifiedRecords(out); !strings.Contains(out, "Flow a->b: complete and exact") || matched != produced {
				t.Errorf("verify matched %d records of %d:\n%s", matched, produced, out)
			}
		}
	}
	if pair == "" || bootstrapB == "" || produced == 0 {
		t.Fatalf("the README's block lacks a step: pair %q, bootstrap %q, produced %d", pair, bootstrapB, produced)
	}
}

// readmeCommands returns the shell commands of the README's block between
// <!-- readme-test:begin --> and <!-- readme-test:end -->, one per line.
func readmeCommands(t *testing.T, path string) []string {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(body), "<!-- readme-test:begin -->")
	block, _, ok2 := strings.Cut(rest, "<!-- readme-test:end -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no readme-test block")
	}
	var cmds []string
	for _, line := range strings.Split(block, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "```") || strings.HasPrefix(line, "#") {
			continue
		}
		cmds = append(cmds, line)
	}
	return cmds
}

// shell is one interactive-like bash: commands go in on stdin, and each is
// followed by a marker line carrying its exit code.
type shell struct {
	cmd   *exec.Cmd
	in    io.Writer
	lines chan string
}

func startShell(t *testing.T, dir string) *shell {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sh := &shell{cmd: cmd, in: in, lines: make(chan string, 1024)}
	go func() {
		defer close(sh.lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			sh.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		// A test that failed half-way leaves `bin/strait run &` behind.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		w.Close()
	})
	return sh
}

// run types c, waits for it, and fails the test unless it exits 0.
func (sh *shell) run(t *testing.T, c string, timeout time.Duration) string {
	t.Helper()
	marker := fmt.Sprintf("__readme_test_done_%d", time.Now().UnixNano())
	fmt.Fprintf(sh.in, "%s\necho %s $?\n", c, marker)
	var out strings.Builder
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-sh.lines:
			if !ok {
				t.Fatalf("the shell ended during %q:\n%s", c, out.String())
			}
			if rest, found := strings.CutPrefix(line, marker+" "); found {
				if rest != "0" {
					t.Fatalf("%q exited %s:\n%s", c, rest, out.String())
				}
				t.Logf("$ %s\n%s", c, out.String())
				return out.String()
			}
			out.WriteString(line + "\n")
		case <-deadline:
			t.Fatalf("%q still runs after %s:\n%s", c, timeout, out.String())
		}
	}
}

// waitForRecords polls B until topic holds want records.
func waitForRecords(t *testing.T, bootstrap, topic string, want int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(3 * time.Minute)
	var got int64
	for time.Now().Before(deadline) {
		ends, err := adm.ListEndOffsets(t.Context(), topic)
		got = 0
		if err == nil {
			ends.Each(func(o kadm.ListedOffset) { got += o.Offset })
		}
		if got == want {
			return
		}
		if got > want {
			t.Fatalf("%s holds %d records, more than the %d written", topic, got, want)
		}
		time.Sleep(200 * time.Millisecond) // polling B, not synchronising
	}
	t.Fatalf("%s holds %d of %d records after 3 minutes", topic, got, want)
}

// verifiedRecords sums the MATCHED column of verify's rows for topic orders.
func verifiedRecords(out string) int64 {
	var n int64
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		// TOPIC PARTITION [FROM, UPTO) RECORDS MATCHED ...: the range is two fields.
		if len(f) >= 6 && f[0] == "orders" {
			m, _ := strconv.ParseInt(f[5], 10, 64)
			n += m
		}
	}
	return n
}

// stopPair stops the README's clusters if the block did not get to it.
func stopPair(t *testing.T, root, pair string) {
	if pair == "" {
		return
	}
	if _, err := os.Stat(pair); err != nil {
		return // the README's last line stopped and removed them
	}
	out, err := exec.Command(filepath.Join(root, "scripts/kafka.sh"), "stop", "-d", pair).CombinedOutput()
	if err != nil {
		t.Errorf("stopping the README's clusters: %v\n%s", err, out)
	}
}
