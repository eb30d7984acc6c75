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

// errorsWithin waits up to timeout for an error, as errorAbout finds them, for each of the
// partitions of topic, and returns the first one found. Unlike a Fatal wait it reports
// the partitions without an error and goes on, so that the test also checks what reached
// the target.
func (s *strait) errorsWithin(t *testing.T, timeout time.Duration, topic string, partitions []int32, what *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	found := map[int32]string{}
	for {
		for _, p := range partitions {
			if found[p] == "" {
				found[p] = s.errorAbout(topic, p, what)
			}
		}
		var missing []int32
		for _, p := range partitions {
			if found[p] == "" {
				missing = append(missing, p)
			}
		}
		if len(missing) == 0 {
			return found[partitions[0]]
		}
		if time.Now().After(deadline) || s.exited() {
			t.Errorf("strait logged no error matching %s for partitions %v of %s within %v", what, missing, topic, timeout)
			for _, p := range partitions {
				if found[p] != "" {
					return found[p]
				}
			}
			return ""
		}
		time.Sleep(200 * time.Millisecond) // poll interval
	}
}

// TestDeleteRecordsAheadOfLaggingStrait deletes records of a source partition that a
// lagging Strait has not copied yet, while its produce requests crawl to the target: far
// behind (more records than Strait buffers), or before its first acknowledgement (the
// partition's backlog all fetched, fetches slowed, then more records written and deleted).
// Unless Strait happened to hold every deleted record already, the partition must stop
// with an error naming it and the lost range; its replica must hold a gapless run of the
// source's records and nothing written after the deletion; the other partitions keep
// flowing.
func TestDeleteRecordsAheadOfLaggingStrait(t *testing.T) {
	for _, tc := range []struct {
		name       string
		backlog    int  // records of 1 KiB in the victim partition before Strait starts
		added      int  // records added just before the deletion
		beforeAck  bool // slow Strait's fetches before adding and deleting
		mustBeLost bool // Strait cannot have fetched every deleted record
	}{
		{name: "far behind", backlog: 40_000, mustBeLost: true}, // 40 MiB: more than Strait buffers
		{name: "before the first ack", backlog: 200, added: 2000, beforeAck: true},
	} {
		for _, path := range paths {
			t.Run(tc.name+"/"+path.name, func(t *testing.T) {
				f := flowA()
				victim, bystander := kafkatest.Name(t, "deleted"), kafkatest.Name(t, "bystander")
				f.src.CreateTopic(t, victim, 2, nil)
				f.src.CreateTopic(t, bystander, 2, nil)
				lv := newLoad(t, f.src, victim, 2, 1000)
				lv.produceTo(t, tc.backlog, []int32{0})
				lv.produceTo(t, 200, []int32{1})
				lb := newLoad(t, f.src, bystander, 2, 200)
				lb.start(t, 500, 400_000)

				crawl := int64(32)
				if tc.beforeAck {
					crawl = 1 // the first produce request never completes before the heal
				}
				for _, p := range f.dst.Proxies() {
					p.Bandwidth(t, kafkatest.Upstream, crawl)
				}
				s := startStrait(t, "run", f.config(t, victim+"|"+bystander, path.props), "--shutdown-timeout", "5s", "--log-level", "debug")
				// Strait is copying once it decided where the victim starts:
				// the deletion must come after that, or Strait rightly starts
				// at the log start it then finds.
				kafkatest.Eventually(t, time.Minute, func() error {
					if !s.logged("partition starts", victim, 0) {
						return fmt.Errorf("%s[0] not started yet", victim)
					}
					return nil
				})
				time.Sleep(2 * time.Second) // Strait fetches and crawls for a while
				if tc.beforeAck {
					// A fetch now reaches the broker every 2.5 s or so: the next one after the
					// deletion asks for an offset below the new log start.
					for _, p := range f.src.Proxies() {
						p.Latency(t, kafkatest.Both, time.Second, 0)
					}
					lv.produceTo(t, tc.added, []int32{0})
				}

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
				lv.produceTo(t, 200, []int32{0, 1}) // after the deletion
				for _, p := range append(f.src.Proxies(), f.dst.Proxies()...) {
					p.Heal(t)
				}

				// Everything not deleted reaches the target while the victim is stopped.
				waitCaughtUp(t, f, victim, []int32{1}, recoverTimeout)
				lb.stop(t)
				waitCaughtUp(t, f, bystander, nil, recoverTimeout)
				// The victim either stops with an error or, if Strait held every deleted
				// record, catches up.
				end := f.src.EndOffsets(t, victim, kgo.ReadUncommitted())[0]
				var line string
				kafkatest.Eventually(t, errorTimeout, func() error {
					if line = s.errorAbout(victim, 0, lostRange); line != "" {
						return nil
					}
					if got, err := storedProgress(t, f, victim); err == nil && got[0] >= end {
						return nil
					}
					return fmt.Errorf("%s[0] has neither stopped with an error matching %s nor caught up", victim, lostRange)
				})
				t.Logf("exit code %d after SIGTERM", s.stop(t, syscall.SIGTERM, time.Minute))
				n, ok := prefix(t, f.remote(victim)+"[0]", f.dst.ReadAll(t, f.remote(victim), kgo.ReadCommitted())[0], lv)
				switch {
				case !ok:
					t.Errorf("%s[0]: the replica has a gap or strangers (see above); error logged: %q", victim, line)
				case n >= cut && tc.mustBeLost:
					t.Fatalf("test bed: Strait had copied all %d records of %s[0] before they were deleted", cut, victim)
				case line != "" && n >= cut:
					t.Errorf("%s[0]: an error although all %d records were copied: %s", victim, n, line)
				case line != "":
					t.Logf("the error: %s", line)
					t.Logf("%s[0]: records 0..%d copied (fetched before the deletion), %d..%d lost to it and reported, none of the 100 written after", victim, n-1, n, cut-1)
				case n < cut:
					t.Errorf("%s[0]: records %d..%d were deleted before they were copied, and Strait said nothing", victim, n, cut-1)
				default:
					t.Logf("Strait had fetched all %d records of %s[0] before the deletion: nothing was lost, %d copied", cut, victim, n)
				}
				verifyPartitions(t, f, victim, []int32{1}, nil)
				verifyTopic(t, f, bystander)
			})
		}
	}
}

