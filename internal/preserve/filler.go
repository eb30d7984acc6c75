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
	"maps"
	"math"
	"slices"
	"strings"
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
// empty throughout. A start cut short therefore leaves an empty partition below s.At,
// which a later call completes; one that starts and ends at s.At needs nothing. A
// partition that retains any offset, or ends past s.At, is refused: only an empty
// partition is known to hold nothing a consumer reads.
func (f *Filler) StartAt(ctx context.Context, s Start) error {
	if f.failed != nil {
		return f.failed
	}
	begins, err := f.list(ctx, f.adm.ListStartOffsets, "log start", []string{s.Topic})
	start, err := lookup(begins, err, s.Topic, s.Partition)
	if err != nil {
		return err
	}
	ends, err := f.list(ctx, f.adm.ListEndOffsets, "log end", []string{s.Topic})
	end, err := lookup(ends, err, s.Topic, s.Partition)
	switch {
	case err != nil:
		return err
	case end > s.At:
		return fmt.Errorf("%s[%d] ends at offset %d, past %d where the source's offsets begin: it holds records already, so the source's offsets cannot be kept there; start from an empty remote topic: %w", s.Topic, s.Partition, end, s.At, fastpath.ErrMisaligned)
	case start < end:
		return fmt.Errorf("%s[%d] retains offsets %d to %d: the source's offsets are kept only in an empty remote partition; delete the records below %d, or the topic, and start again: %w", s.Topic, s.Partition, start, end-1, end, fastpath.ErrMisaligned)
	}
	for end < s.At {
		to := min(s.At, end+int64(f.recordsPerBatch(s.MaxBytes))+1)
		if err := f.Fill(ctx, []fastpath.Gap{{Topic: s.Topic, Partition: s.Partition, From: end, To: to, MaxBytes: s.MaxBytes}})[0]; err != nil {
			return err
		}
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
		end = to
	}
	return nil
}

