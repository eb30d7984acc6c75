//go:build faults

package faults

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
)

var (
	anything  = regexp.MustCompile(``)
	lostRange = regexp.MustCompile(`(?i)deleted|out of range|truncat|gap`)
	recreated = regexp.MustCompile(`(?i)recreat|topic id|incarnation`)
	corrupt   = regexp.MustCompile(`(?i)crc|checksum|corrupt`)
)

// errorTimeout bounds the wait for Strait to report a truncation, recreation or corruption.
const errorTimeout = 45 * time.Second

// errorWithin waits up to timeout for an error as errorAbout finds it, but
// reports a missing error without ending the test, so that the test can also check what
// reached the target.
func (s *strait) errorWithin(t *testing.T, timeout time.Duration, topic string, partition int32, what *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if line := s.errorAbout(topic, partition, what); line != "" {
			return line
		}
		if time.Now().After(deadline) || s.exited() {
			t.Errorf("strait logged no error for %s[%d] matching %s within %v", topic, partition, what, timeout)
			return ""
		}
		time.Sleep(200 * time.Millisecond) // poll interval
	}
}

// TestDeleteRecordsAheadOfLaggingStrait deletes records of a source partition that a
// lagging Strait has not copied yet (its produce requests crawl to the target): the
// partition stops with an error naming it and the lost range, its replica holds a gapless
// prefix and nothing written after the deletion, and the other partitions keep flowing.
func TestDeleteRecordsAheadOfLaggingStrait(t *testing.T) {
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			f := flowA()
			victim, bystander := kafkatest.Name(t, "deleted"), kafkatest.Name(t, "bystander")
			f.src.CreateTopic(t, victim, 2, nil)
			f.src.CreateTopic(t, bystander, 2, nil)
			lv := newLoad(t, f.src, victim, 2, 1000)
			lv.produceTo(t, 40_000, []int32{0}) // 40 MiB: more than Strait buffers
			lv.produceTo(t, 1000, []int32{1})
			lb := newLoad(t, f.src, bystander, 2, 200)
			lb.start(t, 500, 400_000)

			for _, p := range f.dst.Proxies() {
				p.Bandwidth(t, kafkatest.Upstream, 32)
			}
			s := startStrait(t, "run", f.config(t, victim+"|"+bystander, path.props), "--shutdown-timeout", "5s")
			// Strait is copying once it created the replica.
			kafkatest.Eventually(t, time.Minute, func() error {
				if len(f.dst.EndOffsets(t, f.remote(victim), kgo.ReadUncommitted())) == 0 {
					return fmt.Errorf("%s not created yet", f.remote(victim))
				}
				return nil
			})
			time.Sleep(2 * time.Second) // Strait copies at a crawl for a while

			cut := f.src.EndOffsets(t, victim, kgo.ReadUncommitted())[0]
			del := kadm.Offsets{}
			del.Add(kadm.Offset{Topic: victim, Partition: 0, At: cut})
			resps, err := f.src.Admin(t).DeleteRecords(t.Context(), del)
			if err == nil {
				err = resps.Error()
			}
			if err != nil {
				t.Fatalf("deleting %s[0] up to %d: %v", victim, cut, err)
			}
			lv.produceTo(t, 200, []int32{0, 1}) // after the gap
			for _, p := range f.dst.Proxies() {
				p.Heal(t)
			}

			if line := s.errorWithin(t, errorTimeout, victim, 0, lostRange); line != "" {
				t.Logf("the error: %s", line)
			}
			waitCaughtUp(t, f, bystander, nil, recoverTimeout)
			waitCaughtUp(t, f, victim, []int32{1}, recoverTimeout)
			lb.stop(t)
			waitCaughtUp(t, f, bystander, nil, recoverTimeout)
			t.Logf("exit code %d after SIGTERM", s.stop(t, syscall.SIGTERM, time.Minute))

			copied := prefix(t, f.remote(victim)+"[0]", f.dst.ReadAll(t, f.remote(victim), kgo.ReadCommitted())[0], lv, cut)
			if copied >= cut {
				t.Fatalf("test bed: Strait had copied all %d records of %s[0] before they were deleted", cut, victim)
			}
			t.Logf("%s[0]: %d of %d records copied (all fetched before the deletion of 0..%d), none after", victim, copied, cut+100, cut-1)
			verifyPartitions(t, f, victim, []int32{1}, nil)
			verifyTopic(t, f, bystander, nil)
		})
	}
}

