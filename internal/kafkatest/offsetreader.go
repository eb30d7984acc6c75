package kafkatest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
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
