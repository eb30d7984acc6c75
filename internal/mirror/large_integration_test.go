//go:build integration

package mirror_test

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/daemon"
	"strait/internal/kafkatest"
	"strait/internal/mirror"
	"strait/internal/verify"
)

// TestBatchLargerThanTargetTopic: the source topic accepts 4 MiB batches,
// the remote topic (made by an operator, not by Strait) only the broker's
// default 1 MiB, which config sync keeps because the file excludes
// max.message.bytes (config sync would otherwise raise it to the source's,
// as MM2 does). Forwarded batches are refused, so the partition continues
// on the record path, which writes the same records in batches the target
// accepts; a single record larger than the target's limit stops its
// partition with an error that names its offset, its size, the limit and
// the fix, and it is never skipped.
func TestBatchLargerThanTargetTopic(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "large")
	big := "4194304"
	a.CreateTopic(t, topic, 2, map[string]*string{"max.message.bytes": &big})
	b.CreateTopic(t, "A."+topic, 2, nil) // the target's default limit, about 1 MiB

	cl := a.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(4<<20),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(50*time.Millisecond))
	value := func(n int) []byte {
		v := make([]byte, n)
		_, _ = rand.Read(v)
		return v
	}
	var recs []*kgo.Record
	for i := 0; i < 40; i++ { // batches of up to 4 MiB of 200 kB records on both partitions
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: value(200_000)})
	}
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// Partition 1 then gets one record of 1.5 MB and a small one after it.
	tooBig := &kgo.Record{Topic: topic, Partition: 1, Value: value(1_500_000)}
	if err := cl.ProduceSync(t.Context(), tooBig, &kgo.Record{Topic: topic, Partition: 1, Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	d := runDaemon(t, "topics = "+topic+"\nconfig.properties.exclude = max\\.message\\.bytes")
	var perr string
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		for _, p := range partitionsOf(d) {
			if p.Topic == topic && p.Partition == 1 && p.Error != "" {
				perr = p.Error
				return nil
			}
		}
		return fmt.Errorf("partition 1 has not stopped on its 1.5 MB record yet")
	})
	for _, want := range []string{fmt.Sprintf("offset %d", tooBig.Offset), "1500000 bytes", "max.message.bytes=1048588", "raise max.message.bytes"} {
		if !strings.Contains(perr, want) {
			t.Errorf("partition 1's error %q does not say %q", perr, want)
		}
	}
	// Partition 0 is copied to its end, partition 1 up to the big record,
	// and progress says so.
	kafkatest.Eventually(t, time.Minute, func() error {
		stored, err := b.Admin(t).FetchOffsets(t.Context(), "strait-A")
		if err != nil {
			return err
		}
		for p, want := range []int64{20, 20} {
			if s, _ := stored.Lookup("A."+topic, int32(p)); s.At != want {
				return fmt.Errorf("%s[%d]: progress %d, want %d", topic, p, s.At, want)
			}
		}
		return nil
	})
	src := a.ReadAll(t, topic, kgo.ReadCommitted())
	dst := b.ReadAll(t, "A."+topic, kgo.ReadCommitted())
	if rep := verify.Compare(0, src[0], dst[0]); !rep.OK() || rep.Duplicates != 0 {
		t.Errorf("partition 0: %v", rep)
	}
	if len(dst[1]) != 20 {
		t.Fatalf("partition 1 holds %d records on the target, want the 20 before the 1.5 MB one (and nothing after it)", len(dst[1]))
	}
	if rep := verify.Compare(1, src[1][:20], dst[1]); !rep.OK() || rep.Duplicates != 0 {
		t.Errorf("partition 1: %v", rep)
	}
	for _, p := range partitionsOf(d) {
		if p.Topic == topic && p.Path != "record" {
			t.Errorf("%s[%d] is on the %s path; its batches are larger than the target accepts", p.Topic, p.Partition, p.Path)
		}
	}
}

// partitionsOf returns the daemon's partition statuses, none before it runs.
func partitionsOf(d *daemon.Daemon) []mirror.PartitionStatus {
	st := d.Status()
	if len(st.Flows) == 0 {
		return nil
	}
	return st.Flows[0].Mirror.Partitions
}
