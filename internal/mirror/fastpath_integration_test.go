//go:build integration

package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/batch"
	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/index"
	"strait/internal/kafkatest"
	"strait/internal/offsets"
	"strait/internal/tail"
	"strait/internal/verify"
	"strait/internal/wire"
)

var env *kafkatest.Env

func TestMain(m *testing.M) {
	os.Exit(kafkatest.RunWith(m, kafkatest.Options{Clusters: 2, BrokerConfig: map[string]string{
		// TestTombstonesKeepTheTargetsDeleteHorizon waits on both clusters' cleaners: one
		// with nothing to do looks again within 200 ms instead of 15 s. Set here, not as a
		// dynamic broker config, which restarts the cleaner mid-run.
		"log.cleaner.backoff.ms": "200",
	}}, &env))
}

func runDaemon(t *testing.T, extra string) *daemon.Daemon {
	t.Helper()
	props := env.MM2Properties("emit.heartbeats.enabled = false\n" + extra)
	cfg, err := config.Parse("test.properties", []byte(props), config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := daemon.New(cfg, daemon.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	})
	return d
}

// produce writes keyed records with headers, explicit timestamps and some
// null keys and values, with a plain or a transactional producer (aborting
// every third transaction) and the given codec.
func produce(t *testing.T, topic string, partitions int32, n int, codec kgo.CompressionCodec, txn bool) {
	t.Helper()
	opts := []kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(5 * time.Millisecond)}
	if txn {
		opts = append(opts, kgo.TransactionalID(topic))
	}
	cl := env.Clusters[0].Client(t, opts...)
	base := time.Now().Add(-time.Hour).UnixMilli()
	ctx := t.Context()
	for i := 0; i < n; {
		if txn {
			if err := cl.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
		}
		var recs []*kgo.Record
		for j := 0; j < 500 && i < n; j, i = j+1, i+1 {
			r := &kgo.Record{
				Topic: topic, Partition: int32(i) % partitions,
				Key:       []byte("k" + strconv.Itoa(i%97)),
				Value:     []byte(fmt.Sprintf("%s-%d-%s", topic, i, "payload payload payload payload")),
				Timestamp: time.UnixMilli(base + int64(i)),
				Headers:   []kgo.RecordHeader{{Key: "i", Value: []byte(strconv.Itoa(i))}, {Key: "empty", Value: []byte{}}},
			}
			if i%31 == 0 {
				r.Key = nil
			}
			recs = append(recs, r)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if txn {
			if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(i/500%3 != 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// codecsByName are Kafka's five codecs by their compression.type names.
var codecsByName = map[string]kgo.CompressionCodec{
	"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
	"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

// waitProgress waits until Strait's stored progress reached the source end.
func waitProgress(t *testing.T, topic string) {
	t.Helper()
	waitFlowProgress(t, "A", topic)
}

// waitFlowProgress is waitProgress for the flow from source alias.
func waitFlowProgress(t *testing.T, alias, topic string) {
	t.Helper()
	a, b := env.Clusters[0], env.Clusters[1]
	kafkatest.Eventually(t, 2*time.Minute, func() error {
		ends, err := a.Admin(t).ListCommittedOffsets(t.Context(), topic)
		if err != nil {
			return err
		}
		stored, err := b.Admin(t).FetchOffsets(t.Context(), "strait-"+alias)
		if err != nil {
			return err
		}
		var lag error
		ends.Each(func(o kadm.ListedOffset) {
			s, ok := stored.Lookup(alias+"."+topic, o.Partition)
			if !ok || s.At < o.Offset {
				lag = fmt.Errorf("%s[%d]: progress %d of %d", topic, o.Partition, s.At, o.Offset)
			}
		})
		return lag
	})
}

// targetCodecs reads the raw batches of a remote topic partition and
// returns the codecs they carry.
func targetCodecs(t *testing.T, topic string, partition int32) map[batch.Codec]int {
	t.Helper()
	cl := env.Clusters[1].Client(t)
	md, err := kadm.NewClient(cl).ListTopics(t.Context(), topic)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch = -1, 100, 64<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, md[topic].ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = partition, 64<<20, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Request(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	out := map[batch.Codec]int{}
	for rest := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches; len(rest) > 0; {
		h, err := batch.Parse(rest)
		if errors.Is(err, batch.ErrPartial) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Codec()]++
		rest = rest[h.Size():]
	}
	return out
}

// TestFastPathPreservesEverything replicates topics in every codec, plain
// and transactional (with aborts), and checks that the fast path carried
// them: records identical (key, value, headers, timestamp), batches still
// in the source's codec, and every source offset translating to the target
// offset of its own copy.
func TestFastPathPreservesEverything(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	prefix := kafkatest.Name(t, "fast")
	var topics []string
	codecOf := map[string]string{}
	for name, codec := range codecsByName {
		for _, txn := range []bool{false, true} {
			topic := fmt.Sprintf("%s-%s-txn%v", prefix, name, txn)
			a.CreateTopic(t, topic, 3, nil)
			produce(t, topic, 3, 3000, codec, txn)
			topics = append(topics, topic)
			codecOf[topic] = name
		}
	}
	d := runDaemon(t, "topics = "+prefix+".*")
	for _, topic := range topics {
		waitProgress(t, topic)
	}
	st := d.Status()
	for _, p := range st.Flows[0].Mirror.Partitions {
		if p.Path != "fast" {
			t.Errorf("%s[%d] took the %s path", p.Topic, p.Partition, p.Path)
		}
	}

	idxClient := b.Client(t, tail.ClientOpts()...)
	idx, err := index.Load(t.Context(), idxClient, index.TopicName("A"))
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range topics {
		src := a.ReadAll(t, topic, kgo.ReadCommitted())
		dst := b.ReadAll(t, "A."+topic, kgo.ReadCommitted())
		for p := range src {
			rep := verify.Compare(int32(p), src[p], dst[p])
			if !rep.OK() || rep.Duplicates != 0 {
				t.Errorf("%s: %v", topic, rep)
			}
			byOffset := map[int64]*kgo.Record{}
			for _, r := range dst[p] {
				byOffset[r.Offset] = r
			}
			for _, r := range src[p] {
				tgt, res := idx.Translate(topic, int32(p), r.Offset)
				if res != offsets.Exact || byOffset[tgt] == nil || !verify.Same(r, byOffset[tgt]) {
					t.Fatalf("%s[%d]: source offset %d translates to %d (%v), which is not its copy", topic, p, r.Offset, tgt, res)
				}
			}
		}
		want := batch.CodecNamed(codecOf[topic])
		for codec, n := range targetCodecs(t, "A."+topic, 0) {
			if codec != want {
				t.Errorf("%s: %d target batches are %s, want %s", topic, n, codec, want)
			}
		}
	}
}

// TestRebuiltAndRecompressedBatchesStayOnTheFastPath: a topic whose broker
// stamps LogAppendTime, written transactionally with aborts, has its
// batches rebuilt as CreateTime with the source's append times; batches in
// another codec than the configured compression.type are recompressed.
// Both stay on the fast path and copy exactly. (The record path took the
// LogAppendTime topic before batches were rebuilt.)
func TestRebuiltAndRecompressedBatchesStayOnTheFastPath(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	prefix := kafkatest.Name(t, "rebuilt")
	lat := prefix + "-lat"
	logAppend := "LogAppendTime"
	a.CreateTopic(t, lat, 2, map[string]*string{"message.timestamp.type": &logAppend})
	produce(t, lat, 2, 2000, kgo.Lz4Compression(), true)
	recompress := prefix + "-gzip"
	a.CreateTopic(t, recompress, 2, nil)
	produce(t, recompress, 2, 2000, kgo.GzipCompression(), false)

	d := runDaemon(t, "topics = "+prefix+".*\nB.producer.compression.type = zstd")
	waitProgress(t, lat)
	waitProgress(t, recompress)
	for _, p := range d.Status().Flows[0].Mirror.Partitions {
		if p.Path != "fast" {
			t.Errorf("%s[%d] took the %s path, want fast", p.Topic, p.Partition, p.Path)
		}
	}
	for _, topic := range []string{lat, recompress} {
		src := a.ReadAll(t, topic, kgo.ReadCommitted())
		dst := b.ReadAll(t, "A."+topic, kgo.ReadCommitted())
		for p := range src {
			if rep := verify.Compare(int32(p), src[p], dst[p]); !rep.OK() || rep.Duplicates != 0 {
				t.Errorf("%s: %v", topic, rep)
			}
		}
	}
	for _, topic := range []string{lat, recompress} {
		for codec := range targetCodecs(t, "A."+topic, 0) {
			if codec != batch.Zstd {
				t.Errorf("%s: %s batches on the target, compression.type asks for zstd", topic, codec)
			}
		}
	}
}

// TestOffsetSyncsAreExactPairs checks the MM2 offset syncs Strait writes,
// on the source (MM2's default location) and on the target: every sync
// pairs a source offset with the target offset of that same record, as
// MM2's checkpoint code assumes.
func TestOffsetSyncsAreExactPairs(t *testing.T) {
	for _, location := range []string{"source", "target"} {
		t.Run(location, func(t *testing.T) {
			a, b := env.Clusters[0], env.Clusters[1]
			topic := kafkatest.Name(t, "syncs")
			a.CreateTopic(t, topic, 2, nil)
			produce(t, topic, 2, 3000, kgo.Lz4Compression(), true) // gaps from markers and aborts
			syncTopic, on := "mm2-offset-syncs.B.internal", a
			if location == "target" {
				syncTopic, on = "mm2-offset-syncs.A.internal", b
			}
			runDaemon(t, fmt.Sprintf("topics = %s\noffset-syncs.topic.location = %s\noffset.lag.max = 50", topic, location))
			waitProgress(t, topic)
			src := a.ReadAll(t, topic, kgo.ReadCommitted())
			dst := b.ReadAll(t, "A."+topic, kgo.ReadCommitted())
			at := func(recs []*kgo.Record, off int64) *kgo.Record {
				for _, r := range recs {
					if r.Offset == off {
						return r
					}
				}
				return nil
			}
			var n int
			kafkatest.Eventually(t, 30*time.Second, func() error {
				n = 0
				cl := on.Client(t, tail.ClientOpts()...)
				_, err := tail.ReadToEnd(t.Context(), cl, syncTopic, func(r *kgo.Record) {
					s, err := wire.DecodeOffsetSync(r.Key, r.Value)
					if err != nil || s.Topic != topic {
						return
					}
					n++
					up, down := at(src[s.Partition], s.UpstreamOffset), at(dst[s.Partition], s.DownstreamOffset)
					if up == nil || down == nil || !verify.Same(up, down) {
						t.Errorf("sync %+v does not pair a record with its copy", s)
					}
				})
				if err != nil {
					return err
				}
				if n == 0 {
					return fmt.Errorf("no offset syncs for %s in %s yet", topic, syncTopic)
				}
				return nil
			})
			t.Logf("%d offset syncs in %s, all exact pairs", n, syncTopic)
		})
	}
}

// TestSmallBatchesAreMergedExactly: a producer without linger leaves one
// record per batch. The fast path merges such queued batches before it
// sends them (coalesce), across an aborted transaction it skips: the
// target holds far fewer batches, Kafka takes them, and every record is
// copied once, in order, its source offset translating to its own copy.
func TestSmallBatchesAreMergedExactly(t *testing.T) {
	a, b := env.Clusters[0], env.Clusters[1]
	topic := kafkatest.Name(t, "small")
	a.CreateTopic(t, topic, 1, nil)
	ctx := t.Context()
	one := a.Client(t, kgo.ProducerLinger(0), kgo.DefaultProduceTopic(topic))
	write := func(from, n int) {
		for i := from; i < from+n; i++ {
			r := &kgo.Record{Key: []byte("k" + strconv.Itoa(i%13)), Value: []byte(fmt.Sprintf("value %d", i)),
				Headers: []kgo.RecordHeader{{Key: "i", Value: []byte(strconv.Itoa(i))}}}
			if err := one.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(0, 600)
	txn := a.Client(t, kgo.TransactionalID(topic), kgo.DefaultProduceTopic(topic))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("aborted")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	write(600, 600)

	d := runDaemon(t, "topics = "+topic)
	waitProgress(t, topic)
	write(1200, 200) // while it runs
	waitProgress(t, topic)
	for _, p := range d.Status().Flows[0].Mirror.Partitions {
		if p.Path != "fast" {
			t.Errorf("%s[%d] took the %s path, want fast", p.Topic, p.Partition, p.Path)
		}
	}
	src := a.ReadAll(t, topic, kgo.ReadCommitted())
	dst := b.ReadAll(t, "A."+topic, kgo.ReadCommitted())
	if rep := verify.Compare(0, src[0], dst[0]); !rep.OK() || rep.Duplicates != 0 || len(dst[0]) != 1400 {
		t.Fatalf("%v (%d records on the target, want 1400)", rep, len(dst[0]))
	}
	idx, err := index.Load(ctx, b.Client(t, tail.ClientOpts()...), index.TopicName("A"))
	if err != nil {
		t.Fatal(err)
	}
	byOffset := map[int64]*kgo.Record{}
	for _, r := range dst[0] {
		byOffset[r.Offset] = r
	}
	for _, r := range src[0] {
		tgt, res := idx.Translate(topic, 0, r.Offset)
		if res != offsets.Exact || byOffset[tgt] == nil || !verify.Same(r, byOffset[tgt]) {
			t.Fatalf("source offset %d translates to %d (%v), which is not its copy", r.Offset, tgt, res)
		}
	}
	batches := 0
	for _, n := range targetCodecs(t, "A."+topic, 0) {
		batches += n
	}
	// The 1,200 records written before the start are one fetch's backlog.
	if batches > 1400/4 {
		t.Errorf("the target holds %d batches for 1400 records written one per batch: they were not merged", batches)
	}
	t.Logf("1400 records written one per batch: %d batches on the target", batches)
}
