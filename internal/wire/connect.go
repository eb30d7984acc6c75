package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// SourceConnector is the connector name MM2's dedicated mode gives
// MirrorSourceConnector, and so the first element of its offsets keys.
const SourceConnector = "MirrorSourceConnector"

// SourceOffsetKey is the key MirrorSourceConnector stores its progress under
// in the Connect offsets topic mm2-offsets.<source>.internal: one per
// replicated source partition. The matching value (EncodeConnectOffsetValue)
// holds the last replicated source offset; MM2 resumes at offset+1.
type SourceOffsetKey struct {
	// Connector is the Connect connector name, SourceConnector in MM2.
	Connector string
	// Cluster is the source cluster alias; Topic and Partition name the
	// source partition.
	Cluster, Topic string
	Partition      int32
}

// Marshal returns the key exactly as Java Connect writes it, e.g.
// ["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"foo"}].
// Byte equality matters twice over: Connect looks offsets up by the
// serialized key bytes, and the bytes pick the partition (DefaultPartition)
// and the compaction key. The field order is Java HashMap iteration order for
// these three names, which does not depend on the values; strings are escaped
// as Jackson does (see appendJSONString).
func (k SourceOffsetKey) Marshal() []byte {
	b := make([]byte, 0, len(`["",{"cluster":"","partition":-2147483648,"topic":""}]`)+len(k.Connector)+len(k.Cluster)+len(k.Topic))
	b = append(b, '[')
	b = appendJSONString(b, k.Connector)
	b = append(b, `,{"cluster":`...)
	b = appendJSONString(b, k.Cluster)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(k.Partition), 10)
	b = append(b, `,"topic":`...)
	b = appendJSONString(b, k.Topic)
	return append(b, "}]"...)
}

// DecodeConnectOffsetKey decodes any Connect offsets key: a JSON array of the
// connector name and its source-partition object. Key order and whitespace do
// not matter. Numbers in the partition map are json.Number, so nothing is
// lost; nested values are what encoding/json produces. Like Jackson, bytes
// after the first JSON value are ignored. Unlike Jackson, invalid UTF-8 in a
// string is accepted and replaced by U+FFFD.
func DecodeConnectOffsetKey(b []byte) (connector string, partition map[string]any, err error) {
	if b == nil {
		return "", nil, tombstone(KindConnectOffsetKey, "key")
	}
	v, err := decodeFirstJSON(b)
	if err != nil {
		return "", nil, &DecodeError{Kind: KindConnectOffsetKey, Field: "key", Reason: "not JSON: " + err.Error(), Err: err}
	}
	arr, isArr := v.([]any)
	if !isArr || len(arr) != 2 {
		return "", nil, &DecodeError{Kind: KindConnectOffsetKey, Field: "key",
			Reason: "want a JSON array [connector, sourcePartition], got " + describeJSON(v)}
	}
	connector, isStr := arr[0].(string)
	if !isStr {
		return "", nil, &DecodeError{Kind: KindConnectOffsetKey, Field: "connector",
			Reason: "want a JSON string, got " + describeJSON(arr[0])}
	}
	partition, isObj := arr[1].(map[string]any)
	if !isObj || partition == nil {
		return "", nil, &DecodeError{Kind: KindConnectOffsetKey, Field: "sourcePartition",
			Reason: "want a JSON object, got " + describeJSON(arr[1])}
	}
	return connector, partition, nil
}

