package wire

import "encoding/binary"

// Checkpoint is MM2's checkpoint record (topic "<source>.checkpoints.internal"
// on the target): where a consumer group's committed source offset lands on
// the target. Java's RemoteClusterUtils.translateOffsets reads these.
//
// Key: STRING group, STRING topic, INT32 partition.
// Value: INT16 version (0), INT64 upstreamOffset, INT64 offset, STRING metadata.
type Checkpoint struct {
	Group string
	// Topic and Partition are the target-side (renamed) names, e.g. "A.orders".
	Topic     string
	Partition int32
	// UpstreamOffset is the group's committed offset on the source;
	// DownstreamOffset is its translation on the target.
	UpstreamOffset, DownstreamOffset int64
	// Metadata is the consumer's commit metadata; never null, "" when absent.
	Metadata string
}

// AppendKey appends the record key to dst. It fails, leaving dst unchanged,
// when the group or topic is longer than a Kafka STRING allows (32767 bytes).
func (c Checkpoint) AppendKey(dst []byte) ([]byte, error) {
	if err := checkStringLen(KindCheckpoint, "group", c.Group); err != nil {
		return dst, err
	}
	if err := checkStringLen(KindCheckpoint, "topic", c.Topic); err != nil {
		return dst, err
	}
	dst = appendString(dst, c.Group)
	dst = appendString(dst, c.Topic)
	return binary.BigEndian.AppendUint32(dst, uint32(c.Partition)), nil
}

// AppendValue appends the record value (version 0) to dst. It fails, leaving
// dst unchanged, when the metadata is longer than 32767 bytes; a consumer may
// commit such metadata, but MM2 cannot checkpoint it either.
func (c Checkpoint) AppendValue(dst []byte) ([]byte, error) {
	if err := checkStringLen(KindCheckpoint, "metadata", c.Metadata); err != nil {
		return dst, err
	}
	dst = binary.BigEndian.AppendUint16(dst, valueVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.UpstreamOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.DownstreamOffset))
	return appendString(dst, c.Metadata), nil
}

// DecodeCheckpointKey decodes a checkpoint record's key alone: the group,
// topic and partition a tombstone deletes the checkpoint of.
func DecodeCheckpointKey(key []byte) (Checkpoint, error) {
	if key == nil {
		return Checkpoint{}, tombstone(KindCheckpoint, "key")
	}
	var c Checkpoint
	var err error
	k := reader{kind: KindCheckpoint, b: key}
	if c.Group, err = k.string("group"); err != nil {
		return Checkpoint{}, err
	}
	if c.Topic, err = k.string("topic"); err != nil {
		return Checkpoint{}, err
	}
	if c.Partition, err = k.int32("partition"); err != nil {
		return Checkpoint{}, err
	}
	return c, nil
}

// DecodeCheckpoint decodes a checkpoint record. Like Java it ignores trailing
// bytes and parses any value version as version 0.
func DecodeCheckpoint(key, value []byte) (Checkpoint, error) {
	c, err := DecodeCheckpointKey(key)
	if err != nil {
		return Checkpoint{}, err
	}
	if value == nil {
		return Checkpoint{}, tombstone(KindCheckpoint, "value")
	}
	v := reader{kind: KindCheckpoint, b: value}
	if _, err = v.int16("version"); err != nil {
		return Checkpoint{}, err
	}
	if c.UpstreamOffset, err = v.int64("upstreamOffset"); err != nil {
		return Checkpoint{}, err
	}
	if c.DownstreamOffset, err = v.int64("offset"); err != nil {
		return Checkpoint{}, err
	}
	if c.Metadata, err = v.string("metadata"); err != nil {
		return Checkpoint{}, err
	}
	return c, nil
}
