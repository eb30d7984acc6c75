//go:build integration

package checkpoint_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/kafkatest"
	"strait/internal/tail"
	"strait/internal/wire"
)

var env *kafkatest.Env

func TestMain(m *testing.M) { os.Exit(kafkatest.Run(m, 2, &env)) }

// baseConfig is an A->B config for the test clusters with fast group
// refresh and checkpoints.
func baseConfig(extra string) string {
	return env.MM2Properties("refresh.groups.interval.seconds = 1\nemit.checkpoints.interval.seconds = 1\n" + extra)
}

// startDaemon runs Strait in-process until the test ends.
func startDaemon(t *testing.T, props string) *daemon.Daemon {
	t.Helper()
	cfg, err := config.Parse("test.properties", []byte(props), config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &strings.Builder{}
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelInfo}))
	d := daemon.New(cfg, daemon.Options{Logger: logger, ShutdownTimeout: 20 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
		if t.Failed() {
			mu.Lock()
			t.Logf("strait log:\n%s", logs.String())
			mu.Unlock()
		}
	})
	return d
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// checkpoints reads the latest checkpoint per (group, topic, partition).
func checkpoints(t *testing.T, c *kafkatest.Cluster, topic string) map[string]wire.Checkpoint {
	t.Helper()
	cl := c.Client(t, tail.ClientOpts()...)
	out := map[string]wire.Checkpoint{}
	if _, err := tail.ReadToEnd(t.Context(), cl, topic, func(r *kgo.Record) {
		if cp, err := wire.DecodeCheckpoint(r.Key, r.Value); err == nil {
			out[fmt.Sprintf("%s/%s/%d", cp.Group, cp.Topic, cp.Partition)] = cp
		}
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// firstFrom returns the first record a consumer starting at offset reads
// (read_committed), or nil when there is none.
func firstFrom(t *testing.T, c *kafkatest.Cluster, topic string, partition int32, offset int64) *kgo.Record {
	t.Helper()
	end := endOffsets(t, c, topic, kgo.ReadCommitted())[partition]
	if offset >= end {
		return nil
	}
	cl := c.Client(t, kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(offset)}}))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s[%d] from %d: %v", topic, partition, offset, err)
		}
		var rec *kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			if rec == nil {
				rec = r
			}
		})
		if rec != nil {
			return rec
		}
	}
}

func endOffsets(t *testing.T, c *kafkatest.Cluster, topic string, iso kgo.IsolationLevel) map[int32]int64 {
	t.Helper()
	return c.EndOffsets(t, topic, iso)
}

func commit(t *testing.T, c *kafkatest.Cluster, group, topic string, partitions int32, at int64) {
	t.Helper()
	offs := kadm.Offsets{}
	for p := int32(0); p < partitions; p++ {
		offs.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1, Metadata: "m-" + strconv.FormatInt(at, 10)})
	}
	resp, err := c.Admin(t).CommitOffsets(t.Context(), group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("committing %s at %d: %v", group, at, err)
	}
}

func value(r *kgo.Record) string {
	if r == nil {
		return "<end>"
	}
	return string(r.Value)
}
