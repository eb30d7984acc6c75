// Package flow holds the small types that both copy paths of a flow, the
// record path (package mirror) and the fast path (package
// mirror/fastpath), use alike: the classes of Kafka errors and their
// counts, the bandwidth throttle, the totals copied, the node's Share of
// the flow, its Provenance in an active-active pair, and the errors that
// stop a partition whichever path copies it. It imports neither path.
package flow

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Class is what the data plane does about an error from Kafka. Both
// paths classify with the one function below, so a Kafka error means the
// same on the fast path and on the record path.
type Class int

const (
	// Stop stops the partition with the error: nothing is skipped, and
	// retrying would not help.
	Stop Class = iota
	// Retry is transient: try again after a backoff, with fresh metadata.
	Retry
	// RenewProducer means the broker lost or rejected the producer's
	// state: a new producer id, which renumbers every partition.
	RenewProducer
	// Rejected means the target refuses a batch as it is (too large,
	// invalid): the record path may still copy its records one by one; on
	// the record path it stops the partition.
	Rejected
	// Truncated means the source no longer has the offset (retention,
	// DeleteRecords, a truncated or recreated topic): the partition stops
	// with an error that says which records were lost.
	Truncated
	// Shutdown is the flow stopping: nothing to report.
	Shutdown
)

// Classify sorts an error of a fetch or a produce into its class.
func Classify(err error) Class {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, kgo.ErrClientClosed):
		return Shutdown
	case errors.Is(err, kerr.OffsetOutOfRange):
		return Truncated
	case errors.Is(err, kerr.OutOfOrderSequenceNumber), errors.Is(err, kerr.UnknownProducerID),
		errors.Is(err, kerr.InvalidProducerEpoch), errors.Is(err, kerr.InvalidProducerIDMapping),
		errors.Is(err, kerr.ProducerFenced):
		return RenewProducer
	case TooLarge(err), errors.Is(err, kerr.InvalidRecord), errors.Is(err, kerr.CorruptMessage),
		errors.Is(err, kerr.UnsupportedCompressionType), errors.Is(err, kerr.InvalidTimestamp):
		return Rejected
	case kerr.IsRetriable(err), errors.Is(err, kerr.UnknownTopicID), errors.Is(err, kerr.UnknownTopicOrPartition),
		errors.Is(err, context.DeadlineExceeded):
		return Retry
	}
	return Stop
}

// TooLarge reports an error for a record or batch over a size limit, from
// the broker (max.message.bytes, message.max.bytes) or from the producer
// itself (max.request.size; franz-go reports it as MESSAGE_TOO_LARGE too).
func TooLarge(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)
}

// ErrorCounts counts the errors the data plane met, by side and class,
// for metrics. Counting never changes what happens.
type ErrorCounts struct {
	n [2][Shutdown + 1]atomic.Int64
}

// Sides of the data plane an error comes from.
const (
	SideFetch = iota
	SideProduce
)

// Count counts err (nil and shutdown errors are not counted).
func (c *ErrorCounts) Count(side int, err error) {
	if c == nil || err == nil {
		return
	}
	if k := Classify(err); k != Shutdown {
		c.n[side][k].Add(1)
	}
}

// Snapshot returns the counts by kind ("fetch_retriable", ...), only the
// kinds seen.
func (c *ErrorCounts) Snapshot() map[string]int64 {
	out := map[string]int64{}
	for side, name := range []string{"fetch", "produce"} {
		for k := range Shutdown {
			if v := c.n[side][k].Load(); v > 0 {
				out[name+"_"+classNames[k]] = v
			}
		}
	}
	return out
}

var classNames = [...]string{
	Stop:          "fatal",
	Retry:         "retriable",
	RenewProducer: "producer_state",
	Rejected:      "rejected",
	Truncated:     "truncated",
	Shutdown:      "shutdown",
}
