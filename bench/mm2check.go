package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// clientConfig is one "ProducerConfig values:" or "ConsumerConfig values:" block of MM2's
// log: Kafka's clients log every setting they run with when they are created.
type clientConfig struct {
	Kind   string            // "producer" or "consumer"
	Values map[string]string // key -> value as logged (lists as "[a, b]")
}

// clientID is the block's client.id.
func (c clientConfig) clientID() string { return c.Values["client.id"] }

// bootstrap is the block's bootstrap.servers without the list brackets.
func (c clientConfig) bootstrap() string {
	return strings.Trim(c.Values["bootstrap.servers"], "[]")
}

// parseClientConfigs reads every client configuration block of a log. A block starts with
// a line ending in "ProducerConfig values:" or "ConsumerConfig values:" and goes on with
// tab-indented "key = value" lines.
func parseClientConfigs(text string) []clientConfig {
	var (
		out []clientConfig
		cur *clientConfig
	)
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if cur != nil {
			if strings.HasPrefix(line, "\t") {
				if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok {
					cur.Values[k] = v
				} else if k, ok := strings.CutSuffix(strings.TrimSpace(line), " ="); ok {
					cur.Values[k] = "" // "key = " with an empty value, trimmed
				}
				continue
			}
			out = append(out, *cur)
			cur = nil
		}
		switch {
		case strings.HasSuffix(line, "ProducerConfig values: "), strings.HasSuffix(line, "ProducerConfig values:"):
			cur = &clientConfig{Kind: "producer", Values: map[string]string{}}
		case strings.HasSuffix(line, "ConsumerConfig values: "), strings.HasSuffix(line, "ConsumerConfig values:"):
			cur = &clientConfig{Kind: "consumer", Values: map[string]string{}}
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

// mm2Wanted is what the harness wrote for MM2's data clients.
type mm2Wanted struct {
	producerBootstrap string            // the target: the data producer writes there
	consumerBootstrap string            // the source: the task consumers read there
	producer          map[string]string // key -> value the data producer must log
	consumer          map[string]string // key -> value the source consumers must log
	// transactional asks for data producers with a transactional.id (mm2-eos): the
	// log's proof that MM2 wrote B in transactions.
	transactional bool
}

// settingCheck is one setting of one MM2 client, as written and as MM2 logged it.
type settingCheck struct {
	Client string `json:"client"`
	Key    string `json:"key"`
	Want   string `json:"want"`
	Got    string `json:"got"`
	OK     bool   `json:"ok"`
}

// isDataProducer reports whether a producer block is a MirrorSourceConnector task's
// producer, the one that writes the replicated records: Connect names task producers
// "connector-producer-<connector>-<task>".
func isDataProducer(c clientConfig, bootstrap string) bool {
	return c.Kind == "producer" && c.bootstrap() == bootstrap &&
		strings.Contains(c.clientID(), "connector-producer-MirrorSourceConnector-")
}

// isSourceConsumer reports whether a consumer block is a MirrorSourceTask's consumer of the
// source cluster: MM2 gives it a client.id ending in "|replication-consumer".
func isSourceConsumer(c clientConfig, bootstrap string) bool {
	return c.Kind == "consumer" && c.bootstrap() == bootstrap &&
		strings.HasSuffix(c.clientID(), "|replication-consumer")
}

// checkMM2Settings reads MM2's log at path and checks that its data producers and source
// consumers logged each wanted setting. It returns every check and an error naming each
// setting MM2 did not apply, or saying which clients it could not find.
func checkMM2Settings(path string, want mm2Wanted) ([]settingCheck, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading MM2's log: %w", err)
	}
	return checkClientConfigs(parseClientConfigs(string(b)), want)
}

// checkClientConfigs is checkMM2Settings on parsed blocks.
func checkClientConfigs(blocks []clientConfig, want mm2Wanted) ([]settingCheck, error) {
	var (
		checks []settingCheck
		errs   []error
		nProd  int
		nCons  int
	)
	check := func(c clientConfig, wanted map[string]string) {
		keys := make([]string, 0, len(wanted))
		for k := range wanted {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			got, ok := c.Values[k]
			sc := settingCheck{Client: c.clientID(), Key: k, Want: wanted[k], Got: got, OK: ok && got == wanted[k]}
			if !ok {
				sc.Got = "(not logged)"
			}
			checks = append(checks, sc)
			if !sc.OK {
				errs = append(errs, fmt.Errorf("%s %q: %s = %s, the file says %s", c.Kind, c.clientID(), k, sc.Got, sc.Want))
			}
		}
	}
	for _, c := range blocks {
		switch {
		case isDataProducer(c, want.producerBootstrap):
			nProd++
			check(c, want.producer)
			if want.transactional {
				id := c.Values["transactional.id"]
				ok := id != "" && id != "null"
				checks = append(checks, settingCheck{Client: c.clientID(), Key: "transactional.id", Want: "(set: exactly-once)", Got: id, OK: ok})
				if !ok {
					errs = append(errs, fmt.Errorf("%s %q: transactional.id = %s: MM2 did not run its exactly-once mode", c.Kind, c.clientID(), id))
				}
			}
		case isSourceConsumer(c, want.consumerBootstrap):
			nCons++
			check(c, want.consumer)
		}
	}
	if nProd == 0 {
		errs = append(errs, fmt.Errorf("no ProducerConfig block of a MirrorSourceConnector task producer (client.id connector-producer-MirrorSourceConnector-N) writing to %s in %d client blocks: MM2's log format changed or the log level hides it", want.producerBootstrap, len(blocks)))
	}
	if nCons == 0 {
		errs = append(errs, fmt.Errorf("no ConsumerConfig block of a source consumer (client.id ...|replication-consumer) reading %s in %d client blocks: MM2's log format changed or the log level hides it", want.consumerBootstrap, len(blocks)))
	}
	return checks, errors.Join(errs...)
}

// countRecordPath counts the partitions Strait's log says continue on the record path.
func countRecordPath(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "partition continues on the record path")
}
