//go:build integration

package mirror_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/batch"
	"strait/internal/index"
	"strait/internal/kafkatest"
	"strait/internal/offsets"
	"strait/internal/tail"
	"strait/internal/verify"
)

// TestRecompressEveryCodecPair copies topics in each of the five codecs,
// plain and transactional, and a topic whose batches alternate between
// uncompressed and lz4, through five flows that each set another
// compression.type (one source alias per target codec, all on the same
// source cluster). Every partition stays on the fast path; the target
// batches are all in the flow's codec; records are identical and in
// order; and every source offset translates exactly to its own copy.
func TestRecompressEveryCodecPair(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	prefix := kafkatest.Name(t, "recode")
	var topics []string
	for name, codec := range codecsByName {
		for _, txn := range []bool{false, true} {
			topic := fmt.Sprintf("%s-%s-txn%v", prefix, name, txn)
			a.CreateTopic(t, topic, 2, nil)
			produce(t, topic, 2, 1500, codec, txn)
			topics = append(topics, topic)
		}
	}
	mixed := prefix + "-mixed"
	a.CreateTopic(t, mixed, 2, nil)
	for i := range 6 { // batches alternate: none, lz4, none, ...
		codec := kgo.NoCompression()
		if i%2 == 1 {
			codec = kgo.Lz4Compression()
		}
		produce(t, mixed, 2, 500, codec, false)
	}
	topics = append(topics, mixed)

	aliases := map[string]string{"N": "none", "G": "gzip", "S": "snappy", "L": "lz4", "Z": "zstd"}
	var props strings.Builder
	props.WriteString("clusters = A, B, N, G, S, L, Z\nA->B.enabled = false\ntopics = " + prefix + ".*\n")
	for alias, codec := range aliases {
		fmt.Fprintf(&props, "%s.bootstrap.servers = %s\n%s->B.enabled = true\n%s->B.producer.override.compression.type = %s\n", alias, a.Bootstrap, alias, alias, codec)
	}
	d := runDaemon(t, props.String())
	for alias := range aliases {
		for _, topic := range topics {
			waitFlowProgress(t, alias, topic)
		}
	}
	for _, fl := range d.Status().Flows {
		for _, p := range fl.Mirror.Partitions {
			if p.Path != "fast" {
				t.Errorf("flow %s: %s[%d] took the %s path", fl.Name, p.Topic, p.Partition, p.Path)
			}
		}
	}

	src := map[string][][]*kgo.Record{}
	for _, topic := range topics {
		src[topic] = a.ReadAll(t, topic, kgo.ReadCommitted())
	}
	for alias, codec := range aliases {
		idx, err := index.Load(t.Context(), b.Client(t, tail.ClientOpts()...), index.TopicName(alias))
		if err != nil {
			t.Fatal(err)
		}
		for _, topic := range topics {
			remote := alias + "." + topic
			dst := b.ReadAll(t, remote, kgo.ReadCommitted())
			for p := range src[topic] {
				rep := verify.Compare(int32(p), src[topic][p], dst[p])
				if !rep.OK() || rep.Duplicates != 0 {
					t.Errorf("%s -> %s: %v", topic, remote, rep)
				}
				byOffset := map[int64]*kgo.Record{}
				for _, r := range dst[p] {
					byOffset[r.Offset] = r
				}
				for _, r := range src[topic][p] {
					tgt, res := idx.Translate(topic, int32(p), r.Offset)
					if res != offsets.Exact || byOffset[tgt] == nil || !verify.Same(r, byOffset[tgt]) {
						t.Fatalf("%s -> %s[%d]: source offset %d translates to %d (%v), which is not its copy", topic, remote, p, r.Offset, tgt, res)
					}
				}
				for got, n := range targetCodecs(t, remote, int32(p)) {
					if got != batch.CodecNamed(codec) {
						t.Errorf("%s[%d]: %d target batches are %s, compression.type is %s", remote, p, n, got, codec)
					}
				}
			}
		}
	}
}
