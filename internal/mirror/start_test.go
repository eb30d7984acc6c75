package mirror

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
	"strait/internal/tail"
)

// TestAPassingListingErrorDelaysTheStart: where a partition starts needs
// the source's start and end offsets. When listing them failed for a
// passing reason (OFFSET_NOT_AVAILABLE just after a leader election, a
// broker that refused the connection), the partition was stopped, and it
// stayed stopped on that node until it moved or the process restarted (the
// soak found it after leader moves, proxy faults and a SIGCONT). It starts
// once a listing succeeds.
func TestAPassingListingErrorDelaysTheStart(t *testing.T) {
	for _, mode := range []struct {
		name   string
		shared bool
		eos    bool
	}{{"alone", false, false}, {"shared", true, false}, {"shared exactly-once", true, true}} {
		t.Run(mode.name, func(t *testing.T) {
			const indexTopic = "strait-index.A.internal"
			a := kafkatest.NewFake(t, kfake.SeedTopics(2, "t"))
			b := kafkatest.NewFake(t, kfake.SeedTopics(2, "A.t"), kfake.SeedTopics(1, indexTopic))
			src := newClient(t, a, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
			produceN(t, src, "t", 100)
			// Copied up to 10 in each partition before: the start checks
			// the stored progress against the source's log.
			badm := kadm.NewClient(newClient(t, b))
			offs := kadm.Offsets{}
			for n := range int32(2) {
				offs.Add(kadm.Offset{Topic: "A.t", Partition: n, At: 10, LeaderEpoch: -1})
			}
			if _, err := badm.CommitOffsets(t.Context(), "strait-A", offs); err != nil {
				t.Fatal(err)
			}

			// The source's first listings answer OFFSET_NOT_AVAILABLE for
			// every partition, as a new leader does before its high
			// watermark is known.
			var refused atomic.Int32
			a.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
				a.KeepControl()
				if refused.Add(1) > 3 {
					return nil, nil, false
				}
				r := req.(*kmsg.ListOffsetsRequest)
				resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
				for _, rt := range r.Topics {
					st := kmsg.NewListOffsetsResponseTopic()
					st.Topic = rt.Topic
					for _, rp := range rt.Partitions {
						sp := kmsg.NewListOffsetsResponseTopicPartition()
						sp.Partition, sp.ErrorCode = rp.Partition, kerr.OffsetNotAvailable.Code
						st.Partitions = append(st.Partitions, sp)
					}
					resp.Topics = append(resp.Topics, st)
				}
				return resp, nil, true
			})

			cfg := Config{
				Flow: "A->B", Source: "A", Group: "strait-A", FlushInterval: 100 * time.Millisecond,
				AutoOffsetReset: "earliest", ShutdownTimeout: 5 * time.Second,
				IndexTopic: indexTopic, FastPath: true, Idempotent: true, Acks: -1,
			}
			dstOpts := []kgo.Opt(nil)
			var deps Deps
			if mode.shared {
				deps.Share = Share{Owns: func(string, int32) bool { return true }}
			}
			if mode.eos {
				cfg.ReadCommitted = true
				cfg.Transactions = &Transactions{ID: "strait-A-0", Interval: 100 * time.Millisecond, Timeout: 10 * time.Second}
				dstOpts = TransactionOpts()
			}
			deps.Clients = Clients{Source: newClient(t, a), Target: newClient(t, b, dstOpts...), Meta: newClient(t, b),
				IndexReader: newClient(t, b, tail.ClientOpts()...), SyncWriter: newClient(t, b)}
			m := newTestMirror(t, cfg, deps)
			copyHalf(t, m)
			if refused.Load() <= 3 {
				t.Fatalf("the source refused %d listings, the test needs 3", refused.Load())
			}
		})
	}
}

// TestATargetOutageAtTheStartDelaysIt: a mirror begins by reading what the
// target stores (progress, MM2's offsets, the offset index). When the
// target dropped those connections (a broker bounce, a proxy refusing
// them), Run returned the error and the node's data plane stopped, in every
// node of a shared flow at once (the soak's exactly-once mode, seed
// 1796384642710542788, when a rebalance met a refusing target). A passing
// error now delays the start; the flow then copies everything.
func TestATargetOutageAtTheStartDelaysIt(t *testing.T) {
	for _, mode := range []struct {
		name string
		eos  bool
	}{{"at least once", false}, {"exactly once", true}} {
		t.Run(mode.name, func(t *testing.T) {
			const indexTopic = "strait-index.A.internal"
			const takeoverTopic = "mm2-offsets.A.internal"
			a := kafkatest.NewFake(t, kfake.SeedTopics(2, "t"))
			b := kafkatest.NewFake(t, kfake.SeedTopics(2, "A.t"), kfake.SeedTopics(1, indexTopic), kfake.SeedTopics(1, takeoverTopic))
			src := newClient(t, a, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
			produceN(t, src, "t", 100)

			// The target closes the connection of the first read of the
			// stored progress and of the first listing of an internal
			// topic's end.
			var dropped atomic.Int32
			for _, key := range []kmsg.Key{kmsg.OffsetFetch, kmsg.ListOffsets} {
				var n atomic.Int32
				b.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
					b.KeepControl()
					if n.Add(1) > 1 {
						return nil, nil, false
					}
					dropped.Add(1)
					return nil, errors.New("connection dropped by the test"), true
				})
			}

			cfg := Config{
				Flow: "A->B", Source: "A", Group: "strait-A", FlushInterval: 100 * time.Millisecond,
				AutoOffsetReset: "earliest", ShutdownTimeout: 5 * time.Second,
				IndexTopic: indexTopic, TakeoverTopic: takeoverTopic, FastPath: true, Idempotent: true, Acks: -1,
			}
			// One retry, so that the client gives the dropped connections
			// back to the mirror rather than outlasting them itself.
			dstOpts := []kgo.Opt{kgo.RequestRetries(1)}
			if mode.eos {
				cfg.ReadCommitted = true
				cfg.Transactions = &Transactions{ID: "strait-A-0", Interval: 100 * time.Millisecond, Timeout: 10 * time.Second}
				dstOpts = append(dstOpts, TransactionOpts()...)
			}
			m := newTestMirror(t, cfg, Deps{
				Clients: Clients{Source: newClient(t, a), Target: newClient(t, b, dstOpts...), Meta: newClient(t, b),
					IndexReader: newClient(t, b, append(tail.ClientOpts(), kgo.RequestRetries(1))...), SyncWriter: newClient(t, b)},
				Share: Share{Owns: func(string, int32) bool { return true }},
			})
			copyHalf(t, m)
			if dropped.Load() < 2 {
				t.Fatalf("the target dropped %d connections, the test needs 2", dropped.Load())
			}
		})
	}
}

// copyHalf runs m on the topic "t" until both its partitions committed 50
// records, failing at once if Run returned before that, then stops it.
func copyHalf(t *testing.T, m *Mirror) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	m.Update([]Topic{{Source: "t", Remote: "A.t", Partitions: 2}}, nil)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		select {
		case err := <-done:
			t.Fatalf("Run returned before the copy: %v", err)
		default:
		}
		for n := range int32(2) {
			p := m.partition("t", n)
			if p == nil {
				return fmt.Errorf("t[%d] not known", n)
			}
			if _, _, committed, err := p.snapshot(); err != nil || committed < 50 {
				return fmt.Errorf("t[%d] committed %d (err %v)", n, committed, err)
			}
		}
		return nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
