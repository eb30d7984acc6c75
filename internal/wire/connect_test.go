package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestSourceOffsetKeyMarshalSpec(t *testing.T) {
	k := SourceOffsetKey{Connector: SourceConnector, Cluster: "A", Topic: "foo", Partition: 0}
	want := `["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"foo"}]`
	if got := string(k.Marshal()); got != want {
		t.Errorf("Marshal() = %s, want %s", got, want)
	}
}

func TestJavaVectorsSourceOffsetKey(t *testing.T) {
	v := loadJavaVectors(t)
	for _, tt := range v.SourceOffsetKeys {
		t.Run(fmt.Sprintf("%q/%q", tt.Cluster, tt.Topic), func(t *testing.T) {
			k := SourceOffsetKey{Connector: tt.Connector, Cluster: tt.Cluster, Topic: tt.Topic, Partition: tt.Partition}
			if got := k.Marshal(); !bytes.Equal(got, tt.Key) {
				t.Errorf("Marshal() =\n  %s\nwant\n  %s", got, tt.Key)
			}
			got, err := DecodeSourceOffsetKey(tt.Key)
			if err != nil || got != k {
				t.Errorf("DecodeSourceOffsetKey = %+v, %v; want %+v", got, err, k)
			}
		})
	}
}

func TestJavaVectorsOtherConnectorKeys(t *testing.T) {
	v := loadJavaVectors(t)
	want := []struct {
		connector string
		partition map[string]any
	}{
		{"MirrorCheckpointConnector", map[string]any{"partition": json.Number("0"), "topic": "A.foo", "group": "g"}},
		{"MirrorHeartbeatConnector", map[string]any{"sourceClusterAlias": "A", "targetClusterAlias": "B"}},
	}
	if len(v.OtherConnectorKeys) != len(want) {
		t.Fatalf("%d other_connector_keys in testdata, want %d", len(v.OtherConnectorKeys), len(want))
	}
	for i, w := range want {
		t.Run(w.connector, func(t *testing.T) {
			c, p, err := DecodeConnectOffsetKey(v.OtherConnectorKeys[i].Key)
			if err != nil || c != w.connector || !reflect.DeepEqual(p, w.partition) {
				t.Errorf("DecodeConnectOffsetKey = %q, %v, %v; want %q, %v", c, p, err, w.connector, w.partition)
			}
			if _, err := DecodeSourceOffsetKey(v.OtherConnectorKeys[i].Key); err == nil {
				t.Error("DecodeSourceOffsetKey accepted another connector's key")
			}
		})
	}
}

func TestJavaVectorsConnectOffsetValue(t *testing.T) {
	for _, tt := range loadJavaVectors(t).ConnectOffsetValues {
		t.Run(fmt.Sprint(tt.Offset), func(t *testing.T) {
			if got := EncodeConnectOffsetValue(tt.Offset); !bytes.Equal(got, tt.Value) {
				t.Errorf("EncodeConnectOffsetValue = %s, want %s", got, tt.Value)
			}
			off, ok, err := DecodeConnectOffsetValue(tt.Value)
			if err != nil || !ok || off != tt.Offset {
				t.Errorf("DecodeConnectOffsetValue = %d, %v, %v; want %d, true, nil", off, ok, err, tt.Offset)
			}
		})
	}
}

// TestJavaConnectValueBehaviour compares with how Java MM2 reads odd values:
// Java's -1 means "no position", which is ok=false here, and Java's exception
// is an error here.
func TestJavaConnectValueBehaviour(t *testing.T) {
	// Java truncates integers beyond int64 (BigInteger.longValue); Go rejects them.
	divergent := map[string]bool{`{"offset":99999999999999999999}`: true}
	for _, tt := range loadJavaVectors(t).ConnectValueBehaviour {
		t.Run(tt.ValueText, func(t *testing.T) {
			off, ok, err := DecodeConnectOffsetValue([]byte(tt.ValueText))
			switch {
			case divergent[tt.ValueText]:
				if err == nil {
					t.Errorf("got %d, %v, nil; want an error (documented divergence from Java)", off, ok)
				}
			case !tt.OK:
				if err == nil {
					t.Errorf("Java threw %s; Go returned %d, %v, nil", tt.Java, off, ok)
				}
			default:
				var javaOff int64
				if err := json.Unmarshal(tt.Java, &javaOff); err != nil {
					t.Fatal(err)
				}
				if err != nil {
					t.Fatalf("Java read %d; Go failed: %v", javaOff, err)
				}
				if javaOff == -1 && ok {
					t.Errorf("Java read no position; Go read %d", off)
				}
				if javaOff != -1 && (!ok || off != javaOff) {
					t.Errorf("Java read %d; Go read %d, ok=%v", javaOff, off, ok)
				}
			}
		})
	}
}

