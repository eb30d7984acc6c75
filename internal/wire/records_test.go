package wire

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// Vectors from spec/mm2-compat.md §2.3–2.5.
func TestSpecVectors(t *testing.T) {
	tests := []struct {
		name      string
		appendKey func([]byte) ([]byte, error)
		appendVal func([]byte) ([]byte, error)
		wantKey   string
		wantValue string
	}{
		{
			name:      "heartbeat",
			appendKey: Heartbeat{SourceAlias: "A", TargetAlias: "B", Timestamp: 1700000000000}.AppendKey,
			appendVal: func(b []byte) ([]byte, error) {
				return Heartbeat{SourceAlias: "A", TargetAlias: "B", Timestamp: 1700000000000}.AppendValue(b), nil
			},
			wantKey:   "00 01 41 00 01 42",
			wantValue: "00 00 00 00 01 8b cf e5 68 00",
		},
		{
			name:      "checkpoint",
			appendKey: Checkpoint{Group: "my-group", Topic: "A.topic1", Partition: 3, UpstreamOffset: 1000, DownstreamOffset: 998}.AppendKey,
			appendVal: Checkpoint{Group: "my-group", Topic: "A.topic1", Partition: 3, UpstreamOffset: 1000, DownstreamOffset: 998}.AppendValue,
			wantKey:   "00 08 6d 79 2d 67 72 6f 75 70 00 08 41 2e 74 6f 70 69 63 31 00 00 00 03",
			wantValue: "00 00 00 00 00 00 00 00 03 e8 00 00 00 00 00 00 03 e6 00 00",
		},
		{
			name:      "offset sync",
			appendKey: OffsetSync{Topic: "topic1", Partition: 3, UpstreamOffset: 1000, DownstreamOffset: 998}.AppendKey,
			appendVal: func(b []byte) ([]byte, error) {
				return OffsetSync{Topic: "topic1", Partition: 3, UpstreamOffset: 1000, DownstreamOffset: 998}.AppendValue(b), nil
			},
			wantKey:   "00 06 74 6f 70 69 63 31 00 00 00 03",
			wantValue: "00 00 00 00 00 00 03 e8 00 00 00 00 00 00 03 e6",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Append after a prefix to check that dst is extended, not overwritten.
			prefix := []byte("xyz")
			key, err := tt.appendKey(bytes.Clone(prefix))
			if err != nil {
				t.Fatal(err)
			}
			val, err := tt.appendVal(bytes.Clone(prefix))
			if err != nil {
				t.Fatal(err)
			}
			if want := append(bytes.Clone(prefix), unhex(t, tt.wantKey)...); !bytes.Equal(key, want) {
				t.Errorf("key = % x, want % x", key, want)
			}
			if want := append(bytes.Clone(prefix), unhex(t, tt.wantValue)...); !bytes.Equal(val, want) {
				t.Errorf("value = % x, want % x", val, want)
			}
		})
	}
}

func TestSpecVectorsDecode(t *testing.T) {
	hb, err := DecodeHeartbeat(unhex(t, "00 01 41 00 01 42"), unhex(t, "00 00 00 00 01 8b cf e5 68 00"))
	if want := (Heartbeat{SourceAlias: "A", TargetAlias: "B", Timestamp: 1700000000000}); err != nil || hb != want {
		t.Errorf("DecodeHeartbeat = %+v, %v; want %+v", hb, err, want)
	}
	cp, err := DecodeCheckpoint(
		unhex(t, "00 08 6d 79 2d 67 72 6f 75 70 00 08 41 2e 74 6f 70 69 63 31 00 00 00 03"),
		unhex(t, "00 00 00 00 00 00 00 00 03 e8 00 00 00 00 00 00 03 e6 00 00"))
	if want := (Checkpoint{Group: "my-group", Topic: "A.topic1", Partition: 3, UpstreamOffset: 1000, DownstreamOffset: 998}); err != nil || cp != want {
		t.Errorf("DecodeCheckpoint = %+v, %v; want %+v", cp, err, want)
	}
	osync, err := DecodeOffsetSync(unhex(t, "00 06 74 6f 70 69 63 31 00 00 00 03"), unhex(t, "00 00 00 00 00 00 03 e8 00 00 00 00 00 00 03 e6"))
	if want := (OffsetSync{Topic: "topic1", Partition: 3, UpstreamOffset: 1000, DownstreamOffset: 998}); err != nil || osync != want {
		t.Errorf("DecodeOffsetSync = %+v, %v; want %+v", osync, err, want)
	}
}

