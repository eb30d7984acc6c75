package fastpath

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"strait/internal/kafkatest"
)

// fullFetch is a fetch of topic's partitions at the given offsets, as
// fetchRequest builds it.
func fullFetch(topic string, id [16]byte, offsets map[int32]int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	for _, p := range slices.Sorted(maps.Keys(offsets)) {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.LogStartOffset = p, offsets[p], 1<<20, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// listed returns the partitions a request lists, and those it forgets.
func listed(req *kmsg.FetchRequest) (lists, forgets []int32) {
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			lists = append(lists, p.Partition)
		}
	}
	for _, t := range req.ForgottenTopics {
		forgets = append(forgets, t.Partitions...)
	}
	return lists, forgets
}

func TestFetchSessionListsOnlyWhatChanged(t *testing.T) {
	id := [16]byte{1}
	var s fetchSession
	ok := &kmsg.FetchResponse{SessionID: 7}

	req := fullFetch("t", id, map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0})
	sf := s.shape(req)
	if l, _ := listed(req); req.SessionID != 0 || req.SessionEpoch != 0 || len(l) != 4 || sf.listed != 4 {
		t.Fatalf("first fetch: session %d epoch %d listing %v; want a full fetch asking for a session", req.SessionID, req.SessionEpoch, l)
	}
	s.answered(sf, ok, nil)

	// Partition 0 moved on, 3 is no longer asked for, 4 is new.
	req = fullFetch("t", id, map[int32]int64{0: 10, 1: 0, 2: 0, 4: 0})
	sf = s.shape(req)
	if l, f := listed(req); req.SessionID != 7 || req.SessionEpoch != 1 || !slices.Equal(l, []int32{0, 4}) || !slices.Equal(f, []int32{3}) || sf.listed != 2 {
		t.Fatalf("second fetch: session %d epoch %d listing %v forgetting %v; want session 7 epoch 1 listing [0 4] forgetting [3]", req.SessionID, req.SessionEpoch, l, f)
	}
	s.answered(sf, &kmsg.FetchResponse{SessionID: 7}, nil)

	// Nothing changed: the fetch lists nothing, and the broker fetches
	// every partition from where it holds it.
	req = fullFetch("t", id, map[int32]int64{0: 10, 1: 0, 2: 0, 4: 0})
	sf = s.shape(req)
	if l, f := listed(req); req.SessionEpoch != 2 || len(l) != 0 || len(f) != 0 || len(sf.want) != 4 {
		t.Fatalf("unchanged fetch: epoch %d listing %v forgetting %v", req.SessionEpoch, l, f)
	}

	// The broker lost the session: the next fetch is full, and closes it.
	if s.answered(sf, &kmsg.FetchResponse{ErrorCode: kerr.FetchSessionIDNotFound.Code}, nil) == nil {
		t.Fatal("FETCH_SESSION_ID_NOT_FOUND is not reported as a session error")
	}
	req = fullFetch("t", id, map[int32]int64{0: 10, 1: 0, 2: 0, 4: 0})
	sf = s.shape(req)
	if l, _ := listed(req); req.SessionID != 7 || req.SessionEpoch != 0 || len(l) != 4 {
		t.Fatalf("after a lost session: session %d epoch %d listing %v; want a full fetch closing session 7", req.SessionID, req.SessionEpoch, l)
	}
	s.answered(sf, &kmsg.FetchResponse{SessionID: 8}, nil)

	// A topic created anew: its partition is listed under the new ID and
	// forgotten under the old one.
	req = fullFetch("t", [16]byte{2}, map[int32]int64{0: 0})
	s.shape(req)
	if l, f := listed(req); req.Topics[0].TopicID != [16]byte{2} || !slices.Equal(l, []int32{0}) || len(req.ForgottenTopics) != 1 ||
		req.ForgottenTopics[0].TopicID != id || !slices.Equal(f, []int32{0, 1, 2, 4}) {
		t.Fatalf("recreated topic: listing %v, forgetting %v of %+v", l, f, req.ForgottenTopics)
	}

	// A failed fetch drops the session; a broker that keeps none is
	// asked again at each full fetch.
	if s.answered(sf, nil, context.DeadlineExceeded) != nil || s.epoch != 0 {
		t.Fatalf("a failed fetch: epoch %d, want the session dropped, not a session error", s.epoch)
	}
	s.answered(s.shape(fullFetch("t", id, map[int32]int64{0: 0})), &kmsg.FetchResponse{}, nil)
	if req = fullFetch("t", id, map[int32]int64{0: 0}); s.shape(req).listed != 1 || req.SessionID != 0 || req.SessionEpoch != 0 {
		t.Fatalf("without a session from the broker: session %d epoch %d", req.SessionID, req.SessionEpoch)
	}
}