func TestDecodeSourceOffsetKey(t *testing.T) {
	tests := []struct {
		name      string
		key       string
		want      SourceOffsetKey
		wantField string // non-empty: want a *DecodeError on this field
	}{
		{
			name: "canonical",
			key:  `["MirrorSourceConnector",{"cluster":"A","partition":7,"topic":"foo"}]`,
			want: SourceOffsetKey{Connector: SourceConnector, Cluster: "A", Topic: "foo", Partition: 7},
		},
		{
			name: "other key order and whitespace",
			key:  " [ \"MirrorSourceConnector\" ,\n{ \"topic\" : \"foo\", \"partition\": 2147483647 , \"cluster\":\"A\" } ]\n",
			want: SourceOffsetKey{Connector: SourceConnector, Cluster: "A", Topic: "foo", Partition: 2147483647},
		},
		{
			name: "escapes",
			key:  `["MirrorSourceConnector",{"cluster":"\u0041\"\n\uD83D\uDE00","partition":-0,"topic":"a\/b"}]`,
			want: SourceOffsetKey{Connector: SourceConnector, Cluster: "A\"\n😀", Topic: "a/b", Partition: 0},
		},
		{
			name: "trailing bytes ignored like Jackson",
			key:  `["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t"}] junk`,
			want: SourceOffsetKey{Connector: SourceConnector, Cluster: "A", Topic: "t"},
		},
		{name: "nil", key: "\x00nil", wantField: "key"},
		{name: "empty", key: "", wantField: "key"},
		{name: "not JSON", key: `[MirrorSourceConnector]`, wantField: "key"},
		{name: "truncated", key: `["MirrorSourceConnector",{"cluster":"A"`, wantField: "key"},
		{name: "object", key: `{"cluster":"A"}`, wantField: "key"},
		{name: "one element", key: `["MirrorSourceConnector"]`, wantField: "key"},
		{name: "three elements", key: `["MirrorSourceConnector",{},{}]`, wantField: "key"},
		{name: "connector not a string", key: `[1,{"cluster":"A","partition":0,"topic":"t"}]`, wantField: "connector"},
		{name: "null partition map", key: `["MirrorSourceConnector",null]`, wantField: "sourcePartition"},
		{name: "partition map is array", key: `["MirrorSourceConnector",[]]`, wantField: "sourcePartition"},
		{name: "other connector", key: `["MirrorCheckpointConnector",{"cluster":"A","partition":0,"topic":"t"}]`, wantField: "connector"},
		{name: "connector renamed", key: `["my-mirror",{"cluster":"A","partition":0,"topic":"t"}]`, wantField: "connector"},
		{name: "missing cluster", key: `["MirrorSourceConnector",{"partition":0,"topic":"t"}]`, wantField: "cluster"},
		{name: "cluster null", key: `["MirrorSourceConnector",{"cluster":null,"partition":0,"topic":"t"}]`, wantField: "cluster"},
		{name: "topic number", key: `["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":5}]`, wantField: "topic"},
		{name: "missing partition", key: `["MirrorSourceConnector",{"cluster":"A","topic":"t"}]`, wantField: "partition"},
		{name: "partition string", key: `["MirrorSourceConnector",{"cluster":"A","partition":"0","topic":"t"}]`, wantField: "partition"},
		{name: "partition fraction", key: `["MirrorSourceConnector",{"cluster":"A","partition":1.0,"topic":"t"}]`, wantField: "partition"},
		{name: "partition exponent", key: `["MirrorSourceConnector",{"cluster":"A","partition":1e2,"topic":"t"}]`, wantField: "partition"},
		{name: "partition negative", key: `["MirrorSourceConnector",{"cluster":"A","partition":-1,"topic":"t"}]`, wantField: "partition"},
		{name: "partition over int32", key: `["MirrorSourceConnector",{"cluster":"A","partition":2147483648,"topic":"t"}]`, wantField: "partition"},
		{name: "extra field", key: `["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t","x":1}]`, wantField: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var key []byte
			if tt.key != "\x00nil" {
				key = []byte(tt.key)
			}
			got, err := DecodeSourceOffsetKey(key)
			if tt.wantField == "" {
				if err != nil || got != tt.want {
					t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("got %+v, %v; want a *DecodeError", got, err)
			}
			if de.Kind != KindConnectOffsetKey || de.Field != tt.wantField {
				t.Errorf("error on %s/%q (%v), want field %q", de.Kind, de.Field, err, tt.wantField)
			}
			if key == nil && !errors.Is(err, ErrTombstone) {
				t.Errorf("nil key: %v does not wrap ErrTombstone", err)
			}
		})
	}
}

