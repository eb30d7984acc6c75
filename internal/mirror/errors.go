package mirror

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// errClass is what the data plane does about an error from Kafka. Both
// paths classify with the one function below, so a Kafka error means the
// same on the fast path and on the record path.
type errClass int

const (
	// errStop stops the partition with the error: nothing is skipped, and
	// retrying would not help.
	errStop errClass = iota
	// errRetry is transient: try again after a backoff, with fresh metadata.
	errRetry
	// errRenewProducer means the broker lost or rejected the producer's
	// state: a new producer id, which renumbers every partition.
	errRenewProducer
	// errRejected means the target refuses a batch as it is (too large,
	// invalid): the record path may still copy its records one by one; on
	// the record path it stops the partition.
	errRejected
	// errTruncated means the source no longer has the offset (retention,
	// DeleteRecords, a truncated or recreated topic): the partition stops
	// with an error that says which records were lost.
	errTruncated
	// errShutdown is the flow stopping: nothing to report.
	errShutdown
)

// classify sorts an error of a fetch or a produce into its class.
func classify(err error) errClass {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, kgo.ErrClientClosed):
		return errShutdown
	case errors.Is(err, kerr.OffsetOutOfRange):
		return errTruncated
	case errors.Is(err, kerr.OutOfOrderSequenceNumber), errors.Is(err, kerr.UnknownProducerID),
		errors.Is(err, kerr.InvalidProducerEpoch), errors.Is(err, kerr.InvalidProducerIDMapping),
		errors.Is(err, kerr.ProducerFenced):
		return errRenewProducer
	case tooLarge(err), errors.Is(err, kerr.InvalidRecord), errors.Is(err, kerr.CorruptMessage),
		errors.Is(err, kerr.UnsupportedCompressionType), errors.Is(err, kerr.InvalidTimestamp):
		return errRejected
	case kerr.IsRetriable(err), errors.Is(err, kerr.UnknownTopicID), errors.Is(err, kerr.UnknownTopicOrPartition),
		errors.Is(err, context.DeadlineExceeded):
		return errRetry
	}
	return errStop
}

// tooLarge reports an error for a record or batch over a size limit, from
// the broker (max.message.bytes, message.max.bytes) or from the producer
// itself (max.request.size; franz-go reports it as MESSAGE_TOO_LARGE too).
func tooLarge(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)
}

// errorCounts counts the errors the data plane met, by side and class,
// for metrics. Counting never changes what happens.
type errorCounts struct {
	n [2][errShutdown + 1]atomic.Int64
}

// Sides of the data plane an error comes from.
const (
	sideFetch = iota
	sideProduce
)

// count counts err (nil and shutdown errors are not counted).
func (c *errorCounts) count(side int, err error) {
	if c == nil || err == nil {
		return
	}
	if k := classify(err); k != errShutdown {
		c.n[side][k].Add(1)
	}
}

// snapshot returns the counts by kind ("fetch_retriable", ...), only the
// kinds seen.
func (c *errorCounts) snapshot() map[string]int64 {
	out := map[string]int64{}
	for side, name := range []string{"fetch", "produce"} {
		for k := range errShutdown {
			if v := c.n[side][k].Load(); v > 0 {
				out[name+"_"+errClassNames[k]] = v
			}
		}
	}
	return out
}

var errClassNames = [...]string{
	errStop:          "fatal",
	errRetry:         "retriable",
	errRenewProducer: "producer_state",
	errRejected:      "rejected",
	errTruncated:     "truncated",
	errShutdown:      "shutdown",
}
