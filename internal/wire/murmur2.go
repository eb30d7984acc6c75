package wire

import (
	"encoding/binary"
	"fmt"
)

// Murmur2 is Kafka's murmur2 hash (org.apache.kafka.common.utils.Utils.murmur2),
// which the default partitioner applies to record keys.
func Murmur2(b []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	h := seed ^ uint32(len(b))
	n := len(b) &^ 3
	for i := 0; i < n; i += 4 {
		k := binary.LittleEndian.Uint32(b[i:])
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch len(b) & 3 {
	case 3:
		h ^= uint32(b[n+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(b[n+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(b[n])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// DefaultPartition is the partition Kafka's default partitioner picks for a
// non-null key: (murmur2(key) & 0x7fffffff) % numPartitions. Connect uses it
// for its offsets topic, so keys Strait writes there must land where Java
// would look. It panics if numPartitions is not positive, a programming error
// (Java throws ArithmeticException).
func DefaultPartition(key []byte, numPartitions int32) int32 {
	if numPartitions <= 0 {
		panic(fmt.Sprintf("wire: DefaultPartition called with %d partitions; a topic has at least 1", numPartitions))
	}
	return (Murmur2(key) & 0x7fffffff) % numPartitions
}
