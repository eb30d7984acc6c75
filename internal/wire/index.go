package wire

import "encoding/binary"

// IndexSegment is Strait's own record of its exact offset index (topic
// "strait-index.<source>.internal" on the target): source offsets
// [Src, Src+Len) of a partition were written at target offsets
// [Tgt, Tgt+Len). The key is (topic, partition, Tgt), so the topic can be
// compacted: a growing segment overwrites itself, and a tombstone removes a
// segment that a replay or pruning made obsolete.
//
// Key: STRING topic (source), INT32 partition, INT64 tgt.
// Value, version 0 (an exact segment): INT16 version (0), INT64 src,
// INT64 tgt, INT64 len, INT64 covered, INT64 start, 16 bytes source topic
// ID. Covered is the partition's coverage when the record was written
// (every source offset below it was accounted for); start is where
// replication of the partition began (-1 unknown).
// Value, version 1 (a coarse segment, see offsets.Segment): version 0's
// fields with version 1, then INT64 tgtLen (> 0) and INT64 mapped
// (0 <= mapped <= min(len, tgtLen)). Exact segments are still written as
// version 0, so their records are byte for byte what they were.
type IndexSegment struct {
	Topic     string
	Partition int32
	Src, Tgt  int64
	Len       int64
	Covered   int64
	Start     int64
	TopicID   [16]byte
	// TgtLen and Mapped are a coarse segment's target length and count of
	// exactly mapped offsets; both 0 for an exact segment.
	TgtLen int64
	Mapped int64
}

// Index segment value versions.
const (
	indexExact  = 0
	indexCoarse = 1
)

// IndexKey identifies a segment.
type IndexKey struct {
	Topic     string
	Partition int32
	Tgt       int64
}

// AppendKey appends the record key to dst.
func (k IndexKey) AppendKey(dst []byte) ([]byte, error) {
	if err := checkStringLen(KindIndexSegment, "topic", k.Topic); err != nil {
		return dst, err
	}
	dst = appendString(dst, k.Topic)
	dst = binary.BigEndian.AppendUint32(dst, uint32(k.Partition))
	return binary.BigEndian.AppendUint64(dst, uint64(k.Tgt)), nil
}

// Key returns the segment's key.
func (s IndexSegment) Key() IndexKey {
	return IndexKey{Topic: s.Topic, Partition: s.Partition, Tgt: s.Tgt}
}

// AppendValue appends the record value to dst: version 1 for a coarse
// segment (TgtLen > 0), else version 0.
func (s IndexSegment) AppendValue(dst []byte) []byte {
	version := uint16(indexExact)
	if s.TgtLen > 0 {
		version = indexCoarse
	}
	dst = binary.BigEndian.AppendUint16(dst, version)
	for _, v := range []int64{s.Src, s.Tgt, s.Len, s.Covered, s.Start} {
		dst = binary.BigEndian.AppendUint64(dst, uint64(v))
	}
	dst = append(dst, s.TopicID[:]...)
	if version == indexCoarse {
		dst = binary.BigEndian.AppendUint64(dst, uint64(s.TgtLen))
		dst = binary.BigEndian.AppendUint64(dst, uint64(s.Mapped))
	}
	return dst
}

// DecodeIndexKey decodes a segment key.
func DecodeIndexKey(key []byte) (IndexKey, error) {
	if key == nil {
		return IndexKey{}, tombstone(KindIndexSegment, "key")
	}
	var k IndexKey
	var err error
	r := reader{kind: KindIndexSegment, b: key}
	if k.Topic, err = r.string("topic"); err != nil {
		return IndexKey{}, err
	}
	if k.Partition, err = r.int32("partition"); err != nil {
		return IndexKey{}, err
	}
	if k.Tgt, err = r.int64("tgt"); err != nil {
		return IndexKey{}, err
	}
	return k, nil
}

// DecodeIndexSegment decodes a segment record. A nil value is a tombstone
// (the segment was removed) and returns an error wrapping ErrTombstone
// together with the decoded key fields.
func DecodeIndexSegment(key, value []byte) (IndexSegment, error) {
	k, err := DecodeIndexKey(key)
	if err != nil {
		return IndexSegment{}, err
	}
	s := IndexSegment{Topic: k.Topic, Partition: k.Partition, Tgt: k.Tgt}
	if value == nil {
		return s, tombstone(KindIndexSegment, "value")
	}
	r := reader{kind: KindIndexSegment, b: value}
	version, err := r.int16("version")
	if err != nil {
		return IndexSegment{}, err
	}
	if version != indexExact && version != indexCoarse {
		// A segment this version cannot read: reading it as another
		// would translate wrongly.
		return IndexSegment{}, r.fail("version", "version %d is not one this Strait reads (0, 1): it was written by a newer Strait", version)
	}
	fields := []struct {
		name string
		dst  *int64
	}{{"src", &s.Src}, {"tgt", &s.Tgt}, {"len", &s.Len}, {"covered", &s.Covered}, {"start", &s.Start}}
	for _, f := range fields {
		if *f.dst, err = r.int64(f.name); err != nil {
			return IndexSegment{}, err
		}
	}
	if err = r.need("topicId", "the topic ID", 16); err != nil {
		return IndexSegment{}, err
	}
	copy(s.TopicID[:], r.b[:16])
	r.b = r.b[16:]
	if s.Tgt != k.Tgt || s.Len < 0 {
		return IndexSegment{}, r.fail("tgt", "value (tgt %d, len %d) does not match key tgt %d", s.Tgt, s.Len, k.Tgt)
	}
	if version == indexCoarse {
		if s.TgtLen, err = r.int64("tgtLen"); err != nil {
			return IndexSegment{}, err
		}
		if s.Mapped, err = r.int64("mapped"); err != nil {
			return IndexSegment{}, err
		}
		if s.Len <= 0 || s.TgtLen <= 0 || s.Mapped < 0 || s.Mapped > min(s.Len, s.TgtLen) {
			return IndexSegment{}, r.fail("mapped", "coarse segment with len %d, tgtLen %d, mapped %d: want len and tgtLen > 0 and 0 <= mapped <= both", s.Len, s.TgtLen, s.Mapped)
		}
	}
	return s, nil
}
