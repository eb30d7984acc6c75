// Package preserve holds the filler of the offset-preserving mode
// (strait.offsets.preserve: every source record lands at its own offset on the target;
// the fast path keeps it, fastpath/preserve.go).
//
// A broker appends at its log end and takes one offset per record (a
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

// maxCachedBatches bounds the filler batches a Filler keeps encoded (up to 823 KB each).
const maxCachedBatches = 8

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

// Start is where a remote partition must start: the source's log start, or where
// copying begins. MaxBytes is the remote topic's max.message.bytes (0 unknown).
type Start struct {
	Topic     string
	Partition int32
	At        int64
	MaxBytes  int64
}

// StartAt makes the empty remote partition of s begin at s.At, so that the next record
// written there lands at s.At: it fills it up to s.At, one filler batch at a time, and
// after each moves its log start to its end (DeleteRecords), so that the partition stays
// empty throughout. A start cut short leaves a partition below s.At that is empty, or
// that holds the last batch's filler when the cut came before its DeleteRecords; a later
// call completes either, and one that starts and ends at s.At needs nothing. A partition
// that ends past s.At, or holds a record a read_committed consumer reads, is refused:
// only one that holds nothing consumers read can take the source's offsets.
func (f *Filler) StartAt(ctx context.Context, s Start) error {
	if f.failed != nil {
		return f.failed
	}
	part := fastpath.Gap{Topic: s.Topic, Partition: s.Partition}
	start, err := f.offset(ctx, f.adm.ListStartOffsets, "log start", part)
	if err != nil {
		return err
	}
	end, err := f.offset(ctx, f.adm.ListEndOffsets, "log end", part)
	switch {
	case err != nil:
		return err
	case end > s.At:
		return fmt.Errorf("%s[%d] ends at offset %d, past %d where the source's offsets begin: it holds records already, so the source's offsets cannot be kept there; start from an empty remote topic: %w", s.Topic, s.Partition, end, s.At, fastpath.ErrMisaligned)
	case start < end:
		// Filler of a start cut short after its batch, before the log start moved.
		at, visible, err := firstVisible(ctx, f.p.Client, s.Topic, s.Partition, start, end)
		switch {
		case err != nil:
			return err
		case visible:
			return fmt.Errorf("%s[%d] holds a record at offset %d, below %d where the source's offsets begin: the source's offsets are kept only in a remote partition that holds nothing consumers read; delete the records below %d, or the topic, and start again: %w", s.Topic, s.Partition, at, s.At, end, fastpath.ErrMisaligned)
		}
	}
	if start < end {
		if err := f.moveStart(ctx, s, end); err != nil {
			return err
		}
	}
	for end < s.At {
		to := min(s.At, end+int64(f.recordsPerBatch(s.MaxBytes))+1)
		if err := f.Fill(ctx, fastpath.Gap{Topic: s.Topic, Partition: s.Partition, From: end, To: to, MaxBytes: s.MaxBytes}); err != nil {
			return err
		}
		if err := f.moveStart(ctx, s, to); err != nil {
			return err
		}
		end = to
	}
	return nil
}

// moveStart moves the log start of the partition of s to to (DeleteRecords).
func (f *Filler) moveStart(ctx context.Context, s Start, to int64) error {
	resp, err := f.adm.DeleteRecords(ctx, kadm.Offsets{s.Topic: {s.Partition: {Topic: s.Topic, Partition: s.Partition, At: to}}})
	if err == nil {
		if r, ok := resp.Lookup(s.Topic, s.Partition); !ok {
			err = errors.New("no answer for it")
		} else {
			err = r.Err
		}
	}
	if err != nil {
		return fmt.Errorf("moving the log start of %s[%d] to %d past its filler: %w", s.Topic, s.Partition, to, err)
	}
	return nil
}

// Fill fills gap g: its remote partition ends at g.From (with g.Retry, anywhere up to
// g.To: a new filler's producer id aborted what the failed one left open), and must end
// at g.To. Each round is one aborted transaction with at most one filler batch and its
// marker, so that no transaction stays open long whatever the gap (a gap of one offset
// is a marker alone). A partition that does not end where the gap says, or a filler
// batch that lands elsewhere, is an error wrapping fastpath.ErrMisaligned: something
// else writes the partition. Any other failure (a request the target did not answer)
// wraps fastpath.ErrCutShort, and the filler then refuses every call.
func (f *Filler) Fill(ctx context.Context, g fastpath.Gap) error {
	if f.failed != nil {
		return f.failed
	}
	at := g.From
	if g.Retry {
		// Where a fill cut short left the partition is read first. Otherwise a
		// partition that does not end at From shows when the filler lands (its
		// batch's base offset, or an end past the marker): a listing before every
		// fill cost two more round trips per gap.
		var err error
		if at, err = f.check(ctx, g); err != nil {
			return err
		}
	}
	for at < g.To {
		to := min(g.To, at+int64(f.recordsPerBatch(g.MaxBytes))+1) // a batch and its transaction's marker
		if err := f.round(ctx, g, at, to); err != nil {
			if errors.Is(err, fastpath.ErrMisaligned) {
				return err
			}
			err = fmt.Errorf("%w: %w", fastpath.ErrCutShort, err)
			f.failed = fmt.Errorf("this filler failed before, so the partition's end is not known (a new filler's producer id completes what it left): %w", err)
			return err
		}
		at = to
	}
	return nil
}

