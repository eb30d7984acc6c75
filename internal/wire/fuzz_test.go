package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// The fuzz targets check that decoding arbitrary bytes never panics and that
// whatever decodes survives encode-then-decode unchanged. Seeds are the spec
// and Java vectors.

func FuzzDecodeHeartbeat(f *testing.F) {
	f.Add(unhex(f, "000141000142"), unhex(f, "00000000018bcfe56800"))
	for _, v := range loadJavaVectors(f).Heartbeats {
		f.Add([]byte(v.Key), []byte(v.Value))
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		h, err := DecodeHeartbeat(key, value)
		if err != nil {
			return
		}
		k, err := h.AppendKey(nil)
		if err != nil {
			t.Fatalf("re-encoding decoded %+v: %v", h, err)
		}
		if !bytes.HasPrefix(key, k) {
			t.Errorf("re-encoded key %x is not a prefix of %x", k, key)
		}
		got, err := DecodeHeartbeat(k, h.AppendValue(nil))
		if err != nil || got != h {
			t.Errorf("decode(encode(%+v)) = %+v, %v", h, got, err)
		}
	})
}

func FuzzDecodeCheckpoint(f *testing.F) {
	f.Add(unhex(f, "00086d792d67726f75700008412e746f7069633100000003"), unhex(f, "000000000000000003e800000000000003e60000"))
	for _, v := range loadJavaVectors(f).Checkpoints {
		f.Add([]byte(v.Key), []byte(v.Value))
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		c, err := DecodeCheckpoint(key, value)
		if err != nil {
			return
		}
		k, err := c.AppendKey(nil)
		if err != nil {
			t.Fatalf("re-encoding decoded %+v: %v", c, err)
		}
		if !bytes.HasPrefix(key, k) {
			t.Errorf("re-encoded key %x is not a prefix of %x", k, key)
		}
		v, err := c.AppendValue(nil)
		if err != nil {
			t.Fatalf("re-encoding decoded %+v: %v", c, err)
		}
		if !bytes.HasPrefix(value[2:], v[2:]) { // all but the version, which is normalised to 0
			t.Errorf("re-encoded value %x does not match %x", v, value)
		}
		got, err := DecodeCheckpoint(k, v)
		if err != nil || got != c {
			t.Errorf("decode(encode(%+v)) = %+v, %v", c, got, err)
		}
	})
}

func FuzzDecodeOffsetSync(f *testing.F) {
	f.Add(unhex(f, "0006746f7069633100000003"), unhex(f, "00000000000003e800000000000003e6"))
	for _, v := range loadJavaVectors(f).OffsetSyncs {
		f.Add([]byte(v.Key), []byte(v.Value))
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		s, err := DecodeOffsetSync(key, value)
		if err != nil {
			return
		}
		k, err := s.AppendKey(nil)
		if err != nil {
			t.Fatalf("re-encoding decoded %+v: %v", s, err)
		}
		v := s.AppendValue(nil)
		if !bytes.HasPrefix(key, k) || !bytes.HasPrefix(value, v) {
			t.Errorf("re-encoded %x/%x is not a prefix of %x/%x", k, v, key, value)
		}
		got, err := DecodeOffsetSync(k, v)
		if err != nil || got != s {
			t.Errorf("decode(encode(%+v)) = %+v, %v", s, got, err)
		}
	})
}

// FuzzDecodeConnectOffsetKey re-encodes generic keys with encoding/json (the
// decoder ignores key order) and MirrorSourceConnector keys with Marshal.
func FuzzDecodeConnectOffsetKey(f *testing.F) {
	v := loadJavaVectors(f)
	for _, k := range v.SourceOffsetKeys {
		f.Add([]byte(k.Key))
	}
	for _, k := range v.OtherConnectorKeys {
		f.Add([]byte(k.Key))
	}
	f.Add([]byte(`["c",{"a":[1,{"b":null}],"n":-1.5e300,"t":true}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		connector, partition, err := DecodeConnectOffsetKey(b)
		if err == nil {
			enc, err := json.Marshal([]any{connector, partition})
			if err != nil {
				t.Fatalf("re-encoding %q %v: %v", connector, partition, err)
			}
			c2, p2, err := DecodeConnectOffsetKey(enc)
			if err != nil || c2 != connector || !reflect.DeepEqual(p2, partition) {
				t.Errorf("decode(encode(%q, %v)) = %q, %v, %v", connector, partition, c2, p2, err)
			}
		}
		k, err := DecodeSourceOffsetKey(b)
		if err != nil {
			return
		}
		got, err := DecodeSourceOffsetKey(k.Marshal())
		if err != nil || got != k {
			t.Errorf("decode(Marshal(%+v)) = %+v, %v", k, got, err)
		}
	})
}

func FuzzDecodeConnectOffsetValue(f *testing.F) {
	for _, v := range loadJavaVectors(f).ConnectOffsetValues {
		f.Add([]byte(v.Value))
	}
	f.Add([]byte(`null`))
	f.Add([]byte(` {"x":1,"offset":null} `))
	f.Fuzz(func(t *testing.T, b []byte) {
		off, ok, err := DecodeConnectOffsetValue(b)
		if err != nil || !ok {
			return
		}
		got, ok, err := DecodeConnectOffsetValue(EncodeConnectOffsetValue(off))
		if err != nil || !ok || got != off {
			t.Errorf("decode(encode(%d)) = %d, %v, %v", off, got, ok, err)
		}
	})
}
