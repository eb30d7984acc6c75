package kafkatest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestABrokerInTheMiddleOfExecIsNotGone: kafka.sh writes a broker's pid
// file from the launcher shell, which then execs java. In between, the
// process is alive with an empty command line (seen in 6 of 300 launches on
// a loaded machine), and broker_pid finds no broker there. wait_ready took
// that for "the broker exited during startup", stopped the broker it had
// just launched and failed the restart: a soak's broker bounce failed so
// while a make ci ran alongside. A process with an empty command line is
// gone only once it is a zombie, or no more.
func TestABrokerInTheMiddleOfExecIsNotGone(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "kafka.sh"))
	if err != nil {
		t.Fatal(err)
	}
	gone := func(pid int) bool {
		t.Helper()
		bdir := t.TempDir()
		if err := os.WriteFile(filepath.Join(bdir, "pid"), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("bash", "-c", `source "$1"; set +e; broker_gone "$2"; echo "gone=$?"`, "test", script, bdir).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return strings.Contains(string(out), "gone=0")
	}

	// A live process with an empty command line, as a launcher is in the
	// middle of exec: a kernel thread (kthreadd, ksoftirqd...) has one for
	// good. (A process started with no arguments gets an empty argv[0]
	// from the kernel, so it would not do.)
	live := liveWithEmptyCmdline(t)
	if gone(live) {
		t.Fatalf("a live process with an empty command line (pid %d, as a launcher in the middle of exec) is taken for a broker that exited", live)
	}

	// A zombie (a child this test has not reaped yet), and a process
	// that ended, are gone.
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stat := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat"
	Eventually(t, 30*time.Second, func() error {
		if b, err := os.ReadFile(stat); err == nil && !strings.Contains(string(b), ") Z ") {
			return errors.New("the child has not exited yet")
		}
		return nil
	})
	if !gone(cmd.Process.Pid) {
		t.Fatal("a zombie counts as a running broker")
	}
	_ = cmd.Wait()
	if !gone(cmd.Process.Pid) {
		t.Fatal("a process that ended counts as a running broker")
	}
}

// liveWithEmptyCmdline returns the pid of a process that is not a zombie
// and whose /proc/PID/cmdline is empty; the test is skipped where there is
// none (no /proc, or a container that sees no kernel thread).
func liveWithEmptyCmdline(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("needs /proc: the state in question is Linux's")
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err1 := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		stat, err2 := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err1 == nil && err2 == nil && len(cmdline) == 0 && !strings.Contains(string(stat), ") Z ") {
			return pid
		}
	}
	t.Skip("no live process with an empty command line is visible here")
	return 0
}
