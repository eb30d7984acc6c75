package wire

import (
	"encoding/binary"
	"fmt"
	"math"
)

// maxStringLen is the longest Kafka protocol STRING: its length is an INT16.
const maxStringLen = math.MaxInt16

// valueVersion is the only value version MM2 has ever written for heartbeats
// and checkpoints.
const valueVersion = 0

// checkStringLen reports a string that cannot be written as a Kafka STRING.
// Java fails the same way (SchemaException) when it serializes such a record.
func checkStringLen(kind Kind, field, s string) error {
	if len(s) > maxStringLen {
		return fmt.Errorf("wire: encoding %s: field %q is %d bytes, over the %d-byte limit of a Kafka STRING; shorten it",
			kind, field, len(s), maxStringLen)
	}
	return nil
}

// appendString appends a Kafka STRING; the caller has checked the length.
func appendString(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

// reader reads Kafka protocol types from b, failing with a *DecodeError that
// names the field. Trailing bytes are never checked, as in Java.
type reader struct {
	kind Kind
	b    []byte
}

func (r *reader) fail(field, format string, args ...any) *DecodeError {
	return &DecodeError{Kind: r.kind, Field: field, Reason: fmt.Sprintf(format, args...)}
}

func (r *reader) need(field, typ string, n int) error {
	if len(r.b) < n {
		return r.fail(field, "need %d bytes for %s, have %d", n, typ, len(r.b))
	}
	return nil
}

func (r *reader) int16(field string) (int16, error) {
	if err := r.need(field, "INT16", 2); err != nil {
		return 0, err
	}
	v := int16(binary.BigEndian.Uint16(r.b))
	r.b = r.b[2:]
	return v, nil
}

func (r *reader) int32(field string) (int32, error) {
	if err := r.need(field, "INT32", 4); err != nil {
		return 0, err
	}
	v := int32(binary.BigEndian.Uint32(r.b))
	r.b = r.b[4:]
	return v, nil
}

func (r *reader) int64(field string) (int64, error) {
	if err := r.need(field, "INT64", 8); err != nil {
		return 0, err
	}
	v := int64(binary.BigEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v, nil
}

// string reads a Kafka STRING. Its bytes are kept as they are, valid UTF-8 or
// not (Java would substitute U+FFFD), so re-encoding is byte-exact.
func (r *reader) string(field string) (string, error) {
	if err := r.need(field, "the STRING length", 2); err != nil {
		return "", err
	}
	n := int16(binary.BigEndian.Uint16(r.b))
	if n < 0 {
		return "", r.fail(field, "string length %d is negative", n)
	}
	if int(n) > len(r.b)-2 {
		return "", r.fail(field, "string length %d exceeds the %d bytes left", n, len(r.b)-2)
	}
	s := string(r.b[2 : 2+int(n)])
	r.b = r.b[2+int(n):]
	return s, nil
}
