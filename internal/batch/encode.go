package batch

import (
	"encoding/binary"
	"errors"
	"math"
)

// KV is one record Strait writes itself (an offset index segment): a key,
// and a value that is nil for a tombstone.
type KV struct {
	Key, Value []byte
}

// Encode builds an uncompressed v2 batch of recs, all stamped CreateTime
// timestamp (milliseconds), with no producer (Rewrite sets one). Exactly-
// once mode writes the offset index this way, inside the transaction that
// holds the data it indexes: franz-go's producer cannot join a transaction
// whose producer id the fast path owns.
func Encode(recs []KV, timestamp int64) (Header, []byte, error) {
	if len(recs) == 0 {
		return Header{}, nil, errors.New("encoding a batch of no records")
	}
	var out []byte
	for i, r := range recs {
		var body []byte
		body = append(body, 0)                     // record attributes
		body = binary.AppendVarint(body, 0)        // timestamp delta
		body = binary.AppendVarint(body, int64(i)) // offset delta
		body = binary.AppendVarint(body, int64(len(r.Key)))
		body = append(body, r.Key...)
		if r.Value == nil {
			body = binary.AppendVarint(body, -1)
		} else {
			body = binary.AppendVarint(body, int64(len(r.Value)))
			body = append(body, r.Value...)
		}
		body = binary.AppendVarint(body, 0) // no headers
		out = binary.AppendVarint(out, int64(len(body)))
		out = append(out, body...)
	}
	if HeaderSize+len(out)-12 > math.MaxInt32 {
		return Header{}, nil, errors.New("the records do not fit a batch")
	}
	h := Header{
		Magic: 2, PartitionLeaderEpoch: -1,
		LastOffsetDelta: int32(len(recs) - 1), NumRecords: int32(len(recs)),
		FirstTimestamp: timestamp, MaxTimestamp: timestamp,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
	}
	b := assemble(&h, out)
	return h, b, nil
}