// Fill fills each gap: its remote partition ends at From (with Retry, anywhere up to
// To: a new filler's producer id aborted what the failed one left open), and must end
// at To. Each round is one aborted transaction, with at most one filler
// batch per partition and its marker, so that no transaction stays open long whatever
// the gap (a gap of one offset is a marker alone). It returns one error per gap, nil
// for each partition that now ends at its To. A partition that does not end where its
// gap says, or a filler batch that lands elsewhere, is an error wrapping
// fastpath.ErrMisaligned: something else writes the partition. Any other failure (a
// request the target did not answer) fails every gap not filled yet, and the filler
// then refuses every call.
func (f *Filler) Fill(ctx context.Context, gaps []fastpath.Gap) []error {
	errs := make([]error, len(gaps))
	if len(gaps) == 0 {
		return errs
	}
	if f.failed != nil {
		return fill(errs, f.failed)
	}
	at := make([]int64, len(gaps))
	for i, g := range gaps {
		at[i] = g.From
	}
	if slices.ContainsFunc(gaps, func(g fastpath.Gap) bool { return g.Retry }) {
		// Where a fill cut short left the partition is read first. Otherwise a
		// partition that does not end at From shows when the filler lands (its
		// batch's base offset, or an end past the marker): a listing before every
		// fill cost two more round trips per gap.
		var err error
		if at, err = f.check(ctx, gaps, errs); err != nil {
			return fill(errs, err)
		}
	}
	for {
		pending := map[int]int64{} // gap index: the end after this round
		for i, g := range gaps {
			if errs[i] == nil && at[i] < g.To {
				pending[i] = min(g.To, at[i]+int64(f.recordsPerBatch(g.MaxBytes))+1) // a batch and its transaction's marker
			}
		}
		if len(pending) == 0 {
			return errs
		}
		if err := f.round(ctx, gaps, at, pending, errs); err != nil {
			err = fmt.Errorf("%w: %w", fastpath.ErrCutShort, err)
			f.failed = fmt.Errorf("this filler failed before, so the partitions' ends are not known (a new filler's producer id completes what it left): %w", err)
			for i := range pending {
				if errs[i] == nil {
					errs[i] = err
				}
			}
			return errs
		}
		for i, to := range pending {
			at[i] = to
		}
	}
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

// fill sets every error of errs to err.
func fill(errs []error, err error) []error {
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// check lists where each gap's partition ends and returns it, setting errs for
// partitions that end outside their gap, or in a transaction still open (another
// producer's, whose timeout will abort it).
func (f *Filler) check(ctx context.Context, gaps []fastpath.Gap, errs []error) ([]int64, error) {
	topics := make([]string, len(gaps))
	for i, g := range gaps {
		topics[i] = g.Topic
	}
	ends, err := f.list(ctx, f.adm.ListEndOffsets, "log end", topics)
	if err != nil {
		return nil, err
	}
	stable, err := f.list(ctx, f.adm.ListCommittedOffsets, "last stable offset", topics)
	if err != nil {
		return nil, err
	}
	at := make([]int64, len(gaps))
	for i, g := range gaps {
		end, err := lookup(ends, nil, g.Topic, g.Partition)
		lso, err2 := lookup(stable, nil, g.Topic, g.Partition)
		switch {
		case err != nil || err2 != nil:
			errs[i] = errors.Join(err, err2)
		case end != g.From && (!g.Retry || end < g.From || end > g.To):
			errs[i] = fmt.Errorf("%s[%d] ends at offset %d, not at %d where its copy stands: something else writes this partition: %w", g.Topic, g.Partition, end, g.From, fastpath.ErrMisaligned)
		case lso < end:
			errs[i] = fmt.Errorf("%s[%d] holds a transaction still open at offsets %d to %d (a producer that died, which its transaction timeout aborts): the gap is filled once it ends", g.Topic, g.Partition, lso, end-1)
		}
		at[i] = end
	}
	return at, nil
}

// round fills each pending gap from at[i] to pending[i] in one aborted transaction.
// It sets errs[i] for a gap found misaligned, and returns the error that leaves the
// filler's state unknown.
func (f *Filler) round(ctx context.Context, gaps []fastpath.Gap, at []int64, pending map[int]int64, errs []error) error {
	add := map[string][]int32{}
	for i := range pending {
		add[gaps[i].Topic] = append(add[gaps[i].Topic], gaps[i].Partition)
	}
	if err := f.p.AddPartitions(ctx, add); err != nil {
		return err
	}
	for i, to := range pending {
		g := gaps[i]
		n := to - at[i] - 1
		if n == 0 {
			continue
		}
		base, err := f.produce(ctx, g.Topic, g.Partition, int(n))
		if err != nil {
			return errors.Join(err, f.abort(ctx))
		}
		if base != at[i] {
			errs[i] = fmt.Errorf("the filler of %s[%d] landed at offset %d, not %d: something else writes this partition: %w", g.Topic, g.Partition, base, at[i], fastpath.ErrMisaligned)
		}
	}
	if err := f.abort(ctx); err != nil {
		return err
	}
	return f.waitEnds(ctx, gaps, pending, errs)
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

// waitEnds waits for each pending gap's partition to end at pending[i]: the
// coordinator writes the transaction's markers after EndTxn returns. An end past it
// means another writer.
func (f *Filler) waitEnds(ctx context.Context, gaps []fastpath.Gap, pending map[int]int64, errs []error) error {
	pending = maps.Clone(pending) // reached gaps leave it
	wait := time.Millisecond      // a marker usually lands within a millisecond or two
	for {
		var topics []string
		for i := range pending {
			if errs[i] == nil {
				topics = append(topics, gaps[i].Topic)
			}
		}
		if len(topics) == 0 {
			return nil
		}
		ends, err := f.list(ctx, f.adm.ListEndOffsets, "log end", topics)
		var short []string
		for i, want := range pending {
			if errs[i] != nil || err != nil {
				continue
			}
			g := gaps[i]
			end, lerr := lookup(ends, nil, g.Topic, g.Partition)
			switch {
			case lerr != nil:
				short = append(short, lerr.Error())
			case end > want:
				errs[i] = fmt.Errorf("%s[%d] ends at offset %d after its filler, past %d: something else writes this partition: %w", g.Topic, g.Partition, end, want, fastpath.ErrMisaligned)
			case end < want:
				short = append(short, fmt.Sprintf("%s[%d] ends at offset %d, not %d yet", g.Topic, g.Partition, end, want))
			default:
				delete(pending, i) // reached: not listed again
			}
		}
		if err == nil && len(short) == 0 {
			return nil
		}
		if err == nil {
			err = errors.New(strings.Join(short, "; "))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the filler's markers: %w (gave up: %w)", err, context.Cause(ctx))
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// list lists offsets of topics with fn, once per topic.
func (f *Filler) list(ctx context.Context, fn func(context.Context, ...string) (kadm.ListedOffsets, error), what string, topics []string) (kadm.ListedOffsets, error) {
	topics = slices.Compact(slices.Sorted(slices.Values(topics)))
	listed, err := fn(ctx, topics...)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing the %s of %s on the target: %w", what, strings.Join(topics, ", "), err)
	}
	return listed, nil
}

// lookup returns the offset listed for topic[partition], or why there is none.
func lookup(listed kadm.ListedOffsets, err error, topic string, partition int32) (int64, error) {
	if err != nil {
		return 0, err
	}
	o, ok := listed.Lookup(topic, partition)
	if !ok {
		return 0, fmt.Errorf("%s has no partition %d on the target", topic, partition)
	}
	return o.Offset, o.Err
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