// DecodeSourceOffsetKey decodes a MirrorSourceConnector offsets key. It fails
// unless the connector is SourceConnector and the partition object holds
// exactly a string "cluster", a string "topic" and an integer "partition" in
// 0..2147483647 (the checks of Java's MirrorUtils.validateSourcePartition*).
//
// Java MM2 finds its offsets by the exact bytes of k.Marshal(); a record whose
// key decodes to k but has other bytes (spacing, key order) is invisible to
// it. Callers that must see what Java sees compare bytes.Equal(b, k.Marshal()).
func DecodeSourceOffsetKey(b []byte) (SourceOffsetKey, error) {
	connector, p, err := DecodeConnectOffsetKey(b)
	if err != nil {
		return SourceOffsetKey{}, err
	}
	fail := func(field, format string, args ...any) (SourceOffsetKey, error) {
		return SourceOffsetKey{}, &DecodeError{Kind: KindConnectOffsetKey, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if connector != SourceConnector {
		return fail("connector", "connector is %q, not %q", connector, SourceConnector)
	}
	for name := range p {
		if name != "cluster" && name != "topic" && name != "partition" {
			return fail(name, "unexpected field %q; MirrorSourceConnector keys hold only cluster, partition and topic", name)
		}
	}
	k := SourceOffsetKey{Connector: connector}
	var isStr bool
	if k.Cluster, isStr = p["cluster"].(string); !isStr {
		return fail("cluster", "want a JSON string, got %s", describeJSON(p["cluster"]))
	}
	if k.Topic, isStr = p["topic"].(string); !isStr {
		return fail("topic", "want a JSON string, got %s", describeJSON(p["topic"]))
	}
	n, isNum := p["partition"].(json.Number)
	if !isNum {
		return fail("partition", "want a JSON integer, got %s", describeJSON(p["partition"]))
	}
	part, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || part < 0 || part > math.MaxInt32 {
		return fail("partition", "want an integer in 0..%d, got %s", math.MaxInt32, n)
	}
	k.Partition = int32(part)
	return k, nil
}

// EncodeConnectOffsetValue returns the Connect offsets value MM2 writes for a
// source partition, e.g. {"offset":123}: the last replicated source offset.
func EncodeConnectOffsetValue(offset int64) []byte {
	b := make([]byte, 0, len(`{"offset":-9223372036854775808}`))
	b = append(b, `{"offset":`...)
	b = strconv.AppendInt(b, offset, 10)
	return append(b, '}')
}

// DecodeConnectOffsetValue decodes a Connect offsets value such as
// {"offset":123}. ok is false, with no error, when the record holds no
// offset: a nil value (tombstone, a reset), an empty value, JSON null, or an
// object without "offset" or with "offset":null. Java MM2 reads all of these
// as "no stored position" and falls back to auto.offset.reset. A negative
// offset is returned as is with ok true; MM2 treats it like no position too.
//
// Bytes after the first JSON value are ignored, as Jackson does. One
// difference from Java, on input Java never writes: an integer outside int64
// is an error, where Java silently truncates it.
func DecodeConnectOffsetValue(b []byte) (offset int64, ok bool, err error) {
	if b == nil {
		return 0, false, nil
	}
	v, err := decodeFirstJSON(b)
	if errors.Is(err, io.EOF) {
		return 0, false, nil // empty or blank: Jackson reads a missing node
	}
	if err != nil {
		return 0, false, &DecodeError{Kind: KindConnectOffsetValue, Field: "value", Reason: "not JSON: " + err.Error(), Err: err}
	}
	if v == nil {
		return 0, false, nil
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return 0, false, &DecodeError{Kind: KindConnectOffsetValue, Field: "value",
			Reason: `want a JSON object like {"offset":123}, got ` + describeJSON(v)}
	}
	raw, present := obj["offset"]
	if !present || raw == nil {
		return 0, false, nil
	}
	n, isNum := raw.(json.Number)
	if !isNum {
		return 0, false, &DecodeError{Kind: KindConnectOffsetValue, Field: "offset",
			Reason: "want a JSON integer, got " + describeJSON(raw)}
	}
	offset, err = strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, false, &DecodeError{Kind: KindConnectOffsetValue, Field: "offset",
			Reason: "want an integer that fits in 64 bits, got " + string(n)}
	}
	return offset, true, nil
}

// decodeFirstJSON decodes the first JSON value in b, numbers as json.Number.
// It returns io.EOF when b holds only whitespace.
func decodeFirstJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// describeJSON names the JSON type of a decoded value for error messages,
// without echoing arbitrary record contents.
func describeJSON(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + string(v)
	case []any:
		return fmt.Sprintf("an array of %d elements", len(v))
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// appendJSONString appends s as a JSON string escaped the way Jackson's
// UTF8JsonGenerator does by default, which Connect's JsonConverter uses:
// '"' and '\' and the control characters \b \t \n \f \r get short escapes,
// other characters below 0x20 become \u00XX (upper-case hex), characters
// outside the Basic Multilingual Plane become a \uXXXX\uXXXX surrogate pair,
// and everything else (DEL, '/', '<', U+2028, ...) is written raw as UTF-8.
// Invalid UTF-8 bytes, which a Java string cannot hold, become U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\r':
				dst = append(dst, '\\', 'r')
			default:
				if c < 0x20 {
					dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
				} else {
					dst = append(dst, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = utf8.AppendRune(dst, utf8.RuneError)
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			for _, u := range [2]rune{hi, lo} {
				dst = append(dst, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
			}
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
