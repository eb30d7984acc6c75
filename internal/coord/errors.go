package coord

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// action is what the group-protocol loop does after a failed request.
type action int

const (
	// retry: back off, then join again, keeping the membership and the work (the
	// coordinator is moving or loading, a request timed out, or an error the loop cannot
	// fix, which it logs).
	retry action = iota
	// rejoin: join again at once, keeping the membership and the work (a rebalance is in
	// progress; the broker gave the member id to use, KIP-394).
	rejoin
	// lost: the membership is gone, and with it everything the member owned; join again
	// as a new member.
	lost
)

// classify is the one place Kafka's answers to JoinGroup, SyncGroup and Heartbeat are
// sorted into actions.
func classify(err error) action {
	switch {
	case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.IllegalGeneration), errors.Is(err, kerr.FencedInstanceID),
		errors.Is(err, errSilent):
		return lost
	case errors.Is(err, kerr.RebalanceInProgress), errors.Is(err, kerr.MemberIDRequired):
		return rejoin
	default:
		return retry
	}
}

// expected reports whether err is part of the protocol's normal course (the coordinator
// moving or loading), logged at debug rather than as a warning.
func expected(err error) bool {
	return errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.NotCoordinator) ||
		errors.Is(err, kerr.CoordinatorLoadInProgress)
}

const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 10 * time.Second
)

// backoff is a capped exponential backoff with jitter.
type backoff struct {
	max time.Duration
	n   int
}

// next returns the next wait: 100 ms doubling up to max, each drawn from its upper half.
func (b *backoff) next() time.Duration {
	d := minBackoff << min(b.n, 16)
	b.n++
	d = min(d, b.max)
	return d/2 + rand.N(d/2+1)
}

func (b *backoff) reset() { b.n = 0 }
