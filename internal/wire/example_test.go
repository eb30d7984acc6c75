package wire_test

import (
	"errors"
	"fmt"

	"strait/internal/wire"
)

func ExampleDecodeCheckpoint() {
	c := wire.Checkpoint{Group: "my-group", Topic: "A.topic1", Partition: 3, UpstreamOffset: 1000, DownstreamOffset: 998}
	key, _ := c.AppendKey(nil)
	value, _ := c.AppendValue(nil)
	fmt.Printf("% x\n% x\n", key, value)

	got, err := wire.DecodeCheckpoint(key, value[:5])
	var de *wire.DecodeError
	if errors.As(err, &de) {
		fmt.Println(de.Kind, de.Field)
		fmt.Println(err)
	}
	_, err = wire.DecodeCheckpoint(key, nil)
	fmt.Println(got == wire.Checkpoint{}, errors.Is(err, wire.ErrTombstone))
	// Output:
	// 00 08 6d 79 2d 67 72 6f 75 70 00 08 41 2e 74 6f 70 69 63 31 00 00 00 03
	// 00 00 00 00 00 00 00 00 03 e8 00 00 00 00 00 00 03 e6 00 00
	// checkpoint upstreamOffset
	// wire: cannot decode checkpoint field "upstreamOffset": need 8 bytes for INT64, have 3; skip the record, it is corrupt or was not written by MirrorMaker 2
	// true true
}

func ExampleSourceOffsetKey_Marshal() {
	k := wire.SourceOffsetKey{Connector: wire.SourceConnector, Cluster: "A", Topic: "foo", Partition: 0}
	key := k.Marshal()
	fmt.Println(string(key))
	fmt.Println(string(wire.EncodeConnectOffsetValue(123)))
	// mm2-offsets.A.internal has 25 partitions by default (offset.storage.partitions).
	fmt.Println(wire.DefaultPartition(key, 25))
	// Output:
	// ["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"foo"}]
	// {"offset":123}
	// 16
}
