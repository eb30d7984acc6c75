package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrControl reports a control batch (a transaction marker) given to
// Recompress. Markers are never compressed and never copied, so a caller
// that recompresses one has a bug.
var ErrControl = errors.New("control batch")

// ErrBadCRC reports a batch whose CRC does not match its content.
// Recompress checks it because it writes a new CRC: recompressing a
// corrupt batch would otherwise give corrupt records a valid checksum.
var ErrBadCRC = errors.New("batch CRC does not match its content")

// Recompressor re-encodes the records section of v2 batches with another
// codec, so that a partition whose source batches are not in the target's
// compression.type can stay on the fast path.
//
// The zero value is ready to use. A Recompressor keeps its decompressed and
// compressed scratch buffers, and one franz-go compressor per target codec
// (built anew when a call asks for another level of it), from call to call,
// so that steady-state calls allocate nothing of the batch's size. Because
// of those buffers it is not safe for concurrent use:
// give each goroutine its own (franz-go's codecs behind it are pooled and
// safe, the buffers are not).
type Recompressor struct {
	comp  [Zstd + 1]kgo.Compressor // built on first use of each target codec
	level [Zstd + 1]int            // the Kafka level each of comp compresses at
	dec   kgo.Decompressor         // built on first use, decompresses into raw
	raw   []byte                   // decompressed records, reused
	buf   bytes.Buffer             // compressed records, reused
	built []byte                   // records Rebuild renumbered, reused
}

// Recompress appends to dst the batch b (whose header h is from Parse)
// with its records section (everything after the 61-byte header)
// decompressed with h.Codec() and compressed again with to (its codec, at
// its level: Compression.Kgo), and returns the extended dst and the new
// batch's header.
//
// The new batch has the same base offset, partition leader epoch, last
// offset delta, first and max timestamps, producer id, epoch and base
// sequence, record count, and attributes (transactional, control,
// log-append-time and delete-horizon bits) except the three codec bits,
// which become to.Codec; its length and CRC-32C are computed anew. Offsets
// stay exact because a record's offset (and timestamp) is stored as a delta
// inside the record itself, relative to the header's base offset and first
// timestamp, and the records are byte-identical after decompression: only
// the framing around them changes, never a record. The cost is one
// decompression and one compression of the batch, with no per-record work.
//
// It returns an error, and dst unchanged, for a batch whose CRC is wrong
// (ErrBadCRC), a control batch (ErrControl), a records section the source
// codec cannot decode, an unknown target codec or a level Kafka does not
// accept for it (CheckLevel), or a b shorter than h says. When to.Codec is
// already h.Codec(), b is appended unchanged, whatever level it was
// compressed at. An empty records section stays empty for a none target
// and becomes the target codec's encoding of nothing otherwise.
//
// The result may be larger than b (a codec that compresses worse, or none),
// so a caller that must respect a request or message size limit checks the
// returned header's Size. h must be b's current header: after Rewrite,
// parse b again (or recompress first and Rewrite the result). dst must not
// overlap b.
func (r *Recompressor) Recompress(dst []byte, b []byte, h Header, to Compression) ([]byte, Header, error) {
	if err := r.check(b, h, to); err != nil {
		return dst, h, fmt.Errorf("recompressing the batch at offset %d from %s to %s: %w", h.BaseOffset, h.Codec(), to, err)
	}
	b = b[:h.Size()]
	if to.Codec == h.Codec() {
		return append(dst, b...), h, nil
	}
	raw, err := r.decompress(b[HeaderSize:], h.Codec())
	if err != nil {
		return dst, h, fmt.Errorf("recompressing the batch at offset %d from %s to %s: decompressing its records: %w", h.BaseOffset, h.Codec(), to, err)
	}
	out := raw
	if to.Codec != None {
		if out, err = r.compress(raw, to); err != nil {
			return dst, h, fmt.Errorf("recompressing the batch at offset %d from %s to %s: %w", h.BaseOffset, h.Codec(), to, err)
		}
	}
	if HeaderSize+len(out)-12 > 1<<31-1 {
		return dst, h, fmt.Errorf("recompressing the batch at offset %d from %s to %s: %d record bytes do not fit a batch", h.BaseOffset, h.Codec(), to, len(out))
	}

	start := len(dst)
	dst = append(dst, b[:HeaderSize]...)
	dst = append(dst, out...)
	nb := dst[start:]
	h.Attributes = h.Attributes&^codecMask | int16(to.Codec)
	h.Length = int32(len(nb) - 12)
	binary.BigEndian.PutUint32(nb[offLength:], uint32(h.Length))
	binary.BigEndian.PutUint16(nb[offAttributes:], uint16(h.Attributes))
	h.CRC = crc32.Checksum(nb[offAttributes:], castagnoli)
	binary.BigEndian.PutUint32(nb[offCRC:], h.CRC)
	return dst, h, nil
}

