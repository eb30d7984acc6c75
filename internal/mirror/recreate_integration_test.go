//go:build integration

package mirror_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

// produceTagged writes n records to each partition, valued "tag-p-i".
func produceTagged(t *testing.T, topic string, partitions int32, n int, tag string) {
	t.Helper()
	cl := env.Clusters[0].Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	var recs []*kgo.Record
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < n; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%s-%d-%d", tag, p, i)})
		}
	}
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestRecreatedTopicStops deletes and recreates a source topic while
// Strait copies it, on both paths, at once and after Strait saw the topic
// gone. The new incarnation must not be read at the old one's offsets, nor
// copied after the old one's records: every partition stops with an error
// that says the topic was recreated, and the target keeps exactly the old
// incarnation.
func TestRecreatedTopicStops(t *testing.T) {
	for _, c := range []struct {
		path     string
		seenGone bool
	}{{"fast", false}, {"record", false}, {"fast", true}, {"record", true}} {
		path := c.path
		t.Run(fmt.Sprintf("%s/seen gone %v", c.path, c.seenGone), func(t *testing.T) {
			a, b := env.Clusters[0], env.Clusters[1]
			topic := kafkatest.Name(t, "recreate")
			const parts, before, after = 2, 1000, 1500
			a.CreateTopic(t, topic, parts, nil)
			produceTagged(t, topic, parts, before, "old")
			d := runDaemon(t, fmt.Sprintf("topics = %s\nstrait.fast.path = %v", topic, path == "fast"))
			waitProgress(t, topic)

			adm := a.Admin(t)
			if _, err := adm.DeleteTopic(t.Context(), topic); err != nil {
				t.Fatal(err)
			}
			kafkatest.Eventually(t, time.Minute, func() error {
				md, err := adm.Metadata(t.Context(), topic)
				if err != nil {
					return err
				}
				if td, ok := md.Topics[topic]; ok && td.Err == nil {
					return fmt.Errorf("topic %s still exists", topic)
				} else if ok && !strings.Contains(fmt.Sprint(td.Err), kerr.UnknownTopicOrPartition.Message) {
					return td.Err
				}
				return nil
			})
			if c.seenGone {
				kafkatest.Eventually(t, time.Minute, func() error {
					for _, p := range partitionsOf(d) {
						if p.Topic == topic {
							return fmt.Errorf("%s is still replicated", topic)
						}
					}
					return nil
				})
			}
			a.CreateTopic(t, topic, parts, nil)
			produceTagged(t, topic, parts, after, "new")

			kafkatest.Eventually(t, time.Minute, func() error {
				stopped := 0
				for _, p := range partitionsOf(d) {
					if p.Topic == topic && strings.Contains(p.Error, "deleted and recreated") {
						stopped++
					}
				}
				if stopped < parts {
					return fmt.Errorf("%d of %d partitions stopped for the recreation", stopped, parts)
				}
				return nil
			})
			dst := b.ReadAll(t, "A."+topic, kgo.ReadUncommitted())
			for p := int32(0); p < parts; p++ {
				if len(dst[p]) != before {
					t.Errorf("A.%s[%d] holds %d records, want the old incarnation's %d", topic, p, len(dst[p]), before)
				}
				for i, r := range dst[p] {
					if want := fmt.Sprintf("old-%d-%d", p, i); string(r.Value) != want {
						t.Fatalf("A.%s[%d] offset %d is %q, want %q: incarnations mixed", topic, p, r.Offset, r.Value, want)
					}
				}
			}
		})
	}
}
