package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// stopTimeoutTool bounds a replicator's clean shutdown before it gets SIGKILL.
const stopTimeoutTool = 60 * time.Second

// proc is one replicator process the harness started. The goroutine that waits for it is
// owned by the proc and ends when the process has exited; stop makes sure it does.
type proc struct {
	name    string
	cmd     *exec.Cmd
	started time.Time
	logPath string
	mm2Log  string // MM2's own log (log4j), beside logPath's stdout and stderr
	done    chan struct{}
	err     error // the exit status; read only after done is closed
}

// startProc starts argv with its output in logPath, in its own process group so a Ctrl-C
// on the terminal reaches only the harness, which then stops the process in order.
func startProc(name, logPath string, argv ...string) (*proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the log of %s: %w", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, strings.Join(argv, " "), err)
	}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// pid is the process id; for MM2 it is the JVM's, as `kafka.sh mm2` execs java.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended, and how.
func (p *proc) exited() (bool, error) {
	select {
	case <-p.done:
		if p.err == nil {
			return true, errors.New("exited with status 0")
		}
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM and waits up to timeout for a clean exit, then sends SIGKILL. It
// returns how long the clean shutdown took and whether SIGKILL was needed. Idempotent.
func (p *proc) stop(timeout time.Duration) (time.Duration, bool) {
	began := time.Now()
	select {
	case <-p.done:
		return 0, false
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return time.Since(began), false
	case <-t.C:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return time.Since(began), true
}

// failure builds the error for a replicator that exited or misbehaved, with its log's tail.
func (p *proc) failure(format string, args ...any) error {
	return fmt.Errorf("%s: %s (log %s):\n%s", p.name, fmt.Sprintf(format, args...), p.logPath, tailFile(p.logPath, 30))
}

// tailFile returns the last n lines of a file, or a note saying why it cannot.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// launchStrait runs `strait run -c props --clusters target`.
func launchStrait(bin, props, target, logPath string) (*proc, error) {
	return startProc(toolStrait, logPath, bin, "run", "-c", props, "--clusters", target, "--log-level", "info")
}

// launchMM2 runs Apache MM2 in dedicated mode through `kafka.sh mm2`, which execs java, so
// the pid is the JVM's. MM2's own log goes to mm2Log, the JVM's stdout and stderr to logPath.
func launchMM2(script, tbDir, props, heap, target, logPath, mm2Log string) (*proc, error) {
	p, err := startProc(toolMM2, logPath, script, "mm2", "-d", tbDir, "-c", props, "--heap", heap, "--log", mm2Log, "--", "--clusters", target)
	if p != nil {
		p.mm2Log = mm2Log
	}
	return p, err
}

// toolStats reads the replicator's CPU time and peak RSS, checking that the pid is the
// process that does the work (java for MM2).
func toolStats(p *proc) (procStats, error) {
	st, err := readProcStats(p.pid())
	if err != nil {
		return st, p.failure("reading its CPU and memory: %v", err)
	}
	if p.name == toolMM2 && st.Comm != "java" {
		return st, fmt.Errorf("MM2's pid %d is %q, not java: `scripts/kafka.sh mm2` must exec java so its CPU and memory can be read from /proc", p.pid(), st.Comm)
	}
	return st, nil
}
