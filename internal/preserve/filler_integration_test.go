//go:build integration

package preserve

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/kafkatest"
	"strait/internal/mirror/fastpath"
)

var env *kafkatest.Env

func TestMain(m *testing.M) { os.Exit(kafkatest.Run(m, 1, &env)) }

// newFiller is a Filler with a producer of a new transactional id.
func newFiller(t *testing.T, c *kafkatest.Cluster) *Filler {
	t.Helper()
	txn := fastpath.Transactions{ID: kafkatest.Name(t, "filler"), Timeout: time.Minute}
	p, err := fastpath.NewProducer(t.Context(), c.Client(t, fastpath.TransactionOpts()...), txn)
	if err != nil {
		t.Fatal(err)
	}
	return NewFiller(p)
}

// bounds returns the partition's log start and end as the broker reports them.
func bounds(t *testing.T, c *kafkatest.Cluster, topic string, partition int32) (int64, int64) {
	t.Helper()
	return c.StartOffsets(t, topic)[partition], c.EndOffsets(t, topic, kgo.ReadUncommitted())[partition]
}

// visible counts the records consumers of each isolation level read.
func visible(t *testing.T, c *kafkatest.Cluster, topic string) (committed, uncommitted int) {
	t.Helper()
	return kafkatest.Count(t, c.Seeds(), topic, kgo.ReadCommitted()), kafkatest.Count(t, c.Seeds(), topic, kgo.ReadUncommitted())
}

// commitOne writes one record to the partition in a committed transaction of id.
func commitOne(t *testing.T, c *kafkatest.Cluster, id, topic string, partition int32) {
	t.Helper()
	cl := c.Client(t, kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Partition: partition, Value: []byte("t")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(t.Context(), kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
}

// produce writes one plain record to partition 0 and returns its offset.
func produce(t *testing.T, c *kafkatest.Cluster, topic, value string) int64 {
	t.Helper()
	r, err := c.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner())).ProduceSync(t.Context(), &kgo.Record{Topic: topic, Partition: 0, Value: []byte(value)}).First()
	if err != nil {
		t.Fatal(err)
	}
	return r.Offset
}

// TestStartAtAMillion: an empty remote partition made to start at 1,000,000, the
// source's log start after retention, holds nothing any consumer reads, starts and ends
// there, and takes the next record at 1,000,000. A second call changes nothing.
func TestStartAtAMillion(t *testing.T) {
	c := env.Clusters[0]
	topic := kafkatest.Name(t, "start")
	c.CreateTopic(t, topic, 1, nil)
	f := newFiller(t, c)
	const logStart = 1_000_000
	startEmptyAt(t, c, f, topic, logStart, logStart)
	if off := produce(t, c, topic, "first"); off != logStart {
		t.Errorf("the first record landed at %d, want %d", off, logStart)
	}
}

// TestStartAtResumesAnEmptyPartition: a start that got part of the way (here, to 2,500 of
// 6,000, in batches of 1000) leaves the partition empty, and the next call completes it
// from there; nothing is read at either isolation level.
func TestStartAtResumesAnEmptyPartition(t *testing.T) {
	c := env.Clusters[0]
	topic := kafkatest.Name(t, "resume")
	c.CreateTopic(t, topic, 1, nil)
	f := newFiller(t, c)
	f.perBatch = 1000
	startEmptyAt(t, c, f, topic, 2500, 6000)
}

