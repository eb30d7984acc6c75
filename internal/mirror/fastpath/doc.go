// Package fastpath is the fast path of a flow's data plane (see package
// mirror): it forwards raw record batches from the source partitions to
// the same partitions of the remote topics. It reaches the state of each
// partition, which package mirror owns and shares with the record path,
// the committer and the status, only through the Ledger interface, and
// the rest of its flow through Deps.
//
// The fast path. The forwarder fetches raw record batches from the source
// leaders and produces them, unchanged but for the producer fields and the
// CRC, to the same partitions on the target: no per-record work. A batch in
// another codec than the target's compression.type is recompressed whole
// (recode.go). A partition keeps up to five batches in flight (produce.go);
// the produce response's base offset gives the exact target offsets of
// every record (the target keeps the batch's offset deltas).
//
// A batch a broker would not take as it is, one with offset holes left by
// compaction, one stamped LogAppendTime, or the first one when the
// partition resumes in its middle, is rebuilt (recode.go): its records
// renumbered and stamped CreateTime, still without record objects. A
// partition leaves the fast path for the record path, once and for good,
// only when one of its batches cannot be forwarded or rebuilt: a message
// format older than v2, a target that rejects the batch (too large,
// invalid), or records that do not decode. The record path then resumes at
// the first source offset not yet acknowledged.
//
// Ownership: one goroutine (run) owns all forwarder state. Fetches, produce
// requests and every other network call run in their own goroutines and
// report back through f.events, so the loop never blocks on the network; at
// most fetchConnsPerBroker fetches per source broker, each on its own
// connection with its own fetch session (fetchconns.go, session.go), one
// per partition, and maxProduceInflight
// produce requests per lane are outstanding. Recompression runs in the
// fetch goroutines, off the loop, so fetches in flight recompress in
// parallel.
//
// Long links: a partition fetches again while up to one ask of it is still
// queued, so its next response crosses the link while the last is written,
// and its ask doubles while its responses come back full with more behind
// (fetchRoom, grow): a partition moves up to two asks per round trip (at
// most cfg.MaxAsk, which a max.partition.fetch.bytes the user set is), and
// the ask follows the bandwidth-delay product up to cfg.MaxAsk. Partitions
// behind spread over the fetch connections, at most behindPerFetch of asks
// in one fetch, so that a fetch on every connection fits in the budget at
// once (fetchRequest). The budget is buffer.memory, and with buffer.memory
// unset, LongLinkBuffer more when a small request to the source takes a
// long link's round trip (budget).
//
// A fetch response is used for a partition only if it was fetched at the
// partition's next offset (as Java's consumer does): after a leader change
// two fetches of one partition can overlap, and a repeated part must not
// reach the transaction filter out of order. Every batch's CRC is checked
// before it is forwarded, since the rewrite computes a new one.
//
// Memory: a queued batch points into its fetch response, which it frees
// once it is acknowledged; only a partition whose target refused or did not
// answer its last batch copies its batches out (detach). Each target broker
// gets an equal share of buffer.memory, so a dead or leaderless broker
// stalls only its own partitions.
package fastpath
