//go:build integration

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
	"strait/internal/verify"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// straitBinary builds the strait binary once per test run.
func straitBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "strait-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "strait")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// process is a running `strait` command.
type process struct {
	cmd  *exec.Cmd
	out  *kafkatest.SyncBuffer
	done chan struct{}
	err  error
}

// startStrait runs the binary with args; the process is killed when the
// test ends if it is still running, and its output is logged on failure.
func startStrait(t *testing.T, args ...string) *process {
	t.Helper()
	p := &process{out: &kafkatest.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(straitBinary(t), args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("strait %v output:\n%s", args, p.out.String())
		}
	})
	return p
}

// stop sends sig and waits for the exit, failing after timeout. A signal
// Strait handles (SIGTERM, SIGINT) is sent only once the process logged
// its first line, by which time main has installed its handler: sent
// before, it kills the process as SIGKILL would (TestRestartAfterSIGKILLLosesNothing
// failed so when its last run was caught up before it started).
func (p *process) stop(t *testing.T, sig syscall.Signal, timeout time.Duration) error {
	t.Helper()
	if sig != syscall.SIGKILL {
		kafkatest.Eventually(t, timeout, func() error {
			select {
			case <-p.done:
				return nil
			default:
			}
			if p.out.String() == "" {
				return errors.New("strait has not logged its first line yet")
			}
			return nil
		})
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		t.Fatalf("strait did not exit within %s after %v", timeout, sig)
		return nil
	}
}

// wait waits for the process to exit by itself.
func (p *process) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		t.Fatalf("strait did not exit within %s; output:\n%s", timeout, p.out.String())
		return nil
	}
}

// writeConfig writes an MM2 config for A->B between the test clusters.
func writeConfig(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(path, []byte(env.MM2Properties(extra)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// workload produces keyed records with headers and explicit timestamps to
// every partition of a topic, each value unique, some keys and values null.
type workload struct {
	topic      string
	partitions int32
	seq        int64
	base       int64 // first timestamp, ms; recent so retention keeps the records
}

func (w *workload) record() *kgo.Record {
	s := w.seq
	w.seq++
	p := int32(s % int64(w.partitions))
	r := &kgo.Record{
		Topic:     w.topic,
		Partition: p,
		Key:       []byte("key-" + strconv.FormatInt(s%997, 10)),
		Value:     []byte(fmt.Sprintf("%s/%d/%d/%s", w.topic, p, s, strings.Repeat("x", int(s%64)))),
		Timestamp: time.UnixMilli(w.timestamp(s)),
		Headers: []kgo.RecordHeader{
			{Key: "seq", Value: []byte(strconv.FormatInt(s, 10))},
			{Key: "bin", Value: []byte{0, 1, 2, byte(s)}},
		},
	}
	switch {
	case s%97 == 0:
		r.Key = nil
	case s%89 == 0:
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "empty", Value: []byte{}}, kgo.RecordHeader{Key: "seq", Value: []byte("dup-key")})
	}
	if s%101 == 0 {
		r.Value = nil // a tombstone keeps its null value
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "uniq", Value: []byte(strconv.FormatInt(s, 10))})
	}
	return r
}

// timestamp gives record s an explicit timestamp an hour in the past plus
// s ms: explicit, distinct, and recent enough that retention keeps it.
func (w *workload) timestamp(s int64) int64 {
	if w.base == 0 {
		w.base = time.Now().Add(-time.Hour).UnixMilli()
	}
	return w.base + s
}

// produce writes n records and waits for all acknowledgements.
func (w *workload) produce(t *testing.T, cl *kgo.Client, n int) {
	t.Helper()
	if err := w.write(t.Context(), cl, n); err != nil {
		t.Fatal(err)
	}
}

// write is produce for goroutines other than the test's own.
func (w *workload) write(ctx context.Context, cl *kgo.Client, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		cl.Produce(ctx, w.record(), func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("producing to %s: %w", w.topic, firstErr)
	}
	return nil
}

func producer(t *testing.T, c *kafkatest.Cluster) *kgo.Client {
	return c.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
}

// endOffsets returns the end offsets of a topic's partitions.
func endOffsets(t *testing.T, c *kafkatest.Cluster, topic string) map[int32]int64 {
	t.Helper()
	return c.EndOffsets(t, topic, kgo.ReadUncommitted())
}

// waitCopied waits until the remote topic holds at least want records in
// every partition (want from the source's end offsets when want is nil).
func waitCopied(t *testing.T, source, remote string, want map[int32]int64, timeout time.Duration) {
	t.Helper()
	a, b := env.Clusters[0], env.Clusters[1]
	if want == nil {
		want = endOffsets(t, a, source)
	}
	kafkatest.Eventually(t, timeout, func() error {
		got := endOffsets(t, b, remote)
		for p, n := range want {
			if got[p] < n {
				return fmt.Errorf("%s[%d] has %d of %d records", remote, p, got[p], n)
			}
		}
		return nil
	})
}

// compare reads source and remote topic and checks every partition.
func compare(t *testing.T, source, remote string, isolation kgo.IsolationLevel) []verify.Report {
	t.Helper()
	a, b := env.Clusters[0], env.Clusters[1]
	src := a.ReadAll(t, source, isolation)
	dst := b.ReadAll(t, remote, kgo.ReadCommitted())
	if len(dst) < len(src) {
		t.Fatalf("remote topic %s has %d partitions, source %s has %d", remote, len(dst), source, len(src))
	}
	var reps []verify.Report
	for p := range src {
		rep := verify.Compare(int32(p), src[p], dst[p])
		if !rep.OK() {
			t.Errorf("%s -> %s: %v", source, remote, rep)
		}
		reps = append(reps, rep)
	}
	return reps
}

// committedProgress reads Strait's stored progress for a remote topic.
func committedProgress(t *testing.T, group, remote string) map[int32]int64 {
	t.Helper()
	out, err := storedProgress(t, group, remote)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// storedProgress is committedProgress for polling: errors are returned.
func storedProgress(t *testing.T, group, remote string) (map[int32]int64, error) {
	resps, err := env.Clusters[1].Admin(t).FetchOffsets(t.Context(), group)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	resps.Each(func(o kadm.OffsetResponse) {
		if o.Topic == remote && o.Err == nil {
			out[o.Partition] = o.At
		}
	})
	return out, nil
}

// waitCaughtUp waits until Strait's stored progress for the remote topic
// reached the source's end in every partition: unlike target end offsets,
// this is not fooled by duplicates.
func waitCaughtUp(t *testing.T, source, remote string, timeout time.Duration) {
	t.Helper()
	want := endOffsets(t, env.Clusters[0], source)
	kafkatest.Eventually(t, timeout, func() error {
		got, err := storedProgress(t, "strait-A", remote)
		if err != nil {
			return err
		}
		for p, n := range want {
			if got[p] < n {
				return fmt.Errorf("%s[%d]: progress %d of %d", source, p, got[p], n)
			}
		}
		return nil
	})
}
