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
// Value: INT16 version (0), INT64 src, INT64 tgt, INT64 len, INT64 covered,
// INT64 start, 16 bytes source topic ID. Covered is the partition's coverage
// when the record was written (every source offset below it was accounted
// for); start is where replication of the partition began (-1 unknown).
type IndexSegment struct {
	Topic     string
	Partition int32
	Src, Tgt  int64
	Len       int64
	Covered   int64
	Start     int64
	TopicID   [16]byte
}

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

// AppendValue appends the record value to dst.
func (s IndexSegment) AppendValue(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, valueVersion)
	for _, v := range []int64{s.Src, s.Tgt, s.Len, s.Covered, s.Start} {
		dst = binary.BigEndian.AppendUint64(dst, uint64(v))
	}
	return append(dst, s.TopicID[:]...)
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
	if _, err = r.int16("version"); err != nil {
		return IndexSegment{}, err
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
	if s.Tgt != k.Tgt || s.Len < 0 {
		return IndexSegment{}, r.fail("tgt", "value (tgt %d, len %d) does not match key tgt %d", s.Tgt, s.Len, k.Tgt)
	}
	return s, nil
}
