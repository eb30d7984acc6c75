package wire

import (
	"fmt"
	"testing"
)

// Vectors from Kafka's UtilsTest.testMurmur2 (also in testdata/java_vectors.json).
func TestMurmur2UtilsTest(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want int32
	}{
		{"21", []byte("21"), -973932308},
		{"foobar", []byte("foobar"), -790332482},
		{"a-little-bit-long-string", []byte("a-little-bit-long-string"), -985981536},
		{"a-little-bit-longer-string", []byte("a-little-bit-longer-string"), -1486304829},
		{"long", []byte("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"), -58897971},
		{"abc", []byte{'a', 'b', 'c'}, 479470107},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Murmur2(tt.in); got != tt.want {
				t.Errorf("Murmur2(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestJavaVectorsMurmur2(t *testing.T) {
	for i, v := range loadJavaVectors(t).Murmur2 {
		t.Run(fmt.Sprintf("%d_len%d", i, len(v.Input)), func(t *testing.T) {
			if got := Murmur2(v.Input); got != v.Murmur2 {
				t.Errorf("Murmur2 = %d, want %d", got, v.Murmur2)
			}
			if got := DefaultPartition(v.Input, 25); got != v.Partition25 {
				t.Errorf("DefaultPartition(_, 25) = %d, want %d", got, v.Partition25)
			}
			if got := DefaultPartition(v.Input, 7); got != v.Partition7 {
				t.Errorf("DefaultPartition(_, 7) = %d, want %d", got, v.Partition7)
			}
		})
	}
}

func TestDefaultPartition(t *testing.T) {
	tests := []struct {
		name      string
		key       string
		n         int32
		want      int32
		wantPanic bool
	}{
		{name: "one partition", key: "anything", n: 1, want: 0},
		{name: "negative hash is masked, not negated", key: "21", n: 25, want: 15}, // murmur2 = -973932308
		{name: "MM2 offsets key on 25 partitions", key: `["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"foo"}]`, n: 25, want: 16},
		{name: "zero partitions", key: "k", n: 0, wantPanic: true},
		{name: "negative partitions", key: "k", n: -3, wantPanic: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := recover(); (r != nil) != tt.wantPanic {
					t.Errorf("panic = %v, want panic %v", r, tt.wantPanic)
				}
			}()
			if got := DefaultPartition([]byte(tt.key), tt.n); got != tt.want {
				t.Errorf("DefaultPartition = %d, want %d", got, tt.want)
			}
		})
	}
}
