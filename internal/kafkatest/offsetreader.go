package kafkatest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// JavaRead is what the embedded Java program OffsetReader, Apache Kafka's own consumer,
// read from a topic: one line per record, "PARTITION OFFSET TIMESTAMP KEY VALUE
// HEADERS" (key, value and header values in hex), in the order of each partition, and
// where each partition ended when it began.
type JavaRead struct {
	Records []string
	Ends    map[int32]int64
}

// Partition returns the lines of partition p's records.
func (r JavaRead) Partition(p int32) []string {
	prefix := strconv.Itoa(int(p)) + " "
	var out []string
	for _, l := range r.Records {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// ReadWithJava reads topic on c (its PLAINTEXT listener) with OffsetReader, read_committed,
// from the offsets of from (the log start for a partition not in it) up to the ends it
// lists first, without a group. It fails the test if the program fails.
func (e *Env) ReadWithJava(t testing.TB, c *Cluster, topic string, from map[int32]int64) JavaRead {
	t.Helper()
	prog := e.JavaProgram(t, "OffsetReader")
	args := []string{"--bootstrap", c.Bootstrap, "--topic", topic}
	if len(from) > 0 {
		var fs []string
		for p, o := range from {
			fs = append(fs, strconv.Itoa(int(p))+":"+strconv.FormatInt(o, 10))
		}
		args = append(args, "--from", strings.Join(fs, ","))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := prog.Command(ctx, "", args...)
	var stderr SyncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("OffsetReader on %s: %v\n%s", topic, err, tailLines(stderr.String(), 20))
	}
	read := JavaRead{Ends: map[int32]int64{}}
	for l := range strings.Lines(string(out)) {
		l = strings.TrimSuffix(l, "\n")
		if ends, ok := strings.CutPrefix(l, "END "); ok {
			for _, pe := range strings.Split(ends, ",") {
				p, o, _ := strings.Cut(pe, ":")
				pn, _ := strconv.ParseInt(p, 10, 32)
				on, _ := strconv.ParseInt(o, 10, 64)
				read.Ends[int32(pn)] = on
			}
			continue
		}
		read.Records = append(read.Records, l)
	}
	return read
}

// CompareWithJava reads topic on a and remote on b with ReadWithJava from their log
// starts and returns "" when both sides hold records and every partition reads the same
// lines and ends at the same offset, else what differs.
func (e *Env) CompareWithJava(t testing.TB, a *Cluster, topic string, b *Cluster, remote string) string {
	t.Helper()
	src, dst := e.ReadWithJava(t, a, topic, nil), e.ReadWithJava(t, b, remote, nil)
	var diffs []string
	if len(src.Records) == 0 || len(src.Records) != len(dst.Records) || !maps.Equal(src.Ends, dst.Ends) {
		diffs = append(diffs, fmt.Sprintf("%s: the Java consumer reads %d records ending at %v on the source, %s: %d ending at %v on the target",
			topic, len(src.Records), src.Ends, remote, len(dst.Records), dst.Ends))
	}
	for p := range src.Ends {
		if s, d := src.Partition(p), dst.Partition(p); !slices.Equal(s, d) {
			diffs = append(diffs, fmt.Sprintf("%s[%d]: the Java consumer reads %d records on the source, %d on the target (first difference: %s)", topic, p, len(s), len(d), FirstDifference(s, d)))
		}
	}
	return strings.Join(diffs, "\n")
}

// FirstDifference describes where the lines a and b first differ.
func FirstDifference(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("line %d: %q against %q", i, a[i], b[i])
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf("after line %d, one side ends", min(len(a), len(b)))
	}
	return "none"
}

// CompactWithHoles fills partition 0 of topic on c, a compacted topic whose cleaner runs
// soon (segment.ms and min.cleanable.dirty.ratio low), with rounds of records over 37
// keys until the cleaner has removed more than half of its offsets: holes inside and
// between batches.
func CompactWithHoles(t testing.TB, c *Cluster, topic string) {
	t.Helper()
	cl := c.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(20*time.Millisecond))
	round := 0
	Eventually(t, 90*time.Second, func() error {
		var recs []*kgo.Record
		for i := range 200 {
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte("k" + strconv.Itoa(i%37)),
				Value: []byte(fmt.Sprintf("round %d record %d", round, i)), Headers: []kgo.RecordHeader{{Key: "r", Value: []byte(strconv.Itoa(round))}}})
		}
		round++
		if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
			return err
		}
		read := len(c.ReadAll(t, topic, kgo.ReadUncommitted())[0])
		start, end := c.StartOffsets(t, topic)[0], c.EndOffsets(t, topic, kgo.ReadUncommitted())[0]
		if int64(read) > (end-start)/2 {
			return fmt.Errorf("the cleaner left %d of %d records", read, end-start)
		}
		return nil
	})
}

// CompactedConfig is the config of a compacted topic whose cleaner runs within a second.
func CompactedConfig() map[string]*string {
	out := map[string]*string{}
	for k, v := range map[string]string{"cleanup.policy": "compact", "segment.ms": "300", "min.cleanable.dirty.ratio": "0.01", "min.compaction.lag.ms": "0"} {
		out[k] = &v
	}
	return out
}