// fetchesOnlyWhatChanged drives a fast path over cl's topic, records in
// partition 0 only, written between fetches: after the first fetch opens a
// session, each fetch lists at most partition 0, whose offset moved, and
// partition 0 is fetched to its end. cl must send records to the partition they name. Run against kfake
// here and against Kafka in session_integration_test.go.
func fetchesOnlyWhatChanged(t *testing.T, cl *kgo.Client, topic string) {
	ctx := t.Context()
	produce := func(n int) {
		t.Helper()
		for i := range n {
			r := &kgo.Record{Topic: topic, Partition: 0, Value: []byte{byte(i)}}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(20)
	// A topic just created on Kafka answers NOT_LEADER_OR_FOLLOWER for some
	// partitions for a moment, and the fast path holds those back (retry
	// backoff) and forgets them in its session: wait until every partition
	// has a leader that answers, so that all are asked for in every fetch.
	adm := kadm.NewClient(cl)
	kafkatest.Eventually(t, 30*time.Second, func() error {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = ends.Error()
		}
		return err
	})
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	td := md.Topics[topic]
	n := len(td.Partitions)
	leaders := make([]int32, n)
	for _, p := range td.Partitions {
		leaders[p.Partition] = p.Leader
	}
	m := testFlow()
	f := New(Config{Codec: -1, MaxBuffered: 32 << 20, FetchMaxBytes: 50 << 20, PartitionFetchSize: 1 << 20, MaxAsk: 1 << 20},
		Deps{Totals: &m.totals, Log: m.log})
	// One fetch connection: the test follows one session. With the fast
	// path's four, a second fetch may leave on another connection with some
	// partitions (a full fetch of a session of its own), and the first
	// session then asks for fewer than all (11 of 25 runs on Kafka failed).
	f.fetchConns = &fetchConns{clients: []*kgo.Client{cl}, brokers: map[int32][]fetchConn{}}
	f.srcMeta = map[string]topicMeta{topic: {id: td.ID, leaders: leaders, epochs: make([]int32, n)}}
	f.dstMeta = map[string]topicMeta{"A." + topic: {leaders: slices.Clone(leaders)}}
	f.srcNames = namesByID(f.srcMeta)
	tt := &testTopic{Source: topic, Remote: "A." + topic}
	for i := range int32(n) {
		p := testPartition()
		p.topic, p.num = tt, i
		f.parts[tp{topic, i}] = NewPart(p, 0)
	}
	round := func() fetchDone {
		t.Helper()
		f.startFetches(ctx, time.Now())
		select {
		case ev := <-f.events:
			f.running--
			f.handle(ctx, ev)
			return ev.(fetchDone)
		case <-time.After(10 * time.Second):
			t.Fatal("no fetch answered within 10 s")
		}
		return fetchDone{}
	}
	first := round()
	if first.shaped.listed != n || first.err != nil {
		t.Fatalf("first fetch listed %d of %d partitions (err %v)", first.shaped.listed, n, first.err)
	}
	if s := f.fetchConns.session(first.broker, first.conn); s.epoch != 1 {
		t.Fatalf("no session after the first fetch (epoch %d, id %d)", s.epoch, s.id)
	}
	fp := f.parts[tp{topic, 0}]
	for end := int64(40); end <= 80; end += 20 {
		produce(20)
		for deadline := time.Now().Add(10 * time.Second); fp.next < end; {
			if time.Now().After(deadline) {
				t.Fatalf("partition 0 fetched up to %d of %d", fp.next, end)
			}
			f.hold(fp, -fp.queueBytes) // as if its batches were written
			fp.queue = nil
			if fd := round(); fd.shaped.listed > 1 || len(fd.shaped.want) != n {
				t.Fatalf("a fetch in the session listed %d of %d partitions; want only partition 0, whose offset moved", fd.shaped.listed, len(fd.shaped.want))
			}
		}
	}
}

func TestFetchesListOnlyWhatChanged(t *testing.T) {
	src, _ := kafkatest.NewFakePair(t, kfake.SeedTopics(20, "t"))
	fetchesOnlyWhatChanged(t, newClient(t, src, kgo.RecordPartitioner(kgo.ManualPartitioner())), "t")
}
