// Package batch reads and rewrites raw Kafka record batches (message format
// v2) as they come in fetch responses, so the fast path can forward them to
// another cluster without decompressing them: walk the batches, tell data
// from transaction markers and aborted transactions, and rewrite the
// producer fields and the CRC for a new producer. It is pure.
package batch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// HeaderSize is the size of a v2 batch header; the records follow it.
const HeaderSize = 61

// Field offsets in a v2 batch.
const (
	offBaseOffset      = 0
	offLength          = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offFirstTimestamp  = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offNumRecords      = 57
)

// Attribute bits.
const (
	codecMask         = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
	// attrDeleteHorizon marks a batch Kafka's log cleaner (KIP-534, Kafka
	// 3.1+) rewrote with tombstones or markers in it: its first timestamp
	// is then the time after which the cleaner may delete them, not a
	// record's timestamp, and its records' timestamp deltas are relative
	// to it. Producers never set it.
	attrDeleteHorizon = 0x40
)

// Header is the fixed part of a v2 record batch.
type Header struct {
	BaseOffset           int64
	Length               int32 // bytes after the Length field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// Codec is the compression codec of a batch.
type Codec int8

// Codecs, as numbered in the batch attributes.
const (
	None Codec = iota
	Gzip
	Snappy
	Lz4
	Zstd
)

func (c Codec) String() string {
	switch c {
	case None:
		return "none"
	case Gzip:
		return "gzip"
	case Snappy:
		return "snappy"
	case Lz4:
		return "lz4"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// CodecNamed returns the codec of a Java compression.type name, or -1.
func CodecNamed(name string) Codec {
	for c := None; c <= Zstd; c++ {
		if c.String() == name {
			return c
		}
	}
	return -1
}

// Codec returns the batch's compression codec.
func (h Header) Codec() Codec { return Codec(h.Attributes & codecMask) }

// LogAppendTime reports whether the broker stamped the batch's timestamp.
func (h Header) LogAppendTime() bool { return h.Attributes&attrLogAppendTime != 0 }

// Transactional reports whether the batch belongs to a transaction.
func (h Header) Transactional() bool { return h.Attributes&attrTransactional != 0 }

// Control reports whether the batch holds a transaction marker.
func (h Header) Control() bool { return h.Attributes&attrControl != 0 }

// DeleteHorizon reports whether the batch's first timestamp is a delete
// horizon a log cleaner set, not its first record's timestamp.
func (h Header) DeleteHorizon() bool { return h.Attributes&attrDeleteHorizon != 0 }

// LastOffset is the offset of the batch's last record.
func (h Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is the offset after the batch.
func (h Header) NextOffset() int64 { return h.LastOffset() + 1 }

// Size is the batch's total size in bytes.
func (h Header) Size() int { return 12 + int(h.Length) }

// Contiguous reports whether the batch has a record at every offset it
// spans. Compaction leaves holes, and brokers reject produced batches with
// holes, so only contiguous batches can be forwarded as they are.
func (h Header) Contiguous() bool { return int64(h.NumRecords) == int64(h.LastOffsetDelta)+1 }

// ErrOldFormat reports a message set older than v2 (magic 0 or 1).
var ErrOldFormat = errors.New("message format older than v2")

// Parse reads the header of the batch at the start of b. It returns
// io.ErrUnexpectedEOF-like ErrPartial when b holds only part of the batch
// (fetch responses may end with a partial batch).
func Parse(b []byte) (Header, error) {
	if len(b) < offMagic+1 {
		return Header{}, ErrPartial
	}
	var h Header
	h.BaseOffset = int64(binary.BigEndian.Uint64(b[offBaseOffset:]))
	h.Length = int32(binary.BigEndian.Uint32(b[offLength:]))
	h.Magic = int8(b[offMagic])
	if h.Length < 0 {
		return h, fmt.Errorf("batch at offset %d: negative length %d", h.BaseOffset, h.Length)
	}
	if h.Magic != 2 {
		return h, ErrOldFormat
	}
	if int(h.Length) < HeaderSize-12 {
		return h, fmt.Errorf("batch at offset %d: length %d is shorter than a v2 header", h.BaseOffset, h.Length)
	}
	if len(b) < h.Size() {
		return h, ErrPartial
	}
	h.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(b[offLeaderEpoch:]))
	h.CRC = binary.BigEndian.Uint32(b[offCRC:])
	h.Attributes = int16(binary.BigEndian.Uint16(b[offAttributes:]))
	h.LastOffsetDelta = int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:]))
	h.FirstTimestamp = int64(binary.BigEndian.Uint64(b[offFirstTimestamp:]))
	h.MaxTimestamp = int64(binary.BigEndian.Uint64(b[offMaxTimestamp:]))
	h.ProducerID = int64(binary.BigEndian.Uint64(b[offProducerID:]))
	h.ProducerEpoch = int16(binary.BigEndian.Uint16(b[offProducerEpoch:]))
	h.BaseSequence = int32(binary.BigEndian.Uint32(b[offBaseSequence:]))
	h.NumRecords = int32(binary.BigEndian.Uint32(b[offNumRecords:]))
	if h.LastOffsetDelta < 0 || h.NumRecords < 0 {
		return h, fmt.Errorf("batch at offset %d: negative lastOffsetDelta %d or record count %d", h.BaseOffset, h.LastOffsetDelta, h.NumRecords)
	}
	return h, nil
}

