package wire

import "encoding/binary"

// Heartbeat is MM2's heartbeat record (topic "heartbeats"), emitted by the
// s->t flow into cluster t. MM2 reads heartbeat topic names, not contents, but
// tools such as kafka-console-consumer's HeartbeatFormatter decode them.
//
// Key: STRING sourceClusterAlias, STRING targetClusterAlias.
// Value: INT16 version (0), INT64 timestamp.
type Heartbeat struct {
	SourceAlias, TargetAlias string
	// Timestamp is in milliseconds since the Unix epoch; MM2 also uses it as
	// the record timestamp.
	Timestamp int64
}

// AppendKey appends the record key to dst. It fails, leaving dst unchanged,
// when an alias is longer than a Kafka STRING allows (32767 bytes).
func (h Heartbeat) AppendKey(dst []byte) ([]byte, error) {
	if err := checkStringLen(KindHeartbeat, "sourceClusterAlias", h.SourceAlias); err != nil {
		return dst, err
	}
	if err := checkStringLen(KindHeartbeat, "targetClusterAlias", h.TargetAlias); err != nil {
		return dst, err
	}
	dst = appendString(dst, h.SourceAlias)
	return appendString(dst, h.TargetAlias), nil
}

// AppendValue appends the record value (version 0) to dst.
func (h Heartbeat) AppendValue(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, valueVersion)
	return binary.BigEndian.AppendUint64(dst, uint64(h.Timestamp))
}

// DecodeHeartbeat decodes a heartbeat record. Like Java it ignores trailing
// bytes and parses any value version as version 0.
func DecodeHeartbeat(key, value []byte) (Heartbeat, error) {
	if key == nil {
		return Heartbeat{}, tombstone(KindHeartbeat, "key")
	}
	if value == nil {
		return Heartbeat{}, tombstone(KindHeartbeat, "value")
	}
	var h Heartbeat
	var err error
	k := reader{kind: KindHeartbeat, b: key}
	if h.SourceAlias, err = k.string("sourceClusterAlias"); err != nil {
		return Heartbeat{}, err
	}
	if h.TargetAlias, err = k.string("targetClusterAlias"); err != nil {
		return Heartbeat{}, err
	}
	v := reader{kind: KindHeartbeat, b: value}
	if _, err = v.int16("version"); err != nil {
		return Heartbeat{}, err
	}
	if h.Timestamp, err = v.int64("timestamp"); err != nil {
		return Heartbeat{}, err
	}
	return h, nil
}