func TestJavaVectorsHeartbeat(t *testing.T) {
	for _, v := range loadJavaVectors(t).Heartbeats {
		t.Run(fmt.Sprintf("%.20q", v.Source), func(t *testing.T) {
			h := Heartbeat{SourceAlias: v.Source, TargetAlias: v.Target, Timestamp: v.Timestamp}
			key, err := h.AppendKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(key, v.Key) {
				t.Errorf("key = %x, want %x", key, v.Key)
			}
			if got := h.AppendValue(nil); !bytes.Equal(got, v.Value) {
				t.Errorf("value = %x, want %x", got, v.Value)
			}
			got, err := DecodeHeartbeat(v.Key, v.Value)
			if err != nil || got != h {
				t.Errorf("DecodeHeartbeat = %+v, %v; want %+v", got, err, h)
			}
		})
	}
}

func TestJavaVectorsCheckpoint(t *testing.T) {
	for _, v := range loadJavaVectors(t).Checkpoints {
		t.Run(fmt.Sprintf("%.20q", v.Group), func(t *testing.T) {
			c := Checkpoint{Group: v.Group, Topic: v.Topic, Partition: v.Partition,
				UpstreamOffset: v.Upstream, DownstreamOffset: v.Downstream, Metadata: v.Metadata}
			key, err := c.AppendKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(key, v.Key) {
				t.Errorf("key = %x, want %x", key, v.Key)
			}
			val, err := c.AppendValue(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(val, v.Value) {
				t.Errorf("value = %x, want %x", val, v.Value)
			}
			got, err := DecodeCheckpoint(v.Key, v.Value)
			if err != nil || got != c {
				t.Errorf("DecodeCheckpoint = %+v, %v; want %+v", got, err, c)
			}
		})
	}
}

func TestJavaVectorsOffsetSync(t *testing.T) {
	for _, v := range loadJavaVectors(t).OffsetSyncs {
		t.Run(fmt.Sprintf("%.20q", v.Topic), func(t *testing.T) {
			s := OffsetSync{Topic: v.Topic, Partition: v.Partition, UpstreamOffset: v.Upstream, DownstreamOffset: v.Downstream}
			key, err := s.AppendKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(key, v.Key) {
				t.Errorf("key = %x, want %x", key, v.Key)
			}
			if got := s.AppendValue(nil); !bytes.Equal(got, v.Value) {
				t.Errorf("value = %x, want %x", got, v.Value)
			}
			got, err := DecodeOffsetSync(v.Key, v.Value)
			if err != nil || got != s {
				t.Errorf("DecodeOffsetSync = %+v, %v; want %+v", got, err, s)
			}
		})
	}
}

// javaFieldRE extracts the field name from Java's SchemaException message.
var javaFieldRE = regexp.MustCompile(`Error reading field '(\w+)'`)

// TestJavaDecodeBehaviour checks that Go accepts and rejects the same inputs as
// Java's deserializeRecord, fails on the same field, and reads the same
// values. Java turns invalid UTF-8 into U+FFFD where Go keeps the bytes, so Go
// strings are compared after the same substitution (strings.ToValidUTF8
// matches Java's for these inputs, not in general).
func TestJavaDecodeBehaviour(t *testing.T) {
	fix := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
	for i, v := range loadJavaVectors(t).DecodeBehaviour {
		t.Run(fmt.Sprintf("%d_%s", i, v.Kind), func(t *testing.T) {
			var got string
			var err error
			switch v.Kind {
			case "heartbeat":
				var h Heartbeat
				h, err = DecodeHeartbeat(v.Key, v.Value)
				got = fmt.Sprintf("Heartbeat{sourceClusterAlias=%s, targetClusterAlias=%s, timestamp=%d}",
					fix(h.SourceAlias), fix(h.TargetAlias), h.Timestamp)
			case "checkpoint":
				var c Checkpoint
				c, err = DecodeCheckpoint(v.Key, v.Value)
				got = fmt.Sprintf("Checkpoint{consumerGroupId=%s, topicPartition=%s-%d, upstreamOffset=%d, downstreamOffset=%d, metadata=%s}",
					fix(c.Group), fix(c.Topic), c.Partition, c.UpstreamOffset, c.DownstreamOffset, fix(c.Metadata))
			case "offset_sync":
				var s OffsetSync
				s, err = DecodeOffsetSync(v.Key, v.Value)
				got = fmt.Sprintf("OffsetSync{topicPartition=%s-%d, upstreamOffset=%d, downstreamOffset=%d}",
					fix(s.Topic), s.Partition, s.UpstreamOffset, s.DownstreamOffset)
			default:
				t.Fatalf("unknown kind %q", v.Kind)
			}
			if v.OK {
				if err != nil {
					t.Fatalf("Java read %s, Go failed: %v", v.Java, err)
				}
				if got != v.Java {
					t.Errorf("Go read %s, Java read %s", got, v.Java)
				}
				return
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Java threw %q, Go returned %v, want a *DecodeError", v.Java, err)
			}
			if m := javaFieldRE.FindStringSubmatch(v.Java); m == nil || m[1] != de.Field {
				t.Errorf("Go failed on field %q, Java threw %q", de.Field, v.Java)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	long := strings.Repeat("é", maxStringLen/2) // 32766 bytes: longest even-byte string that fits
	tests := []struct {
		name string
		hb   Heartbeat
		cp   Checkpoint
		os   OffsetSync
	}{
		{name: "zero"},
		{
			name: "typical",
			hb:   Heartbeat{SourceAlias: "us-east", TargetAlias: "eu-west", Timestamp: 1700000000000},
			cp:   Checkpoint{Group: "g1", Topic: "us-east.orders", Partition: 11, UpstreamOffset: 5, DownstreamOffset: 4, Metadata: "m"},
			os:   OffsetSync{Topic: "orders", Partition: 11, UpstreamOffset: 5, DownstreamOffset: 4},
		},
		{
			name: "extremes",
			hb:   Heartbeat{SourceAlias: long, TargetAlias: "\x00", Timestamp: -1 << 63},
			cp:   Checkpoint{Group: long, Topic: long, Partition: -1 << 31, UpstreamOffset: -1, DownstreamOffset: 1<<63 - 1, Metadata: long + "x"},
			os:   OffsetSync{Topic: long + "x", Partition: 1<<31 - 1, UpstreamOffset: -1 << 63, DownstreamOffset: -1},
		},
		{
			name: "invalid UTF-8 is kept as is",
			hb:   Heartbeat{SourceAlias: "\xff\xfe", TargetAlias: "a\xc3("},
			cp:   Checkpoint{Group: "\xff", Topic: "\x80", Metadata: "\xed\xa0\x80"},
			os:   OffsetSync{Topic: "\xc0\xaf"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := tt.hb.AppendKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := DecodeHeartbeat(k, tt.hb.AppendValue(nil)); err != nil || got != tt.hb {
				t.Errorf("heartbeat round trip = %.40v, %v", got, err)
			}
			k, err = tt.cp.AppendKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			v, err := tt.cp.AppendValue(nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := DecodeCheckpoint(k, v); err != nil || got != tt.cp {
				t.Errorf("checkpoint round trip = %.40v, %v", got, err)
			}
			k, err = tt.os.AppendKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := DecodeOffsetSync(k, tt.os.AppendValue(nil)); err != nil || got != tt.os {
				t.Errorf("offset sync round trip = %.40v, %v", got, err)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	tooLong := strings.Repeat("a", maxStringLen+1)
	tests := []struct {
		name    string
		encode  func([]byte) ([]byte, error)
		wantErr string // substring; "" means success
	}{
		{name: "heartbeat source 32767 bytes", encode: Heartbeat{SourceAlias: tooLong[1:]}.AppendKey},
		{name: "heartbeat source", encode: Heartbeat{SourceAlias: tooLong}.AppendKey, wantErr: `heartbeat: field "sourceClusterAlias" is 32768 bytes`},
		{name: "heartbeat target", encode: Heartbeat{TargetAlias: tooLong}.AppendKey, wantErr: `"targetClusterAlias"`},
		{name: "checkpoint group", encode: Checkpoint{Group: tooLong}.AppendKey, wantErr: `checkpoint: field "group"`},
		{name: "checkpoint topic", encode: Checkpoint{Topic: tooLong}.AppendKey, wantErr: `checkpoint: field "topic"`},
		{name: "checkpoint metadata", encode: Checkpoint{Metadata: tooLong}.AppendValue, wantErr: `checkpoint: field "metadata" is 32768 bytes, over the 32767-byte limit`},
		{name: "checkpoint metadata fits", encode: Checkpoint{Metadata: tooLong[1:]}.AppendValue},
		{name: "offset sync topic", encode: OffsetSync{Topic: tooLong}.AppendKey, wantErr: `offset sync: field "topic"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("prefix")
			got, err := tt.encode(dst)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
			if string(got) != "prefix" {
				t.Errorf("dst changed on error: %q", got)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	hbKey, hbVal := unhex(t, "000141000142"), unhex(t, "00000000018bcfe56800")
	cpKey, cpVal := unhex(t, "00016700017400000003"), unhex(t, "000000000000000003e800000000000003e60000")
	osKey, osVal := unhex(t, "0001740000000300"), unhex(t, "00000000000003e800000000000003e6")
	decode := map[Kind]func(k, v []byte) error{
		KindHeartbeat:  func(k, v []byte) error { _, err := DecodeHeartbeat(k, v); return err },
		KindCheckpoint: func(k, v []byte) error { _, err := DecodeCheckpoint(k, v); return err },
		KindOffsetSync: func(k, v []byte) error { _, err := DecodeOffsetSync(k, v); return err },
	}
	tests := []struct {
		name          string
		kind          Kind
		key, value    []byte
		wantField     string
		wantReason    string // substring
		wantTombstone bool
	}{
		{name: "heartbeat nil key", kind: KindHeartbeat, key: nil, value: hbVal, wantField: "key", wantReason: "null", wantTombstone: true},
		{name: "heartbeat nil value", kind: KindHeartbeat, key: hbKey, value: nil, wantField: "value", wantReason: "null", wantTombstone: true},
		{name: "heartbeat empty key", kind: KindHeartbeat, key: []byte{}, value: hbVal, wantField: "sourceClusterAlias", wantReason: "need 2 bytes for the STRING length, have 0"},
		{name: "heartbeat one-byte key", kind: KindHeartbeat, key: []byte{0}, value: hbVal, wantField: "sourceClusterAlias", wantReason: "have 1"},
		{name: "heartbeat negative length", kind: KindHeartbeat, key: unhex(t, "ffff"), value: hbVal, wantField: "sourceClusterAlias", wantReason: "string length -1 is negative"},
		{name: "heartbeat length past end", kind: KindHeartbeat, key: unhex(t, "7fff41"), value: hbVal, wantField: "sourceClusterAlias", wantReason: "string length 32767 exceeds the 1 bytes left"},
		{name: "heartbeat missing target", kind: KindHeartbeat, key: unhex(t, "000141"), value: hbVal, wantField: "targetClusterAlias", wantReason: "STRING length"},
		{name: "heartbeat empty value", kind: KindHeartbeat, key: hbKey, value: []byte{}, wantField: "version", wantReason: "need 2 bytes for INT16, have 0"},
		{name: "heartbeat short timestamp", kind: KindHeartbeat, key: hbKey, value: hbVal[:9], wantField: "timestamp", wantReason: "need 8 bytes for INT64, have 7"},
		{name: "checkpoint nil key", kind: KindCheckpoint, key: nil, value: cpVal, wantField: "key", wantTombstone: true},
		{name: "checkpoint nil value", kind: KindCheckpoint, key: cpKey, value: nil, wantField: "value", wantTombstone: true},
		{name: "checkpoint short partition", kind: KindCheckpoint, key: cpKey[:9], value: cpVal, wantField: "partition", wantReason: "need 4 bytes for INT32, have 3"},
		{name: "checkpoint missing topic", kind: KindCheckpoint, key: cpKey[:3], value: cpVal, wantField: "topic"},
		{name: "checkpoint short upstream", kind: KindCheckpoint, key: cpKey, value: cpVal[:9], wantField: "upstreamOffset"},
		{name: "checkpoint short downstream", kind: KindCheckpoint, key: cpKey, value: cpVal[:17], wantField: "offset"},
		{name: "checkpoint missing metadata", kind: KindCheckpoint, key: cpKey, value: cpVal[:18], wantField: "metadata", wantReason: "STRING length"},
		{name: "checkpoint negative metadata", kind: KindCheckpoint, key: cpKey, value: append(bytes.Clone(cpVal[:18]), 0x80, 0x00), wantField: "metadata", wantReason: "-32768 is negative"},
		{name: "offset sync nil key", kind: KindOffsetSync, key: nil, value: osVal, wantField: "key", wantTombstone: true},
		{name: "offset sync nil value", kind: KindOffsetSync, key: osKey, value: nil, wantField: "value", wantTombstone: true},
		{name: "offset sync short partition", kind: KindOffsetSync, key: osKey[:4], value: osVal, wantField: "partition"},
		{name: "offset sync empty value", kind: KindOffsetSync, key: osKey, value: []byte{}, wantField: "upstreamOffset"},
		{name: "offset sync short downstream", kind: KindOffsetSync, key: osKey, value: osVal[:15], wantField: "offset", wantReason: "have 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := decode[tt.kind](tt.key, tt.value)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error = %v, want a *DecodeError", err)
			}
			if de.Kind != tt.kind || de.Field != tt.wantField || !strings.Contains(de.Reason, tt.wantReason) {
				t.Errorf("got {Kind:%q Field:%q Reason:%q}, want {%q %q ...%q...}", de.Kind, de.Field, de.Reason, tt.kind, tt.wantField, tt.wantReason)
			}
			if errors.Is(err, ErrTombstone) != tt.wantTombstone {
				t.Errorf("errors.Is(err, ErrTombstone) = %v, want %v", !tt.wantTombstone, tt.wantTombstone)
			}
			if !strings.Contains(err.Error(), string(tt.kind)) || !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("Error() = %q does not name the kind and field", err)
			}
		})
	}
}

// TestDecodeLenient covers what Java accepts beyond what it writes.
func TestDecodeLenient(t *testing.T) {
	tests := []struct {
		name       string
		key, value string
		want       any
	}{
		{
			name: "heartbeat trailing bytes and version 7",
			key:  "000141000142ff", value: "0007 0000018bcfe56800 ff",
			want: Heartbeat{SourceAlias: "A", TargetAlias: "B", Timestamp: 1700000000000},
		},
		{
			name: "checkpoint version -1",
			key:  "0001670001740000000300", value: "ffff 00000000000003e8 00000000000003e6 0000 ffff",
			want: Checkpoint{Group: "g", Topic: "t", Partition: 3, UpstreamOffset: 1000, DownstreamOffset: 998},
		},
		{
			name: "offset sync trailing bytes",
			key:  "000174 00000003 00", value: "00000000000003e8 00000000000003e6 ff",
			want: OffsetSync{Topic: "t", Partition: 3, UpstreamOffset: 1000, DownstreamOffset: 998},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got any
			var err error
			switch tt.want.(type) {
			case Heartbeat:
				got, err = DecodeHeartbeat(unhex(t, tt.key), unhex(t, tt.value))
			case Checkpoint:
				got, err = DecodeCheckpoint(unhex(t, tt.key), unhex(t, tt.value))
			case OffsetSync:
				got, err = DecodeOffsetSync(unhex(t, tt.key), unhex(t, tt.value))
			}
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