// TestStartAtCompletesAFillNotYetDeleted: a node killed after a start's filler batch and
// before it moved the log start past it leaves filler below the log end. The next
// owner's filler (a new epoch) completes the start: here once where the fill had reached
// the start, once half way to it. TestPreservedOffsetsThroughKills found the first.
func TestStartAtCompletesAFillNotYetDeleted(t *testing.T) {
	c := env.Clusters[0]
	topic := kafkatest.Name(t, "cut")
	c.CreateTopic(t, topic, 1, nil)
	killed := newFiller(t, c)
	killed.perBatch = 1000
	if err := killed.Fill(t.Context(), fastpath.Gap{Topic: topic, From: 0, To: 2500}); err != nil {
		t.Fatal(err)
	}
	next := newFiller(t, c)
	next.perBatch = 1000
	startEmptyAt(t, c, next, topic, 2500)
	if err := next.Fill(t.Context(), fastpath.Gap{Topic: topic, From: 2500, To: 4000}); err != nil {
		t.Fatal(err)
	}
	startEmptyAt(t, c, next, topic, 6000)
}

// startEmptyAt calls f.StartAt for partition 0 of topic at each offset in turn, and checks
// that the partition then starts and ends there, and that no consumer reads anything.
func startEmptyAt(t *testing.T, c *kafkatest.Cluster, f *Filler, topic string, at ...int64) {
	t.Helper()
	for _, a := range at {
		if err := f.StartAt(t.Context(), Start{Topic: topic, At: a}); err != nil {
			t.Fatal(err)
		}
		if s, e := bounds(t, c, topic, 0); s != a || e != a {
			t.Fatalf("the partition starts at %d and ends at %d, want both at %d", s, e, a)
		}
	}
	if rc, ru := visible(t, c, topic); rc != 0 || ru != 0 {
		t.Errorf("consumers read %d (read_committed) and %d (read_uncommitted) records, want none", rc, ru)
	}
}

