//go:build !integration

// The Stop tests re-run the test binary as a stand-in for MM2's JVM. They stay out of the
// integration build, whose TestMain would start Kafka in every such child.

package kafkatest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a stand-in for MM2's JVM: see TestMM2HelperProcess.
const helperEnv = "KAFKATEST_MM2_HELPER"

// TestMM2HelperProcess is not a test: run with helperEnv set, it is the child process of
// TestMM2Stop. "run" waits for SIGTERM and exits 143 as the JVM does, "ignore-term"
// ignores SIGTERM until killed, "exit" fails at once.
func TestMM2HelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM)
	os.Stdout.WriteString("helper started\n")
	switch mode {
	case "run":
		<-c
		os.Stdout.WriteString("helper got SIGTERM\n")
		os.Exit(143)
	case "ignore-term":
		for range c {
			os.Stdout.WriteString("helper ignores SIGTERM\n")
		}
	default:
		os.Exit(3)
	}
}

func TestMM2Stop(t *testing.T) {
	tests := []struct {
		name       string
		mode       string
		waitExit   bool // wait for the helper to exit on its own before Stop
		wantLog    string
		wantExit   int
		wantLogged string // in the test log
	}{
		{name: "stops on SIGTERM", mode: "run", wantLog: "helper got SIGTERM", wantExit: 143},
		{name: "killed after the timeout", mode: "ignore-term", wantLog: "helper ignores SIGTERM", wantExit: -1, wantLogged: "sending SIGKILL"},
		{name: "exited before Stop", mode: "exit", waitExit: true, wantExit: 3, wantLogged: "had exited before Stop"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "mm2.log")
			cmd := exec.Command(os.Args[0], "-test.run=^TestMM2HelperProcess$")
			cmd.Env = append(os.Environ(), helperEnv+"="+tc.mode)
			rec := &logTB{TB: t}
			m := startMM2(rec, cmd, logFile, time.Second)
			if m.Pid() <= 0 {
				t.Fatalf("Pid() = %d", m.Pid())
			}
			// The helper has started once it wrote its first line (and set up its signals,
			// before which a SIGTERM would end it as Go's default does).
			Eventually(t, 30*time.Second, func() error {
				if strings.Contains(m.Log(), "helper started") {
					return nil
				}
				return errors.New("helper not started yet")
			})
			if tc.waitExit {
				<-m.Done()
			} else {
				select {
				case <-m.Done():
					t.Fatalf("helper exited before Stop: %v", m.Err())
				default:
				}
			}
			m.Stop(rec)
			m.Stop(rec) // idempotent
			select {
			case <-m.Done():
			default:
				t.Fatal("Stop returned before the process exited")
			}
			var exit *exec.ExitError
			if !errors.As(m.Err(), &exit) || exit.ExitCode() != tc.wantExit {
				t.Errorf("Err() = %v, want exit code %d", m.Err(), tc.wantExit)
			}
			if !strings.Contains(m.Log(), tc.wantLog) {
				t.Errorf("Log() = %q, want it to contain %q", m.Log(), tc.wantLog)
			}
			if !strings.Contains(rec.logged.String(), tc.wantLogged) {
				t.Errorf("test log %q, want it to contain %q", rec.logged.String(), tc.wantLogged)
			}
		})
	}
}

// logTB records Logf output, to check what a helper notes in the test log.
type logTB struct {
	testing.TB
	logged strings.Builder
}

func (l *logTB) Helper() {}

func (l *logTB) Logf(format string, args ...any) {
	l.logged.WriteString(fmt.Sprintf(format, args...))
	l.logged.WriteByte('\n')
}
