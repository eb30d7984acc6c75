package index_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/index"
	"strait/internal/kafkatest"
	"strait/internal/offsets"
	"strait/internal/tail"
)

// TestReaderPartitionsAsLoad: the maps a Reader gives equal index.Load's,
// at start and while it follows segments that grow, tombstones and a new
// incarnation of a source topic; before its first read it gives none (the
// checkpoints of an active-active flow invert the reverse flow's maps).
func TestReaderPartitionsAsLoad(t *testing.T) {
	const topic = "strait-index.B.internal"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	writer := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	write := func(updates ...index.Update) {
		t.Helper()
		if err := index.Write(t.Context(), writer, topic, updates); err != nil {
			t.Fatal(err)
		}
	}
	p0, p1 := index.TP{Topic: "orders", Partition: 0}, index.TP{Topic: "orders", Partition: 1}
	seg := func(tp index.TP, id byte, src, tgt, n, covered int64) index.Update {
		return index.Update{TP: tp, TopicID: [16]byte{id}, Change: offsets.Change{Segment: offsets.Segment{Src: src, Tgt: tgt, Len: n}, Covered: covered, Start: 0}}
	}
	tombstone := func(tp index.TP, id byte, tgt int64) index.Update {
		return index.Update{TP: tp, TopicID: [16]byte{id}, Change: offsets.Change{Segment: offsets.Segment{Tgt: tgt}, Deleted: true, Covered: -1, Start: -1}}
	}
	write(seg(p0, 1, 0, 50, 50, 150), seg(p0, 1, 100, 120, 10, 150), seg(p1, 1, 0, 0, 10, 10))

	f := index.NewReader(client(t, c, tail.ClientOpts()...), topic, slog.New(slog.DiscardHandler))
	if f.Ready() || f.Partition("orders", 0) != nil {
		t.Fatal("a reader that has read nothing gives a map")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	sameAsLoad := func() error {
		if !f.Ready() {
			return fmt.Errorf("not ready")
		}
		loaded, err := index.Load(t.Context(), client(t, c, tail.ClientOpts()...), topic)
		if err != nil {
			return err
		}
		for _, tp := range []index.TP{p0, p1} {
			want, got := loaded.Parts[tp], f.Partition(tp.Topic, tp.Partition)
			if (want == nil) != (got == nil) {
				return fmt.Errorf("%v: reader %v, Load %v", tp, got, want)
			}
			if want != nil && (!slices.Equal(got.Segments(), want.Segments()) || got.Covered() != want.Covered()) {
				return fmt.Errorf("%v: reader %v covered %d, Load %v covered %d", tp, got.Segments(), got.Covered(), want.Segments(), want.Covered())
			}
		}
		return nil
	}
	kafkatest.Eventually(t, 10*time.Second, sameAsLoad)

	write(seg(p0, 1, 0, 50, 60, 160), tombstone(p0, 1, 120), seg(p1, 2, 0, 5, 3, 3))
	kafkatest.Eventually(t, 10*time.Second, func() error {
		if err := sameAsLoad(); err != nil {
			return err
		}
		if segs := f.Partition("orders", 1).Segments(); len(segs) != 1 || segs[0].Tgt != 5 {
			return fmt.Errorf("orders[1] after a new incarnation: %v", segs)
		}
		return nil
	})
}

func client(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	return kafkatest.FakeClient(t, c, opts...)
}