// ErrPartial reports a batch cut off at the end of the buffer.
var ErrPartial = errors.New("partial batch")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ValidCRC reports whether the batch's CRC matches its content.
func ValidCRC(b []byte, h Header) bool {
	return crc32.Checksum(b[offAttributes:h.Size()], castagnoli) == h.CRC
}

// Rewrite prepares a batch, in place, to be produced by another producer:
// base offset 0, no leader epoch, the given producer id, epoch and base
// sequence (-1, -1, -1 for a non-idempotent producer), the transactional
// bit set only when the producer writes it inside its own transaction (the
// replica is never part of the source's transaction), no delete horizon,
// and a new CRC. Records, their offset deltas, timestamps and the
// compressed payload are untouched.
//
// A delete horizon is the source cleaner's: brokers keep it on a produced
// batch, and the target's cleaner would then drop the batch's tombstones
// once the source's horizon passed, whatever the target's
// delete.retention.ms. Clearing the bit alone keeps every record's
// timestamp (the first timestamp plus the record's delta, with the bit or
// without); the first timestamp stays the horizon, which is why
// NeedsRebuild sends such batches to Rebuild. This is the guard for any
// other way one gets here.
func Rewrite(b []byte, h Header, producerID int64, epoch int16, baseSequence int32, transactional bool) {
	attrs := h.Attributes &^ (attrTransactional | attrDeleteHorizon)
	if transactional {
		attrs |= attrTransactional
	}
	binary.BigEndian.PutUint64(b[offBaseOffset:], 0)
	binary.BigEndian.PutUint32(b[offLeaderEpoch:], uint32(0xFFFFFFFF))
	binary.BigEndian.PutUint16(b[offAttributes:], uint16(attrs))
	binary.BigEndian.PutUint64(b[offProducerID:], uint64(producerID))
	binary.BigEndian.PutUint16(b[offProducerEpoch:], uint16(epoch))
	binary.BigEndian.PutUint32(b[offBaseSequence:], uint32(baseSequence))
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:h.Size()], castagnoli))
}

// ControlType reads the marker type of a control batch: abort or commit.
// A control record's key is INT16 version, INT16 type (0 abort, 1 commit).
func ControlType(b []byte, h Header) (commit bool, err error) {
	recs := b[HeaderSize:h.Size()]
	// record: length varint, attributes int8, timestampDelta varint,
	// offsetDelta varint, keyLength varint, key...
	var n int
	if _, n = binary.Varint(recs); n <= 0 {
		return false, errBadControl
	}
	recs = recs[n:]
	if len(recs) < 1 {
		return false, errBadControl
	}
	recs = recs[1:]
	for i := 0; i < 2; i++ { // timestampDelta, offsetDelta
		if _, n = binary.Varint(recs); n <= 0 {
			return false, errBadControl
		}
		recs = recs[n:]
	}
	keyLen, n := binary.Varint(recs)
	if n <= 0 || keyLen < 4 || int64(len(recs)-n) < keyLen {
		return false, errBadControl
	}
	key := recs[n:]
	return binary.BigEndian.Uint16(key[2:]) == 1, nil
}

var errBadControl = errors.New("undecodable control record")

// AbortedTxn is one aborted transaction listed in a read_committed fetch
// response: the producer and the offset of its first record.
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
}

// Filter tells, for the batches of one read_committed fetch response in
// order, which ones hold data that must be copied, as Kafka's consumer
// does: a transactional batch of a producer whose transaction was aborted
// is skipped until that producer's abort marker; markers are never copied.
type Filter struct {
	pending []AbortedTxn // not yet reached, by first offset
	active  map[int64]bool
}

// NewFilter returns a filter for a response's aborted transactions. With
// read_uncommitted, pass nil: only markers are skipped.
func NewFilter(aborted []AbortedTxn) *Filter {
	p := append([]AbortedTxn(nil), aborted...)
	for i := 1; i < len(p); i++ { // insertion sort: lists are short and nearly sorted
		for j := i; j > 0 && p[j].FirstOffset < p[j-1].FirstOffset; j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
	return &Filter{pending: p, active: map[int64]bool{}}
}

// Skip reports whether the batch must not be copied: a control batch (a
// transaction marker) or data of an aborted transaction. Batches must be
// passed in offset order.
func (f *Filter) Skip(b []byte, h Header) bool {
	if h.ProducerID >= 0 {
		for len(f.pending) > 0 && f.pending[0].FirstOffset <= h.LastOffset() {
			f.active[f.pending[0].ProducerID] = true
			f.pending = f.pending[1:]
		}
		if h.Control() {
			if commit, err := ControlType(b, h); err == nil && !commit {
				delete(f.active, h.ProducerID)
			}
			return true
		}
		if h.Transactional() && f.active[h.ProducerID] {
			return true
		}
	}
	return h.Control()
}