// TestTopicRecreatedWhileRunning deletes a source topic Strait has copied and creates it
// again with new records: every partition of it stops with an error naming the topic, the
// replica keeps exactly the first incarnation (no record of the second mixed in), and
// another topic keeps flowing.
func TestTopicRecreatedWhileRunning(t *testing.T) {
	f := flowA()
	victim, bystander := kafkatest.Name(t, "recreated"), kafkatest.Name(t, "bystander")
	const partitions = 3
	f.src.CreateTopic(t, victim, partitions, nil)
	f.src.CreateTopic(t, bystander, 2, nil)
	first := newLoad(t, f.src, victim, partitions, 100)
	first.tag = "first:"
	first.produce(t, 3000)
	lb := newLoad(t, f.src, bystander, 2, 200)
	lb.start(t, 500, 400_000)
	s := startStrait(t, "run", f.config(t, victim+"|"+bystander), "--shutdown-timeout", "5s")
	waitCaughtUp(t, f, victim, nil, time.Minute)

	adm := f.src.Admin(t)
	if _, err := adm.DeleteTopic(t.Context(), victim); err != nil {
		t.Fatalf("deleting %s: %v", victim, err)
	}
	kafkatest.Eventually(t, time.Minute, func() error {
		// TOPIC_ALREADY_EXISTS until the deletion is done.
		if _, err := adm.CreateTopic(t.Context(), partitions, 1, nil, victim); err != nil {
			return fmt.Errorf("creating %s again: %w", victim, err)
		}
		return nil
	})
	second := newLoad(t, f.src, victim, partitions, 100)
	second.tag = "second:"
	kafkatest.Eventually(t, time.Minute, func() error {
		// The new topic's partitions may need a moment for leaders.
		if n := len(f.src.EndOffsets(t, victim, kgo.ReadUncommitted())); n != partitions {
			return fmt.Errorf("%s has %d of %d partitions again", victim, n, partitions)
		}
		return nil
	})
	second.produce(t, 4500)

	for p := range int32(partitions) {
		if line := s.errorWithin(t, errorTimeout, victim, p, recreated); line != "" && p == 0 {
			t.Logf("the error: %s", line)
		}
	}
	lb.stop(t)
	waitCaughtUp(t, f, bystander, nil, recoverTimeout)
	t.Logf("exit code %d after SIGTERM", s.stop(t, syscall.SIGTERM, time.Minute))

	mixed := 0
	for p, recs := range f.dst.ReadAll(t, f.remote(victim), kgo.ReadCommitted()) {
		var firsts []*kgo.Record
		for _, r := range recs {
			if bytes.HasPrefix(r.Value, []byte(second.tag)) {
				mixed++
			} else {
				firsts = append(firsts, r)
			}
		}
		if n := prefix(t, fmt.Sprintf("%s[%d]", f.remote(victim), p), firsts, first, 1000); n != 1000 {
			t.Errorf("%s[%d] holds %d records of the first incarnation, want all 1000", f.remote(victim), p, n)
		}
	}
	if mixed > 0 {
		t.Errorf("%s holds %d records of the second incarnation after the first one's: the incarnations are mixed", f.remote(victim), mixed)
	}
	verifyTopic(t, f, bystander, nil)
}

// TestCorruptRecordInFetch flips one byte inside a record value in the source broker's
// segment file. The broker serves the bytes as they are on disk, so Strait's fetch
// response carries a batch whose CRC does not match: the partition must stop with a CRC
// error, nothing from the corrupt batch on must reach the target (a copy would get a new,
// valid CRC and hide the damage), and the other partition keeps flowing.
func TestCorruptRecordInFetch(t *testing.T) {
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			f := flowA()
			topic := kafkatest.Name(t, "corrupt")
			f.src.CreateTopic(t, topic, 2, nil)
			l := newLoad(t, f.src, topic, 2, 120, kgo.ProducerBatchCompression(kgo.NoCompression()))
			// Ten batches of 20 records in partition 0; the sixth (records 100..119) is damaged.
			for range 10 {
				l.produceTo(t, 20, []int32{0})
			}
			l.produceTo(t, 200, []int32{1})
			const damaged = 100
			corruptValue(t, f.src.Leader(t, topic, 0), topic, 0, []byte(fmt.Sprintf("%s/0/%d/", topic, damaged+10)))

			s := startStrait(t, "run", f.config(t, topic, path.props), "--shutdown-timeout", "5s")
			if line := s.errorWithin(t, errorTimeout, topic, 0, corrupt); line != "" {
				t.Logf("the error: %s", line)
			}
			waitCaughtUp(t, f, topic, []int32{1}, recoverTimeout)
			t.Logf("exit code %d after SIGTERM", s.stop(t, syscall.SIGTERM, time.Minute))

			copied := prefix(t, f.remote(topic)+"[0]", f.dst.ReadAll(t, f.remote(topic), kgo.ReadCommitted())[0], l, damaged)
			t.Logf("%s[0]: %d records copied before the corrupt batch", topic, copied)
			verifyPartitions(t, f, topic, []int32{1}, nil)
		})
	}
}

// corruptValue flips a bit of the byte after marker, a value prefix of one record, in the
// log segment of topic's partition on broker b.
func corruptValue(t *testing.T, b *kafkatest.Broker, topic string, partition int32, marker []byte) {
	t.Helper()
	dir := filepath.Join(b.Dir, "data", fmt.Sprintf("%s-%d", topic, partition))
	segs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segment of %s[%d] in %s: %v", topic, partition, dir, err)
	}
	for _, seg := range segs {
		data, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(data, marker)
		if i < 0 {
			continue
		}
		at := int64(i + len(marker))
		fd, err := os.OpenFile(seg, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer fd.Close()
		if _, err := fd.WriteAt([]byte{data[at] ^ 0x20}, at); err != nil {
			t.Fatalf("corrupting %s: %v", seg, err)
		}
		t.Logf("flipped a bit at byte %d of %s (%q -> %q)", at, seg, data[at], data[at]^0x20)
		return
	}
	t.Fatalf("no segment in %s holds %q", dir, marker)
}
