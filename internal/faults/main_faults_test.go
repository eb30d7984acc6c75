//go:build faults

package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"strait/internal/kafkatest"
)

// env holds a (source, one broker), b (target, one broker) and c (source, three brokers),
// every broker behind its own proxy. Strait is always given the proxies' addresses; the
// tests' own producers, readers and admin clients use the brokers' own listeners, so a
// fault on a proxy hits Strait alone.
var env *kafkatest.Env

// straitBin is the strait binary the tests run: built from this tree, or BinEnv's.
var straitBin string

// BinEnv names an environment variable with the path of a strait binary to test instead of
// building one from this tree, e.g. one built before a fix, to see which scenarios it fails.
const BinEnv = "STRAIT_FAULTS_BIN"

var envOptions = kafkatest.Options{
	Clusters: 3,
	Brokers:  []int{1, 1, 3},
	Proxies:  true,
	Heap:     "384m",
	BrokerConfig: map[string]string{
		// The compacted-topic test waits for the cleaner: look for work every second.
		"log.cleaner.backoff.ms": "1000",
		// Exactly-once mode on several nodes: the open transaction of a node killed or
		// stopped (SIGSTOP) holds its partitions' last stable offset, and with it
		// read_committed readers and the node that takes them over, until the
		// coordinator aborts it. It looks for transactions past their
		// transaction.timeout.ms (6 s in those tests) every
		// transaction.abort.timed.out.transaction.cleanup.interval.ms, 10 s by
		// default: look every second, so the timeout alone decides.
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
	},
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if bin := os.Getenv(BinEnv); bin != "" {
		straitBin = bin
		fmt.Fprintf(os.Stderr, "faults: testing %s (from %s)\n", bin, BinEnv)
		return kafkatest.RunWith(m, envOptions, &env)
	}
	dir, err := os.MkdirTemp("", "strait-faults-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "faults: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	straitBin = filepath.Join(dir, "strait")
	if out, err := exec.Command("go", "build", "-o", straitBin, "strait/cmd/strait").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "faults: building strait: %v\n%s", err, out)
		return 1
	}
	return kafkatest.RunWith(m, envOptions, &env)
}

// source, target and threeBrokers are the clusters by role.
func source() *kafkatest.Cluster       { return env.Clusters[0] }
func target() *kafkatest.Cluster       { return env.Clusters[1] }
func threeBrokers() *kafkatest.Cluster { return env.Clusters[2] }
