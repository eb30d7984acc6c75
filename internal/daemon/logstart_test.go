package daemon

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
)

// TestRecordsDeletedAfterTheStartListingAreReported: a new partition starts
// at the log start that Strait listed. When records are deleted between
// that listing and the first fetch, the partition stops and names them, on
// both paths; the record path used to let its consumer look the log start
// up again and began, silently, after the deleted records. The deletion
// comes first here, and Strait's own listing is answered as it would have
// been before it.
func TestRecordsDeletedAfterTheStartListingAreReported(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprint("fast=", fast), func(t *testing.T) {
			a, b := kafkatest.NewFakePair(t, kfake.SeedTopics(1, "orders"))
			src := client(t, a)
			recs := make([]*kgo.Record, 100)
			for i := range recs {
				recs[i] = &kgo.Record{Topic: "orders", Value: []byte(fmt.Sprint(i))}
			}
			if err := src.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if _, err := kadm.NewClient(src).DeleteRecords(t.Context(), kadm.Offsets{"orders": {0: {Topic: "orders", Partition: 0, At: 50}}}); err != nil {
				t.Fatal(err)
			}
			// The first earliest-offset listing of orders (Strait's start
			// listing) says 0, as before the deletion; every later one is
			// answered by kfake, with 50.
			var answered atomic.Bool
			a.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
				a.KeepControl()
				lr := req.(*kmsg.ListOffsetsRequest)
				if len(lr.Topics) != 1 || lr.Topics[0].Topic != "orders" || len(lr.Topics[0].Partitions) != 1 ||
					lr.Topics[0].Partitions[0].Timestamp != -2 || answered.Swap(true) {
					return nil, nil, false
				}
				resp := lr.ResponseKind().(*kmsg.ListOffsetsResponse)
				rt := kmsg.NewListOffsetsResponseTopic()
				rt.Topic = "orders"
				rp := kmsg.NewListOffsetsResponseTopicPartition()
				rp.Partition, rp.Offset, rp.Timestamp, rp.LeaderEpoch = 0, 0, -1, 0
				rt.Partitions = append(rt.Partitions, rp)
				resp.Topics = append(resp.Topics, rt)
				return resp, nil, true
			})
			cfg := fakeConfig(t, a, b, fmt.Sprintf("topics = orders\nemit.heartbeats.enabled = false\nstrait.fast.path = %v", fast))
			d, _ := runDaemon(t, cfg)
			adm := kadm.NewClient(client(t, b))
			var lastErr string
			kafkatest.Eventually(t, 30*time.Second, func() error {
				ends, err := adm.ListEndOffsets(t.Context(), "A.orders")
				if err != nil {
					return err
				}
				if o, _ := ends.Lookup("A.orders", 0); o.Offset > 0 {
					t.Fatalf("A.orders has %d records: records 0..49, deleted after Strait listed the log start, were skipped without a word", o.Offset)
				}
				flows := d.Status().Flows
				if len(flows) == 0 {
					return fmt.Errorf("the flow has not started")
				}
				for _, ps := range flows[0].Mirror.Partitions {
					if ps.Error != "" {
						lastErr = ps.Error
						return nil
					}
				}
				return fmt.Errorf("orders[0] has not stopped")
			})
			if !answered.Load() {
				t.Fatal("the test did not answer Strait's start listing: it checks nothing")
			}
			if want := "records 0..49 were deleted before they were replicated"; !strings.Contains(lastErr, want) {
				t.Fatalf("error %q does not say %q", lastErr, want)
			}
		})
	}
}
