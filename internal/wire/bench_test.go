package wire

import "testing"

var (
	benchHeartbeat  = Heartbeat{SourceAlias: "us-east", TargetAlias: "eu-west", Timestamp: 1700000000000}
	benchCheckpoint = Checkpoint{Group: "payments-consumer", Topic: "us-east.orders", Partition: 11, UpstreamOffset: 123456789, DownstreamOffset: 123450000, Metadata: "m"}
	benchOffsetSync = OffsetSync{Topic: "orders", Partition: 11, UpstreamOffset: 123456789, DownstreamOffset: 123450000}
)

// appendAll encodes one key and value of each record kind into buf, reusing
// it, which is how producers of these records are expected to call us.
func appendAll(buf []byte) []byte {
	buf, _ = benchHeartbeat.AppendKey(buf[:0])
	buf = benchHeartbeat.AppendValue(buf[:0])
	buf, _ = benchCheckpoint.AppendKey(buf[:0])
	buf, _ = benchCheckpoint.AppendValue(buf[:0])
	buf, _ = benchOffsetSync.AppendKey(buf[:0])
	return benchOffsetSync.AppendValue(buf[:0])
}

func TestAppendDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { buf = appendAll(buf) }); n != 0 {
		t.Errorf("encoding into a large enough buffer made %v allocations, want 0", n)
	}
}

func BenchmarkHeartbeatAppend(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf, _ = benchHeartbeat.AppendKey(buf[:0])
		buf = benchHeartbeat.AppendValue(buf)
	}
}

func BenchmarkCheckpointAppend(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 128)
	for b.Loop() {
		buf, _ = benchCheckpoint.AppendKey(buf[:0])
		buf, _ = benchCheckpoint.AppendValue(buf)
	}
}

func BenchmarkOffsetSyncAppend(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf, _ = benchOffsetSync.AppendKey(buf[:0])
		buf = benchOffsetSync.AppendValue(buf)
	}
}

func BenchmarkDecodeCheckpoint(b *testing.B) {
	b.ReportAllocs()
	key, _ := benchCheckpoint.AppendKey(nil)
	value, _ := benchCheckpoint.AppendValue(nil)
	for b.Loop() {
		if _, err := DecodeCheckpoint(key, value); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSourceOffsetKeyMarshal(b *testing.B) {
	b.ReportAllocs()
	k := SourceOffsetKey{Connector: SourceConnector, Cluster: "us-east", Topic: "orders", Partition: 11}
	for b.Loop() {
		_ = k.Marshal()
	}
}
