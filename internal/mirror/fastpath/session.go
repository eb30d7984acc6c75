package fastpath

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch sessions (KIP-227). A fetch lists every partition it asks for,
// with its offset and size: over thousands of partitions, most of them
// idle, each request and each response carries them all, every round.
// With a session the broker remembers the partitions of the connection's
// last fetch: the next one lists only the partitions that are new or
// whose offset, size or epochs changed, and those to forget, and the
// response only the partitions with records or news (a new high
// watermark, log start or error). A partition the request does not list
// is fetched from where the broker remembers it.
//
// Each fetch connection of each source broker (fetchConns) has its own
// session, since a session belongs to the connection's fetches in order:
// one fetch at a time per connection, and the session moves only when its
// answer is handled (answered). Any failure of a fetch, or a session error
// from the broker, drops the session, and the next fetch is a full one
// that asks for a new session. A broker that keeps no session (its cache
// is full, or it predates KIP-227) answers with session id 0, and every
// fetch stays full.

// sessionPart is what a session holds for one partition: the fields of
// its last listing.
type sessionPart struct {
	topicID          [16]byte
	offset           int64
	maxBytes         int32
	leaderEpoch      int32
	lastFetchedEpoch int32
}

// fetchSession is one fetch connection's session with one source broker.
type fetchSession struct {
	id    int32
	epoch int32              // of the next fetch; 0 asks for a new session
	held  map[tp]sessionPart // what the broker holds, valid while epoch > 0
}

// sessionFetch is a fetch shaped by a session: every partition it asks for
// and what it listed, for answered.
type sessionFetch struct {
	want   map[tp]sessionPart
	listed int // partitions the request lists
}

// shape turns req, a full fetch of every partition it asks for, into the
// session's next fetch: a full one that asks for a session (closing the
// connection's last one, if any), or an incremental one listing only the
// partitions that changed since the fetch before and forgetting those it
// no longer asks for. It returns what answered needs.
func (s *fetchSession) shape(req *kmsg.FetchRequest) sessionFetch {
	want := map[tp]sessionPart{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			want[tp{t.Topic, p.Partition}] = sessionPart{t.TopicID, p.FetchOffset, p.PartitionMaxBytes, p.CurrentLeaderEpoch, p.LastFetchedEpoch}
		}
	}
	req.SessionID, req.SessionEpoch = s.id, s.epoch
	if s.epoch == 0 {
		return sessionFetch{want: want, listed: len(want)}
	}
	listed := 0
	topics := req.Topics[:0]
	for _, t := range req.Topics {
		parts := t.Partitions[:0]
		for _, p := range t.Partitions {
			if held, ok := s.held[tp{t.Topic, p.Partition}]; !ok || held != want[tp{t.Topic, p.Partition}] {
				parts = append(parts, p)
			}
		}
		if len(parts) > 0 {
			t.Partitions = parts
			topics = append(topics, t)
			listed += len(parts)
		}
	}
	req.Topics = topics
	// Partitions it no longer asks for, and those whose topic was created
	// anew (listed above under the new ID), are forgotten under the ID the
	// session holds them by.
	type topicRef struct {
		name string
		id   [16]byte
	}
	forget := map[topicRef][]int32{}
	for key, held := range s.held {
		if w, ok := want[key]; !ok || w.topicID != held.topicID {
			ref := topicRef{key.topic, held.topicID}
			forget[ref] = append(forget[ref], key.partition)
		}
	}
	for _, ref := range slices.SortedFunc(maps.Keys(forget), func(a, b topicRef) int { return strings.Compare(a.name, b.name) }) {
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.TopicID, ft.Partitions = ref.name, ref.id, slices.Sorted(slices.Values(forget[ref]))
		req.ForgottenTopics = append(req.ForgottenTopics, ft)
	}
	return sessionFetch{want: want, listed: listed}
}

// answered moves the session past the fetch sf, answered with resp or
// failed with err. It returns the error when the fetch failed on the
// session itself (the broker lost it or refused its epoch): a failure that
// the next fetch, a full one, repairs at once.
func (s *fetchSession) answered(sf sessionFetch, resp *kmsg.FetchResponse, err error) (sessionErr error) {
	if err == nil && resp.ErrorCode != 0 {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	switch {
	case err != nil:
		s.epoch, s.held = 0, nil
		if errors.Is(err, kerr.FetchSessionIDNotFound) || errors.Is(err, kerr.InvalidFetchSessionEpoch) || errors.Is(err, kerr.FetchSessionTopicIDError) {
			return err
		}
	case s.epoch == 0 && resp.SessionID == 0:
		s.id = 0 // the broker keeps no session: every fetch stays full
	case s.epoch == 0:
		s.id, s.epoch, s.held = resp.SessionID, 1, sf.want
	default:
		s.held = sf.want
		if s.epoch++; s.epoch == math.MaxInt32 {
			s.epoch = 1
		}
	}
	return nil
}
