// Package wire holds byte-exact codecs for the records MirrorMaker 2 keeps in
// Kafka: heartbeats, checkpoints and offset syncs (Kafka protocol-type
// encoding, spec §2.2–2.5), the Connect offsets records of
// mm2-offsets.<source>.internal (JSON, spec §2.6), and Kafka's default
// murmur2 partitioner, which decides where those Connect records land.
//
// Everything here is pure: no I/O, no goroutines, no state. Encoders append to
// a caller-owned buffer and do not allocate beyond growing it; decoders never
// panic and report every failure as a *DecodeError.
//
// Compatibility decisions, each checked against the Kafka 4.1.1 Java classes
// (see testdata/java_vectors.json):
//   - Readers ignore trailing bytes, as Java's Schema.read does.
//   - The INT16 version header of heartbeat and checkpoint values is read and
//     ignored: Java checks it only with a disabled assert, so any version is
//     parsed as v0. Writers always write 0.
//   - Strings are Kafka STRINGs (INT16 length, 0..32767 bytes). Java decodes
//     invalid UTF-8 leniently to U+FFFD; this package keeps the bytes as they
//     are, so decode then encode reproduces the input exactly.
//   - A nil key or value (a tombstone) is an error wrapping ErrTombstone: MM2
//     never writes tombstones to these topics and Java readers crash on them.
package wire