// TestFillInSeveralBatches fills gaps of one offset (the marker alone) and of several
// batches (their sequence numbers follow each other) after plain records:
// read_committed consumers read only the plain records, at the offsets they were
// written, and each gap ends where asked.
func TestFillInSeveralBatches(t *testing.T) {
	c := env.Clusters[0]
	topic := kafkatest.Name(t, "gaps")
	c.CreateTopic(t, topic, 1, nil)
	f := newFiller(t, c)
	f.perBatch = 1000
	want := map[int64]string{}
	end := int64(0)
	for i, gap := range []int64{1, 2, 2500, 1, 1001} {
		v := fmt.Sprint("r", i)
		if off := produce(t, c, topic, v); off != end {
			t.Fatalf("record %s landed at %d, want %d", v, off, end)
		}
		want[end] = v
		if err := f.Fill(t.Context(), fastpath.Gap{Topic: topic, From: end + 1, To: end + 1 + gap}); err != nil {
			t.Fatalf("filling a gap of %d after offset %d: %v", gap, end, err)
		}
		end += 1 + gap
		if _, e := bounds(t, c, topic, 0); e != end {
			t.Fatalf("after a gap of %d the partition ends at %d, want %d", gap, e, end)
		}
	}
	got := map[int64]string{}
	for _, parts := range c.ReadAll(t, topic, kgo.ReadCommitted()) {
		for _, r := range parts {
			got[r.Offset] = string(r.Value)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("read_committed reads %v, want %v", got, want)
	}
}

// TestFillStopsAtAForeignWrite: a partition written by something else than the filler
// expects is a misalignment naming both offsets (the filler lands past the foreign
// record, aborted), and read_committed consumers still read the foreign record alone;
// the other partition's gap is filled. A retry reads where the partition ends
// first. StartAt refuses a partition that holds a record consumers read, plain or
// committed.
func TestFillStopsAtAForeignWrite(t *testing.T) {
	c := env.Clusters[0]
	topic := kafkatest.Name(t, "foreign")
	c.CreateTopic(t, topic, 2, nil)
	produce(t, c, topic, "foreign")
	f := newFiller(t, c)
	errs := []error{
		f.Fill(t.Context(), fastpath.Gap{Topic: topic, Partition: 0, From: 0, To: 10}),
		f.Fill(t.Context(), fastpath.Gap{Topic: topic, Partition: 1, From: 0, To: 10}),
	}
	if err := errs[0]; !errors.Is(err, fastpath.ErrMisaligned) || !strings.Contains(err.Error(), "landed at offset 1, not 0") {
		t.Errorf("filling from 0 over a foreign record: %v, want a misalignment naming offsets 1 and 0", err)
	}
	if errs[1] != nil {
		t.Errorf("the gap of the other partition: %v", errs[1])
	}
	_, end := bounds(t, c, topic, 0)
	err := f.Fill(t.Context(), fastpath.Gap{Topic: topic, Partition: 0, From: 0, To: 10, Retry: true})
	if !errors.Is(err, fastpath.ErrMisaligned) || !strings.Contains(err.Error(), fmt.Sprintf("ends at offset %d, not at 0", end)) {
		t.Errorf("a retry from 0: %v, want the end %d named", err, end)
	}
	if _, e := bounds(t, c, topic, 1); e != 10 {
		t.Errorf("the other partition ends at %d, want 10", e)
	}
	if rc, _ := visible(t, c, topic); rc != 1 {
		t.Errorf("read_committed reads %d records, want the foreign one alone", rc)
	}
	if err := f.StartAt(t.Context(), Start{Topic: topic, At: 0}); err == nil || !strings.Contains(err.Error(), "holds records already") {
		t.Errorf("StartAt(0) on a partition with records: %v, want a refusal", err)
	}
	if err := f.StartAt(t.Context(), Start{Topic: topic, At: 100}); !errors.Is(err, fastpath.ErrMisaligned) || !strings.Contains(err.Error(), "a record at offset 0") {
		t.Errorf("StartAt(100) on a partition with a record: %v, want a refusal naming offset 0", err)
	}
	// Below the filler of partition 1, a committed transaction: its record is read too.
	commitOne(t, c, kafkatest.Name(t, "committed"), topic, 1)
	kafkatest.Eventually(t, time.Minute, func() error { // the marker lands after EndTxn returns
		if lso := c.EndOffsets(t, topic, kgo.ReadCommitted())[1]; lso != 12 {
			return fmt.Errorf("partition 1's last stable offset is %d, want 12", lso)
		}
		return nil
	})
	if err := f.StartAt(t.Context(), Start{Topic: topic, Partition: 1, At: 100}); !errors.Is(err, fastpath.ErrMisaligned) || !strings.Contains(err.Error(), "a record at offset 10") {
		t.Errorf("StartAt(100) on a partition with a committed record: %v, want a refusal naming offset 10", err)
	}
}

// TestSurveyNamesTheTopicsWithGaps: before copying, a compacted topic is reported with
// compaction holes, a topic a transactional producer wrote with transaction markers, a
// plain one with none; the refusal is reported where asked.
func TestSurveyNamesTheTopicsWithGaps(t *testing.T) {
	c := env.Clusters[0]
	prefix := kafkatest.Name(t, "survey")
	plain, txn, compacted := prefix+"-plain", prefix+"-txn", prefix+"-compacted"
	c.CreateTopic(t, plain, 2, nil)
	c.CreateTopic(t, txn, 2, nil)
	c.CreateTopic(t, compacted, 1, kafkatest.CompactedConfig())
	produce(t, c, plain, "p")
	commitOne(t, c, prefix, txn, 1)
	names := map[string]string{plain: "A." + plain, txn: "A." + txn, compacted: "A." + compacted}
	got, err := Survey(t.Context(), c.Admin(t), names, func(s string) bool { return s == txn })
	if err != nil {
		t.Fatal(err)
	}
	want := []TopicGaps{
		{Source: compacted, Remote: "A." + compacted, Compacted: true},
		{Source: plain, Remote: "A." + plain},
		{Source: txn, Remote: "A." + txn, Transactional: true, Refused: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("survey:\n got %+v\nwant %+v", got, want)
	}
	if s := got[2].String(); !strings.Contains(s, "transaction markers") || !strings.Contains(s, "refused") {
		t.Errorf("the transactional topic reads %q", s)
	}
}
