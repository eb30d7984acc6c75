package fastpath

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
)

// Without the lease a node sends nothing: its queued batches wait.
func TestNoProduceWithoutTheLease(t *testing.T) {
	x := newFastFixture(0)
	x.f.deps.Share.LeaseUntil = func() time.Time { return time.Time{} }
	x.f.pidWanted = false
	x.f.dstMeta["A.t"] = topicMeta{leaders: []int32{1}}
	x.fetched(t.Context(), fetchResp("t", encodeBatch(0, 3, 0, -1, nil)))
	if len(x.fp.queue) != 1 {
		t.Fatalf("%d batches queued, want 1", len(x.fp.queue))
	}
	x.f.dispatch(t.Context(), t.Context()) // would send it, with the lease
	if len(x.fp.sent) != 0 || len(x.fp.queue) != 1 || x.f.running != 0 {
		t.Fatalf("sent %d batches (%d queued, %d requests running) without the lease", len(x.fp.sent), len(x.fp.queue), x.f.running)
	}
}

// TestLaneDropsARequestWhoseLeaseLapsed: a produce request that waited in
// its lane (behind the requests before it) until the node's lease had
// lapsed is never written: a node frozen (SIGSTOP) with requests queued
// wrote them when it resumed, after another node took its partitions over
// (TestZombieNodeWritesNothing, once in 14 runs: records written after the
// new owner's, from a producer id the broker cannot fence).
func TestLaneDropsARequestWhoseLeaseLapsed(t *testing.T) {
	c := kafkatest.NewFake(t, kfake.SeedTopics(1, "A.t"))
	var produced atomic.Int64
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		produced.Add(1)
		return nil, nil, false
	})
	cl := newClient(t, c)
	l := newLanes(cl, nil, slog.New(slog.DiscardHandler))
	defer l.close()
	lapsed, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "A.t"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = encodeBatch(0, 3, 0, -1, nil)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	done := make(chan error, 1)
	l.send(lapsed, laneKey{broker: 0, conn: 0}, req, func(_ kmsg.Response, err error, _ bool) { done <- err })
	if err := <-done; !errors.Is(err, errLeaseLapsed) {
		t.Fatalf("the request with a lapsed lease: %v, want %v", err, errLeaseLapsed)
	}
	if n := produced.Load(); n != 0 {
		t.Fatalf("the broker received %d produce requests", n)
	}
}

// TestProduceRequestsEndWithTheLease: the forwarder gives every produce
// request the node's lease end as its deadline, which the lanes and
// franz-go check before they write it.
func TestProduceRequestsEndWithTheLease(t *testing.T) {
	f := newFastFixture(0).f
	until := time.Now().Add(time.Minute)
	f.deps.Share.LeaseUntil = func() time.Time { return until }
	ctx, cancel := f.requestContext(t.Context())
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || !d.Equal(until) {
		t.Fatalf("request deadline %v (%v), want the lease end %v", d, ok, until)
	}
	f.deps.Share.LeaseUntil = nil
	ctx, cancel = f.requestContext(t.Context())
	defer cancel()
	if _, ok := ctx.Deadline(); ok {
		t.Fatal("a flow that is not shared gives its requests a deadline")
	}
}
