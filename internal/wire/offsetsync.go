package wire

import "encoding/binary"

// OffsetSync is MM2's offset-sync record (topic
// "mm2-offset-syncs.<cluster>.internal"): a pair of matching offsets of one
// source partition and its replica, from which checkpoints are translated.
//
// Key: STRING topic, INT32 partition. Value (no version header): INT64
// upstreamOffset, INT64 offset.
type OffsetSync struct {
	// Topic and Partition name the source (upstream) partition.
	Topic     string
	Partition int32
	// UpstreamOffset is the source offset; DownstreamOffset the target offset
	// of the same record.
	UpstreamOffset, DownstreamOffset int64
}

// AppendKey appends the record key to dst. It fails, leaving dst unchanged,
// when the topic is longer than a Kafka STRING allows (32767 bytes).
func (s OffsetSync) AppendKey(dst []byte) ([]byte, error) {
	if err := checkStringLen(KindOffsetSync, "topic", s.Topic); err != nil {
		return dst, err
	}
	dst = appendString(dst, s.Topic)
	return binary.BigEndian.AppendUint32(dst, uint32(s.Partition)), nil
}

// AppendValue appends the record value to dst.
func (s OffsetSync) AppendValue(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.UpstreamOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(s.DownstreamOffset))
}

// DecodeOffsetSync decodes an offset-sync record. Like Java it ignores
// trailing bytes.
func DecodeOffsetSync(key, value []byte) (OffsetSync, error) {
	if key == nil {
		return OffsetSync{}, tombstone(KindOffsetSync, "key")
	}
	if value == nil {
		return OffsetSync{}, tombstone(KindOffsetSync, "value")
	}
	var s OffsetSync
	var err error
	k := reader{kind: KindOffsetSync, b: key}
	if s.Topic, err = k.string("topic"); err != nil {
		return OffsetSync{}, err
	}
	if s.Partition, err = k.int32("partition"); err != nil {
		return OffsetSync{}, err
	}
	v := reader{kind: KindOffsetSync, b: value}
	if s.UpstreamOffset, err = v.int64("upstreamOffset"); err != nil {
		return OffsetSync{}, err
	}
	if s.DownstreamOffset, err = v.int64("offset"); err != nil {
		return OffsetSync{}, err
	}
	return s, nil
}
