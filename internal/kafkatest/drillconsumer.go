package kafkatest

import (
	"bufio"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// DrillConsumer is the embedded Java program DrillConsumer running: Apache
// Kafka's own consumer in a group, committing after each poll, as the
// application of the disaster-recovery drills.
type DrillConsumer struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	logs *SyncBuffer
	mu   sync.Mutex
	read []Consumed
}

// Consumed is one record DrillConsumer read.
type Consumed struct {
	Partition int32
	Offset    int64
	Value     string
}

// StartDrillConsumer runs DrillConsumer in group on topic of c (its
// PLAINTEXT listener) until it has read nothing for idle; it is killed when
// the test ends if it still runs.
func (e *Env) StartDrillConsumer(t testing.TB, c *Cluster, group, topic string, idle time.Duration) *DrillConsumer {
	t.Helper()
	prog := e.JavaProgram(t, "DrillConsumer")
	dc := &DrillConsumer{done: make(chan struct{}), logs: &SyncBuffer{}}
	dc.cmd = prog.Command(context.Background(), "", "--bootstrap", c.Bootstrap, "--group", group, "--topic", topic,
		"--idle-ms", strconv.FormatInt(idle.Milliseconds(), 10), "--max-ms", "240000")
	out, err := dc.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	dc.cmd.Stderr = dc.logs
	if err := dc.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.SplitN(sc.Text(), " ", 3)
			if len(f) != 3 {
				continue
			}
			p, _ := strconv.ParseInt(f[0], 10, 32)
			o, _ := strconv.ParseInt(f[1], 10, 64)
			dc.mu.Lock()
			dc.read = append(dc.read, Consumed{int32(p), o, f[2]})
			dc.mu.Unlock()
		}
		dc.err = dc.cmd.Wait()
		close(dc.done)
	}()
	t.Cleanup(dc.Kill)
	return dc
}

// Records returns what it read so far, in order.
func (dc *DrillConsumer) Records() []Consumed {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	return append([]Consumed(nil), dc.read...)
}

// Kill ends it at once, as a crash would: what it read since its last
// commit is read again by its group's next consumer.
func (dc *DrillConsumer) Kill() {
	select {
	case <-dc.done:
	default:
		_ = dc.cmd.Process.Kill()
		<-dc.done
	}
}

// Wait waits until it exits by itself, failing the test after timeout or
// when it failed.
func (dc *DrillConsumer) Wait(t testing.TB, timeout time.Duration) {
	t.Helper()
	select {
	case <-dc.done:
		if dc.err != nil {
			t.Fatalf("DrillConsumer: %v\n%s", dc.err, dc.logs.String())
		}
	case <-time.After(timeout):
		t.Fatalf("DrillConsumer did not exit within %s", timeout)
	}
}
