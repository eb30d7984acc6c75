package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// mm2Main is the class bin/connect-mirror-maker.sh runs.
	mm2Main = "org.apache.kafka.connect.mirror.MirrorMaker"
	// mm2StopTimeout is how long Stop waits after SIGTERM before SIGKILL. MM2's shutdown
	// hook itself waits up to 60 s for a start to finish; tests do not.
	mm2StopTimeout = 30 * time.Second
	// mm2KillTimeout bounds the wait for the JVM to go after SIGKILL.
	mm2KillTimeout  = 10 * time.Second
	mm2SetupTimeout = 2 * time.Minute
)

// MM2 is Apache Kafka's MirrorMaker 2 running in dedicated mode (the program Strait
// replaces), in a JVM of its own process group, for interop tests and benchmarks.
// Env.StartMM2 starts it; Stop ends it and is also run when the test ends.
type MM2 struct {
	cmd         *exec.Cmd
	logFile     string
	stopTimeout time.Duration // SIGTERM to SIGKILL

	// done is closed by the one goroutine that waits for the JVM, after it set waitErr.
	done    chan struct{}
	waitErr error

	stopOnce sync.Once
}

// StartMM2 starts Apache MirrorMaker 2 (org.apache.kafka.connect.mirror.MirrorMaker, the
// class bin/connect-mirror-maker.sh runs) of the test bed's Kafka version with configPath,
// an mm2.properties file, and args (e.g. "--clusters", "b"). It returns once the JVM has
// started; MM2 itself takes several seconds more to replicate. Its log, including the
// JVM's stdout and stderr, goes to a file in t.TempDir(); its last lines are printed when
// the test has failed. The process runs in its own process group (and, on Linux, is
// killed should the test binary die), and is stopped when the test ends.
func (e *Env) StartMM2(t testing.TB, configPath string, args ...string) *MM2 {
	t.Helper()
	if _, err := os.Stat(configPath); err != nil {
		t.Fatalf("starting MirrorMaker 2: its config: %v", err)
		return nil
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("starting MirrorMaker 2: java not found in PATH: install Java 17+ (%s)", javaInstallHint)
		return nil
	}
	ctx, cancel := context.WithTimeout(t.Context(), mm2SetupTimeout)
	defer cancel()
	classPath, logConfig, err := e.kafkaJava(ctx)
	if err != nil {
		t.Fatalf("starting MirrorMaker 2: %v", err)
		return nil
	}
	// t.TempDir registers its removal before startMM2 registers Stop, so it runs after.
	logFile := filepath.Join(t.TempDir(), "mm2.log")
	// The JVM flags of scripts/kafka.sh mm2, so benchmarks measure the same MM2.
	jvm := []string{
		"-Xms128m", "-Xmx512m", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:+ExitOnOutOfMemoryError",
		"-Djava.awt.headless=true",
	}
	jvm = append(jvm, logOpts(logConfig, logFile)...)
	jvm = append(jvm, "-cp", classPath, mm2Main, configPath)
	return startMM2(t, exec.Command(java, slices.Concat(jvm, args)...), logFile, mm2StopTimeout)
}

// startMM2 starts cmd with its stdout and stderr appended to logFile, in a process group
// of its own, and stops it (allowing stopTimeout after SIGTERM) when the test ends.
func startMM2(t testing.TB, cmd *exec.Cmd, logFile string, stopTimeout time.Duration) *MM2 {
	t.Helper()
	out, err := os.OpenFile(logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("starting MirrorMaker 2: creating its log: %v", err)
		return nil
	}
	defer out.Close() // the child has its own copy of the descriptor
	// log4j and the JVM both append to the file; O_APPEND keeps their writes whole.
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = mm2ProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting MirrorMaker 2 (%s): %v", strings.Join(cmd.Args, " "), err)
		return nil
	}
	m := &MM2{cmd: cmd, logFile: logFile, stopTimeout: stopTimeout, done: make(chan struct{})}
	go func() {
		m.waitErr = cmd.Wait()
		close(m.done)
	}()
	t.Cleanup(func() {
		m.Stop(t)
		if t.Failed() {
			t.Logf("last lines of MirrorMaker 2's log %s:\n%s", logFile, readTail(logFile, logTailLines))
		}
	})
	return m
}

// Pid returns the JVM's process id, e.g. for benchmarks that read /proc/<pid>.
func (m *MM2) Pid() int { return m.cmd.Process.Pid }

// Done is closed once the JVM has exited, whether by Stop or on its own (a bad config, a
// crash). A test waiting for MM2 to replicate can select on it to fail fast.
func (m *MM2) Done() <-chan struct{} { return m.done }

// Err returns how the JVM exited, once Done is closed; nil before.
func (m *MM2) Err() error {
	select {
	case <-m.done:
		return m.waitErr
	default:
		return nil
	}
}

// LogFile returns the path of MM2's log, which holds the JVM's stdout and stderr too. It
// is removed with the test's temporary dir.
func (m *MM2) LogFile() string { return m.logFile }

// Log returns MM2's log so far.
func (m *MM2) Log() string {
	b, err := os.ReadFile(m.logFile)
	if err != nil {
		return fmt.Sprintf("(reading MirrorMaker 2's log %s: %v)", m.logFile, err)
	}
	return string(b)
}

// Stop ends MM2: SIGTERM, which runs its shutdown hook (Connect commits its offsets), then
// SIGKILL if it has not exited 30 s later. It returns once the JVM has exited. Calls after
// the first return at once. It notes in the test log if MM2 had exited on its own before.
func (m *MM2) Stop(t testing.TB) {
	t.Helper()
	m.stopOnce.Do(func() { m.stop(t) })
}

func (m *MM2) stop(t testing.TB) {
	t.Helper()
	pid := m.Pid()
	select {
	case <-m.done:
		t.Logf("MirrorMaker 2 (pid %d) had exited before Stop: %v", pid, m.waitErr)
		return
	default:
	}
	// Signal the process, not its group: os.Process signals through a pidfd on Linux, so
	// a pid reused after the JVM exited is never hit. The JVM starts no children.
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("stopping MirrorMaker 2 (pid %d) with SIGTERM: %v", pid, err)
	}
	timer := time.NewTimer(m.stopTimeout)
	defer timer.Stop()
	select {
	case <-m.done:
		return
	case <-timer.C:
	}
	t.Logf("MirrorMaker 2 (pid %d) did not exit within %v of SIGTERM: sending SIGKILL", pid, m.stopTimeout)
	if err := m.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("killing MirrorMaker 2 (pid %d): %v", pid, err)
	}
	timer.Reset(mm2KillTimeout)
	select {
	case <-m.done:
	case <-timer.C:
		t.Errorf("MirrorMaker 2 (pid %d) still runs %v after SIGKILL", pid, mm2KillTimeout)
	}
}