// TestSourceOffsetKeyCanonical shows how a caller tells the key Java MM2 would
// read (byte-equal to Marshal) from an equivalent one it would never see.
func TestSourceOffsetKeyCanonical(t *testing.T) {
	tests := []struct {
		name string
		key  string
		want bool
	}{
		{"java bytes", `["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"foo"}]`, true},
		{"reordered", `["MirrorSourceConnector",{"topic":"foo","partition":0,"cluster":"A"}]`, false},
		{"spaced", `["MirrorSourceConnector", {"cluster":"A","partition":0,"topic":"foo"}]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := DecodeSourceOffsetKey([]byte(tt.key))
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Equal(k.Marshal(), []byte(tt.key)); got != tt.want {
				t.Errorf("canonical = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMarshalEscaping(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		want    string // the JSON string written for cluster
	}{
		{"plain", "us-east-1", `"us-east-1"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"short escapes", "\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"other controls upper-case hex", "\x00\x01\x1f", `"\u0000\u0001\u001F"`},
		{"DEL and slash raw", "\x7f/", "\"\x7f/\""},
		{"HTML and line separators raw", "<>&\u2028\u2029", "\"<>&\u2028\u2029\""},
		{"BMP raw", "é日本\uFFFD", `"é日本` + "\uFFFD" + `"`},
		{"astral as surrogate pair", "😀𝄞", `"\uD83D\uDE00\uD834\uDD1E"`},
		{"invalid UTF-8 becomes U+FFFD", "a\xffb\xc3", "\"a\uFFFDb\uFFFD\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(SourceOffsetKey{Connector: SourceConnector, Cluster: tt.cluster, Topic: "t"}.Marshal())
			want := `["MirrorSourceConnector",{"cluster":` + tt.want + `,"partition":0,"topic":"t"}]`
			if got != want {
				t.Errorf("Marshal() = %s, want %s", got, want)
			}
			k, err := DecodeSourceOffsetKey([]byte(got))
			if err != nil {
				t.Fatal(err)
			}
			if wantCluster := strings.ToValidUTF8(tt.cluster, "\uFFFD"); k.Cluster != wantCluster {
				t.Errorf("decoded cluster %q, want %q", k.Cluster, wantCluster)
			}
		})
	}
}

func TestDecodeConnectOffsetValue(t *testing.T) {
	tests := []struct {
		name      string
		value     []byte
		want      int64
		wantOK    bool
		wantField string // non-empty: want a *DecodeError on this field
	}{
		{name: "tombstone", value: nil},
		{name: "empty", value: []byte{}},
		{name: "blank", value: []byte(" \n")},
		{name: "JSON null", value: []byte("null")},
		{name: "no offset", value: []byte(`{}`)},
		{name: "offset null", value: []byte(`{"offset":null}`)},
		{name: "zero", value: []byte(`{"offset":0}`), want: 0, wantOK: true},
		{name: "negative kept", value: []byte(`{"offset":-1}`), want: -1, wantOK: true},
		{name: "spaced, extra field", value: []byte(` { "x":[1], "offset" : 42 } `), want: 42, wantOK: true},
		{name: "duplicate keys: last wins like Jackson", value: []byte(`{"offset":1,"offset":2}`), want: 2, wantOK: true},
		{name: "trailing junk ignored like Jackson", value: []byte(`{"offset":5} x`), want: 5, wantOK: true},
		{name: "case matters", value: []byte(`{"Offset":5}`)},
		{name: "not JSON", value: []byte(`{offset:5}`), wantField: "value"},
		{name: "truncated", value: []byte(`{"offset":5`), wantField: "value"},
		{name: "array", value: []byte(`[5]`), wantField: "value"},
		{name: "bare number", value: []byte(`5`), wantField: "value"},
		{name: "string offset", value: []byte(`{"offset":"5"}`), wantField: "offset"},
		{name: "fraction", value: []byte(`{"offset":1.5}`), wantField: "offset"},
		{name: "exponent", value: []byte(`{"offset":1e2}`), wantField: "offset"},
		{name: "bool", value: []byte(`{"offset":true}`), wantField: "offset"},
		{name: "over int64", value: []byte(`{"offset":9223372036854775808}`), wantField: "offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := DecodeConnectOffsetValue(tt.value)
			if tt.wantField == "" {
				if err != nil || ok != tt.wantOK || got != tt.want {
					t.Errorf("got %d, %v, %v; want %d, %v, nil", got, ok, err, tt.want, tt.wantOK)
				}
				return
			}
			var de *DecodeError
			if !errors.As(err, &de) || de.Kind != KindConnectOffsetValue || de.Field != tt.wantField {
				t.Errorf("got %d, %v, %v; want a *DecodeError on %q", got, ok, err, tt.wantField)
			}
		})
	}
}

func TestConnectOffsetValueRoundTrip(t *testing.T) {
	for _, off := range []int64{0, 1, -1, 1 << 62, -1 << 63, 1<<63 - 1} {
		got, ok, err := DecodeConnectOffsetValue(EncodeConnectOffsetValue(off))
		if err != nil || !ok || got != off {
			t.Errorf("round trip of %d = %d, %v, %v", off, got, ok, err)
		}
	}
}
