package daemon

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
)

// TestDeadTargetBrokerStallsOnlyItsPartitions: one target broker refuses
// every write of the remote topic (as a dead or leaderless broker would,
// forever); the partitions it leads stall, and those on the other broker
// still copy their whole backlog, on both paths, with a buffer.memory far
// below the stalled backlog.
func TestDeadTargetBrokerStallsOnlyItsPartitions(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprint("fast=", fast), func(t *testing.T) {
			a, _ := kafkatest.NewFakePair(t, kfake.SeedTopics(8, "orders"))
			b, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.SeedTopics(8, "A.orders"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(b.Close)
			// Partitions 0 to 5 on the broker that will refuse writes, 6
			// and 7 on the healthy one.
			for p, node := range []int32{0, 0, 0, 0, 0, 0, 1, 1} {
				if err := b.MoveTopicPartition("A.orders", int32(p), node); err != nil {
					t.Fatal(err)
				}
			}
			good := int32(1)
			md, err := kadm.NewClient(client(t, b)).Metadata(t.Context(), "A.orders")
			if err != nil {
				t.Fatal(err)
			}
			ordersID := md.Topics["A.orders"].ID
			b.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
				b.KeepControl()
				if b.CurrentNode() == good {
					return nil, nil, false
				}
				pr := req.(*kmsg.ProduceRequest)
				resp := pr.ResponseKind().(*kmsg.ProduceResponse)
				hit := false
				for _, rt := range pr.Topics {
					st := kmsg.NewProduceResponseTopic()
					st.Topic, st.TopicID = rt.Topic, rt.TopicID
					for _, rp := range rt.Partitions {
						sp := kmsg.NewProduceResponseTopicPartition()
						sp.Partition = rp.Partition
						sp.ErrorCode = kerr.NotLeaderForPartition.Code
						st.Partitions = append(st.Partitions, sp)
					}
					hit = hit || rt.Topic == "A.orders" || rt.TopicID == ordersID
					resp.Topics = append(resp.Topics, st)
				}
				if !hit {
					return nil, nil, false // Strait's own topics still work
				}
				return resp, nil, true
			})

			src := client(t, a, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(64<<10), kgo.ProducerBatchCompression(kgo.NoCompression()))
			payload := make([]byte, 1000)
			var recs []*kgo.Record
			for i := 0; i < 8*1000; i++ { // 1 MB per partition
				recs = append(recs, &kgo.Record{Topic: "orders", Partition: int32(i % 8), Value: payload})
			}
			if err := src.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			cfg := fakeConfig(t, a, b, fmt.Sprintf("topics = orders\nemit.heartbeats.enabled = false\nB.producer.buffer.memory = 262144\nA.consumer.max.partition.fetch.bytes = 131072\nstrait.fast.path = %v", fast))
			d, stop := runDaemon(t, cfg)
			defer func() {
				if t.Failed() {
					for _, ps := range d.Status().Flows[0].Mirror.Partitions {
						t.Logf("%+v", ps)
					}
				}
			}()
			adm := kadm.NewClient(client(t, b))
			kafkatest.Eventually(t, 30*time.Second, func() error {
				ends, err := adm.ListEndOffsets(t.Context(), "A.orders")
				if err != nil {
					return err
				}
				for _, p := range []int32{6, 7} {
					if o, _ := ends.Lookup("A.orders", p); o.Offset < 1000 {
						return fmt.Errorf("A.orders[%d] on the healthy broker has %d of 1000 records", p, o.Offset)
					}
				}
				return nil
			})
			ends, err := adm.ListEndOffsets(t.Context(), "A.orders")
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []int32{0, 1, 2, 3, 4, 5} {
				if o, _ := ends.Lookup("A.orders", p); o.Offset != 0 {
					t.Fatalf("A.orders[%d] on the refusing broker has %d records: the fault did not hold", p, o.Offset)
				}
			}
			began := time.Now()
			if err := stop(); err != nil {
				t.Logf("stop: %v", err) // the stalled partitions cannot flush
			}
			t.Logf("stopped in %v", time.Since(began))
		})
	}
}
