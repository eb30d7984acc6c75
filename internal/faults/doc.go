// Package faults holds Strait's fault tests (`make test-faults`): the real strait binary
// replicating a producer's records between real Kafka clusters on loopback while the test
// breaks things — brokers bounce, a toxiproxy in front of every broker cuts, slows or
// resets the client path, a source leader moves on a 3-broker cluster, records are deleted
// or a topic recreated under a running Strait, a byte of a segment file is corrupted — and
// then checks the target with the sequence checker of internal/verify: nothing lost, order
// kept, duplicates only within the window of records copied but not yet committed (none
// at all in exactly-once mode, read read_committed), and every truncation, recreation or
// corruption a loud error naming the topic and partition, with the other partitions still
// flowing.
//
// The tests carry the build tag faults (go test -tags faults ./internal/faults), so
// `make test-integration` does not run them a second time. Each scenario logs its
// measurements (duplicates and the window they must fit in, peak RSS, duration).
// STRAIT_FAULTS_BIN=path tests a strait binary built elsewhere, such as one from before
// a fix. A test that makes random choices (kill times) logs its seed;
// STRAIT_FAULTS_SEED=seed repeats them.
package faults