// check validates the arguments of Recompress.
func (r *Recompressor) check(b []byte, h Header, to Compression) error {
	if err := to.check(); err != nil {
		return err
	}
	switch {
	case h.Magic != 2:
		return ErrOldFormat
	case int(h.Length) < HeaderSize-12 || len(b) < h.Size():
		return fmt.Errorf("the batch is %d bytes and its header says %d: %w", len(b), h.Size(), ErrPartial)
	}
	if ph, err := Parse(b); err != nil {
		return err
	} else if ph != h {
		return fmt.Errorf("the header given (%+v) is not the batch's (%+v): parse the batch again after Rewrite", h, ph)
	}
	switch {
	case h.Codec() > Zstd:
		return fmt.Errorf("unknown source codec %d", int8(h.Codec()))
	case h.Control():
		return ErrControl
	case !ValidCRC(b, h):
		return ErrBadCRC
	}
	return nil
}

// decompress returns the records section decoded, in r.raw's storage
// unless the source is uncompressed (then it is recs itself).
func (r *Recompressor) decompress(recs []byte, from Codec) ([]byte, error) {
	if from == None {
		return recs, nil
	}
	if len(recs) == 0 {
		return nil, nil // nothing to decode; codecs disagree on whether that is an error
	}
	if r.dec == nil {
		r.dec = kgo.DefaultDecompressor(rawPool{r})
	}
	raw, err := r.dec.Decompress(recs, kgo.CompressionCodecType(from))
	if err != nil {
		return nil, err
	}
	if cap(raw) > cap(r.raw) {
		r.raw = raw[:0] // the codec outgrew the buffer: keep the larger one
	}
	return raw, nil
}

// compress returns raw encoded with to, in r.buf's storage.
func (r *Recompressor) compress(raw []byte, to Compression) ([]byte, error) {
	c := r.comp[to.Codec]
	if c == nil || r.level[to.Codec] != to.Level {
		codec, err := to.Kgo()
		if err == nil {
			c, err = kgo.DefaultCompressor(codec)
		}
		if err != nil {
			return nil, fmt.Errorf("building the %s compressor: %w", to, err)
		}
		r.comp[to.Codec], r.level[to.Codec] = c, to.Level
	}
	r.buf.Reset()
	out, used := c.Compress(&r.buf, raw)
	if used != kgo.CompressionCodecType(to.Codec) {
		return nil, fmt.Errorf("the %s compressor failed (it returned codec %d)", to, used)
	}
	return out, nil
}

// rawPool hands franz-go's decompressor the Recompressor's buffer to
// decompress into (kgo.PoolDecompressBytes). It is only called from inside
// Decompress, on the Recompressor's goroutine.
type rawPool struct{ r *Recompressor }

func (p rawPool) GetDecompressBytes([]byte, kgo.CompressionCodecType) []byte { return p.r.raw[:0] }

// PutDecompressBytes takes back the buffer after a failed decompression.
func (p rawPool) PutDecompressBytes(b []byte) {
	if cap(b) > cap(p.r.raw) {
		p.r.raw = b[:0]
	}
}