// defaultMaxMessageBytes is Kafka's default max.message.bytes, which a batch of
// MaxFillerRecords fits.
const defaultMaxMessageBytes = 1_048_588

// recordsPerBatch is the most filler records one batch of a topic whose
// max.message.bytes is maxBytes (0 unknown: the default) carries: MaxFillerRecords
// under the default, proportionally fewer, with a tenth to spare, under a lower one.
func (f *Filler) recordsPerBatch(maxBytes int64) int {
	n := f.perBatch
	if maxBytes > 0 && maxBytes < defaultMaxMessageBytes {
		n = min(n, max(1, int(int64(MaxFillerRecords)*maxBytes/defaultMaxMessageBytes*9/10)))
	}
	return n
}

// check lists where g's partition ends and returns it: an error for a partition that
// ends outside the gap, or in a transaction still open (another producer's, whose
// timeout will abort it).
func (f *Filler) check(ctx context.Context, g fastpath.Gap) (int64, error) {
	end, err := f.offset(ctx, f.adm.ListEndOffsets, "log end", g)
	if err != nil {
		return 0, err
	}
	lso, err := f.offset(ctx, f.adm.ListCommittedOffsets, "last stable offset", g)
	switch {
	case err != nil:
		return 0, err
	case end != g.From && (!g.Retry || end < g.From || end > g.To):
		return 0, fmt.Errorf("%s[%d] ends at offset %d, not at %d where its copy stands: something else writes this partition: %w", g.Topic, g.Partition, end, g.From, fastpath.ErrMisaligned)
	case lso < end:
		return 0, fmt.Errorf("%s[%d] holds a transaction still open at offsets %d to %d (a producer that died, which its transaction timeout aborts): the gap is filled once it ends", g.Topic, g.Partition, lso, end-1)
	}
	return end, nil
}

// round moves g's partition from at to to with one aborted transaction. It returns an
// error wrapping fastpath.ErrMisaligned when the filler lands elsewhere, and any other
// error when the filler's state is unknown.
func (f *Filler) round(ctx context.Context, g fastpath.Gap, at, to int64) error {
	if err := f.p.AddPartitions(ctx, map[string][]int32{g.Topic: {g.Partition}}); err != nil {
		return err
	}
	var misaligned error
	if n := to - at - 1; n > 0 {
		base, err := f.produce(ctx, g.Topic, g.Partition, int(n))
		if err != nil {
			return errors.Join(err, f.abort(ctx))
		}
		if base != at {
			misaligned = fmt.Errorf("the filler of %s[%d] landed at offset %d, not %d: something else writes this partition: %w", g.Topic, g.Partition, base, at, fastpath.ErrMisaligned)
		}
	}
	if err := f.abort(ctx); err != nil {
		return err
	}
	if misaligned != nil {
		return misaligned
	}
	return f.waitEnd(ctx, g, to)
}

// produce writes one batch of n filler records and returns its base offset.
func (f *Filler) produce(ctx context.Context, topic string, partition int32, n int) (int64, error) {
	fb, ok := f.batches[n]
	if !ok {
		if len(f.batches) >= maxCachedBatches {
			clear(f.batches) // holes of many sizes: keep the cache small
		}
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

// waitEnd waits for g's partition to end at want: the coordinator writes the
// transaction's marker after EndTxn returns. An end past it means another writer.
func (f *Filler) waitEnd(ctx context.Context, g fastpath.Gap, want int64) error {
	wait := time.Millisecond // a marker usually lands within a millisecond or two
	for {
		end, err := f.offset(ctx, f.adm.ListEndOffsets, "log end", g)
		switch {
		case err == nil && end == want:
			return nil
		case err == nil && end > want:
			return fmt.Errorf("%s[%d] ends at offset %d after its filler, past %d: something else writes this partition: %w", g.Topic, g.Partition, end, want, fastpath.ErrMisaligned)
		case err == nil:
			err = fmt.Errorf("%s[%d] ends at offset %d, not %d yet", g.Topic, g.Partition, end, want)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the filler's marker: %w (gave up: %w)", err, context.Cause(ctx))
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// offset lists, with fn, the offset of g's partition that what names.
func (f *Filler) offset(ctx context.Context, fn func(context.Context, ...string) (kadm.ListedOffsets, error), what string, g fastpath.Gap) (int64, error) {
	listed, err := fn(ctx, g.Topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("listing the %s of %s on the target: %w", what, g.Topic, err)
	}
	o, ok := listed.Lookup(g.Topic, g.Partition)
	if !ok {
		return 0, fmt.Errorf("%s has no partition %d on the target", g.Topic, g.Partition)
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
