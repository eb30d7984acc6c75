// Package brokerfacts holds tests, and nothing else, that pin down what Apache Kafka
// brokers do with the records Strait would write to keep a remote partition's offsets
// equal to its source's (docs/design.md, "Keeping the source's offsets"): what an
// empty transaction leaves in a partition, whether a batch with holes in its offsets is
// taken, how small a filler for a gap can be, what each isolation level reads of it, and
// what the log cleaner does to it later. They run against every broker version Strait
// supports (make test-integration), so a Kafka release that changes one of these facts
// fails here before it fails a user.
package brokerfacts
