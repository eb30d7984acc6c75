package wire

import (
	"errors"
	"strconv"
)

// Kind names the record type a DecodeError is about. The set is fixed, so it
// is safe to use as a metric label.
type Kind string

// The record kinds decoded by this package.
const (
	KindHeartbeat          Kind = "heartbeat"
	KindCheckpoint         Kind = "checkpoint"
	KindOffsetSync         Kind = "offset sync"
	KindConnectOffsetKey   Kind = "connect offset key"
	KindConnectOffsetValue Kind = "connect offset value"
	KindIndexSegment       Kind = "index segment"
)

// ErrTombstone is wrapped by the DecodeError returned for a nil key or value.
// MM2 never writes tombstones to its heartbeat, checkpoint and offset-sync
// topics, so callers usually skip such records; errors.Is tells them apart
// from corrupt ones.
var ErrTombstone = errors.New("tombstone (null key or value)")

// DecodeError reports a record that could not be decoded: which kind of
// record, which field, and why. Callers count these per Kind and skip the
// record, as Java MM2 skips records that raise SchemaException.
type DecodeError struct {
	// Kind is the record type being decoded.
	Kind Kind
	// Field is the field that failed, named as in MM2's Java schemas
	// ("sourceClusterAlias", "upstreamOffset", "metadata", ...), or "key" /
	// "value" for a problem with the whole key or value.
	Field string
	// Reason says what is wrong, e.g. "string length 9 exceeds the 3 bytes left".
	Reason string
	// Err is the underlying cause (ErrTombstone, a JSON syntax error), or nil.
	Err error
}

// Error implements error.
func (e *DecodeError) Error() string {
	writer := "MirrorMaker 2"
	if e.Kind == KindIndexSegment {
		writer = "Strait"
	}
	return "wire: cannot decode " + string(e.Kind) + " field " + strconv.Quote(e.Field) + ": " + e.Reason +
		"; skip the record, it is corrupt or was not written by " + writer
}

// Unwrap returns the underlying cause, if any.
func (e *DecodeError) Unwrap() error { return e.Err }

func tombstone(kind Kind, field string) *DecodeError {
	return &DecodeError{Kind: kind, Field: field, Reason: "the " + field + " is null (a tombstone)", Err: ErrTombstone}
}
