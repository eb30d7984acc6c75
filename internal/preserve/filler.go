// Package preserve holds the parts of the offset-preserving mode (issue 25: every source
// record lands at its own offset on the target) that are built so far. The mode is not
// wired into the data plane yet and has no configuration key.
//
// Built: the filler. A broker appends at its log end and takes one offset per record (a
// batch whose offset deltas skip is refused whole), so a source offset that holds no
// copyable record, first of all everything below the source's log start, must be taken
// on the target by a record no consumer takes for data. Filler is an aborted transaction
// of null records and its marker: read_committed consumers never read it, and below the
// log start (DeleteRecords) no consumer does. docs/design.md, "Keeping the source's
// offsets", lists what Kafka 4.1.1 and 3.9.1 do with it (internal/brokerfacts).
package preserve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"strait/internal/batch"
	"strait/internal/mirror/fastpath"
)

// MaxFillerRecords is the most filler records one batch carries: zstd packs 999,999
// null records into 823,333 bytes, under the default max.message.bytes (1 MiB).
const MaxFillerRecords = 999_999

// Filler writes filler into remote partitions with one transactional producer, which
// must write nothing else (it tracks the producer's sequence numbers), and which must
// speak the transaction protocol of fastpath.TransactionOpts. After an error it refuses
// every call: a transaction of it may still be open, or its marker not written yet, so
// the partition's end is not known; a new Filler, whose producer id fences this one,
// completes what it left (InitProducerID aborts the open transaction). It is not safe
// for concurrent use.
type Filler struct {
	p        fastpath.Producer
	adm      *kadm.Client
	seq      map[string]map[int32]int32 // the next sequence number of each partition
	perBatch int                        // MaxFillerRecords; tests use fewer
	failed   error                      // why the filler refuses every call
	batches  map[int]fillerBatchOf      // filler batches by record count, encoded once
}

// NewFiller returns a Filler writing with p, a producer id and epoch that have written
// nothing yet.
func NewFiller(p fastpath.Producer) *Filler {
	return &Filler{p: p, adm: kadm.NewClient(p.Client), seq: map[string]map[int32]int32{}, perBatch: MaxFillerRecords, batches: map[int]fillerBatchOf{}}
}

// StartAt makes topic[partition] on the target start at logStart, the source's log
// start, so that the next record written there lands at logStart: it fills the empty
// partition up to logStart and moves its log start there (DeleteRecords). It does
// nothing once the partition starts and ends there. A partition that retains any offset
// (records, or the filler of a call cut short) is refused: only an empty partition is
// known to hold nothing a consumer reads.
func (f *Filler) StartAt(ctx context.Context, topic string, partition int32, logStart int64) error {
	if f.failed != nil {
		return f.failed
	}
	start, end, err := f.bounds(ctx, topic, partition)
	if err != nil {
		return err
	}
	switch {
	case start == logStart && end == logStart:
		return nil
	case end > logStart:
		return fmt.Errorf("%s[%d] ends at offset %d, past the source's log start %d: it holds records already, so the source's offsets cannot be kept there; start from an empty remote topic", topic, partition, end, logStart)
	case start < end:
		return fmt.Errorf("%s[%d] retains offsets %d to %d: the source's offsets are kept only in an empty remote partition (a fill cut short leaves its filler there: delete the records below %d, or the topic, and start again)", topic, partition, start, end-1, end)
	}
	if end < logStart {
		if err := f.Fill(ctx, topic, partition, end, logStart); err != nil {
			return err
		}
	}
	resp, err := f.adm.DeleteRecords(ctx, kadm.Offsets{topic: {partition: {At: logStart}}})
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("moving the log start of %s[%d] to %d past its filler: %w", topic, partition, logStart, err)
	}
	return nil
}

// Fill writes filler into topic[partition], whose log end is from, until its log end is
// to: aborted transactions of one filler batch each and their markers, so that no
// transaction stays open long whatever the gap (a gap of one offset is a marker alone).
// A filler batch that lands at another offset than the one it should, or a partition
// that ends past a marker, is an error naming both offsets: something else writes the
// partition.
func (f *Filler) Fill(ctx context.Context, topic string, partition int32, from, to int64) error {
	if f.failed != nil {
		return f.failed
	}
	if to <= from {
		return fmt.Errorf("filling %s[%d] from offset %d to %d: nothing to fill", topic, partition, from, to)
	}
	for next := from; next < to; {
		end := min(to, next+int64(f.perBatch)+1) // a batch and its transaction's marker
		if err := f.fillOnce(ctx, topic, partition, next, end); err != nil {
			err = fmt.Errorf("filling %s[%d] from offset %d to %d: %w", topic, partition, from, to, err)
			f.failed = fmt.Errorf("this filler failed before, so the partition's end is not known (a new filler's producer id completes what it left): %w", err)
			return err
		}
		next = end
	}
	return nil
}