// TestTopicRecreatedWhileRunning deletes a source topic Strait has copied and creates it
// again with new records, at once or after Strait saw it gone: every partition of it stops
// with an error naming the topic, the replica keeps exactly the first incarnation (no
// record of the second mixed in), and another topic keeps flowing.
func TestTopicRecreatedWhileRunning(t *testing.T) {
	for _, tc := range []struct {
		name string
		gone time.Duration // how long the topic stays deleted
	}{
		{name: "at once"},
		{name: "gone for a while", gone: 3 * time.Second}, // three topic refreshes
	} {
		t.Run(tc.name, func(t *testing.T) { recreate(t, tc.gone) })
	}
}

func recreate(t *testing.T, gone time.Duration) {
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
	time.Sleep(gone) // the topic stays deleted
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

	if line := s.errorsWithin(t, errorTimeout, victim, []int32{0, 1, 2}, recreated); line != "" {
		t.Logf("the error: %s", line)
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
		if n, _ := prefix(t, fmt.Sprintf("%s[%d]", f.remote(victim), p), firsts, first); n != 1000 {
			t.Errorf("%s[%d] holds %d records of the first incarnation, want all 1000", f.remote(victim), p, n)
		}
	}
	if mixed > 0 {
		t.Errorf("%s holds %d records of the second incarnation after the first one's: the incarnations are mixed", f.remote(victim), mixed)
	}
	verifyTopic(t, f, bystander)
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
			if line := s.errorsWithin(t, errorTimeout, topic, []int32{0}, corrupt); line != "" {
				t.Logf("the error: %s", line)
			}
			waitCaughtUp(t, f, topic, []int32{1}, recoverTimeout)
			t.Logf("exit code %d after SIGTERM", s.stop(t, syscall.SIGTERM, time.Minute))

			copied, _ := prefix(t, f.remote(topic)+"[0]", f.dst.ReadAll(t, f.remote(topic), kgo.ReadCommitted())[0], l)
			if copied > damaged {
				t.Errorf("%s[0]: records up to %d copied: the corrupt batch (records %d..%d) was copied or skipped", topic, copied-1, damaged, damaged+19)
			} else {
				t.Logf("%s[0]: %d records copied before the corrupt batch", topic, copied)
			}
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