// fillOnce fills from..to with one aborted transaction: to-from-1 records and the
// marker.
func (f *Filler) fillOnce(ctx context.Context, topic string, partition int32, from, to int64) error {
	if err := f.p.AddPartitions(ctx, map[string][]int32{topic: {partition}}); err != nil {
		return err
	}
	if n := to - from - 1; n > 0 {
		base, err := f.produce(ctx, topic, partition, int(n))
		if err == nil && base != from {
			err = fmt.Errorf("the filler landed at offset %d, not %d: something else writes this partition", base, from)
		}
		if err != nil {
			return errors.Join(err, f.abort(ctx))
		}
	}
	if err := f.abort(ctx); err != nil {
		return err
	}
	return f.waitEnd(ctx, topic, partition, to)
}

// produce writes one batch of n filler records and returns its base offset.
func (f *Filler) produce(ctx context.Context, topic string, partition int32, n int) (int64, error) {
	fb, ok := f.batches[n]
	if !ok {
		b, h, err := fillerBatch(n, time.Now().UnixMilli())
		if err != nil {
			return 0, err
		}
		fb = fillerBatchOf{b, h}
		f.batches[n] = fb
	}
	b, h := fb.b, fb.h
	seqs := f.seq[topic]
	if seqs == nil {
		seqs = map[int32]int32{}
		f.seq[topic] = seqs
	}
	batch.Rewrite(b, h, f.p.PID, f.p.Epoch, seqs[partition], true)
	base, err := f.p.ProduceOne(ctx, topic, partition, b, -1)
	if err != nil {
		return 0, err
	}
	// Sequence numbers wrap from MaxInt32 to 0.
	seqs[partition] = int32((int64(seqs[partition]) + int64(n)) % (math.MaxInt32 + 1))
	return base, nil
}

func (f *Filler) abort(ctx context.Context) error {
	// The aborted transaction's marker is what hides the filler from read_committed
	// consumers; a context already cancelled must not keep it from being written.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return f.p.End(actx, false)
}

// waitEnd waits for the partition's end to reach want: the coordinator writes the
// transaction's marker after EndTxn returns. An end past want means another writer.
func (f *Filler) waitEnd(ctx context.Context, topic string, partition int32, want int64) error {
	wait := 5 * time.Millisecond
	for {
		end, err := f.end(ctx, topic, partition)
		if err == nil && end == want {
			return nil
		}
		if err == nil && end > want {
			return fmt.Errorf("%s[%d] ends at offset %d after its filler, past %d: something else writes this partition", topic, partition, end, want)
		}
		if err == nil {
			err = fmt.Errorf("%s[%d] ends at offset %d", topic, partition, end)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the filler's marker to end %s[%d] at offset %d: %w (gave up: %w)", topic, partition, want, err, context.Cause(ctx))
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// bounds returns the partition's log start and end.
func (f *Filler) bounds(ctx context.Context, topic string, partition int32) (start, end int64, err error) {
	if start, err = f.offset(ctx, f.adm.ListStartOffsets, "log start", topic, partition); err != nil {
		return 0, 0, err
	}
	end, err = f.end(ctx, topic, partition)
	return start, end, err
}

// end returns the partition's log end.
func (f *Filler) end(ctx context.Context, topic string, partition int32) (int64, error) {
	return f.offset(ctx, f.adm.ListEndOffsets, "log end", topic, partition)
}

func (f *Filler) offset(ctx context.Context, list func(context.Context, ...string) (kadm.ListedOffsets, error), what, topic string, partition int32) (int64, error) {
	listed, err := list(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("listing the %s of %s: %w", what, topic, err)
	}
	o, ok := listed.Lookup(topic, partition)
	if !ok {
		return 0, fmt.Errorf("%s has no partition %d on the target", topic, partition)
	}
	return o.Offset, nil
}

// fillerBatchOf is an encoded filler batch and its header; Rewrite gives it each
// producer id, epoch and sequence in place.
type fillerBatchOf struct {
	b []byte
	h batch.Header
}

// fillerBatch is one zstd batch of n records with an empty key and a null value, stamped
// timestamp, without a producer yet (batch.Rewrite sets it).
func fillerBatch(n int, timestamp int64) ([]byte, batch.Header, error) {
	h, b, err := batch.Encode(make([]batch.KV, n), timestamp)
	if err != nil {
		return nil, batch.Header{}, err
	}
	var r batch.Recompressor
	b, h, err = r.Recompress(nil, b, h, batch.Compression{Codec: batch.Zstd})
	return b, h, err
}
