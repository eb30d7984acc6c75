package fastpath

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"strait/internal/mirror/flow"
)

// Exactly-once mode (mirror.Config.Transactions). The fast path writes inside the
// transactions of one transactional producer (KIP-98), so that the data,
// the offset index records that map it and the progress that covers it
// become visible together or not at all:
//
//  1. InitProducerID with the node's transactional id fences every earlier
//     producer with that id and aborts its open transaction.
//  2. A remote partition joins the open transaction (AddPartitionsToTxn)
//     before its first batch in it; batches carry the transactional bit.
//  3. After Interval the transaction ends: no new batch is sent, and once
//     every batch sent in it is acknowledged, a goroutine writes the index
//     records of what was acknowledged into the index topic (one batch, in
//     the same transaction), commits progress with TxnOffsetCommit under
//     the group generation (KIP-447: a fenced node's commit is refused),
//     and commits with EndTxn.
//
// Any failure between 2 and 3 (the producer fenced, its sequence lost, a
// coordinator error that does not pass, batches unacknowledged past half
// the transaction timeout) ends the attempt: the forwarder stops, and
// Mirror.Run starts again from what the last committed transaction stored.
// A crash takes the same road. Readers that use read_committed see every
// source record exactly once; the aborted attempts leave records they skip.
//
// The wire protocol is Kafka 2.5's (KIP-447, before KIP-890 part 2):
// explicit AddPartitionsToTxn and AddOffsetsToTxn, and EndTxn that keeps
// the epoch. TransactionOpts caps the request versions that would switch a
// Kafka 4 coordinator to the newer protocol, so one code path serves Kafka
// 2.5 to 4.x.

// Transactions configures exactly-once mode.
type Transactions struct {
	// ID is the producer's transactional.id: the flow's progress group and
	// this node, so that a restarted node fences its predecessor at once.
	ID string
	// Interval is how long one transaction collects data before it
	// commits (a read_committed consumer on the target sees records that
	// much later).
	Interval time.Duration
	// Timeout is transaction.timeout.ms: the coordinator aborts a
	// transaction of ours that stays open longer (a node that died).
	Timeout time.Duration
}

// TransactionOpts are the target client's options in exactly-once mode:
// the request versions of Kafka 2.5's transaction protocol. Produce v12,
// TxnOffsetCommit v5 and EndTxn v5 would make a Kafka 4 coordinator run
// KIP-890 part 2, where partitions join implicitly and every EndTxn bumps
// the epoch.
func TransactionOpts() []kgo.Opt {
	v := kversion.Stable()
	v.SetMaxKeyVersion(int16(kmsg.Produce), 11)
	v.SetMaxKeyVersion(int16(kmsg.AddPartitionsToTxn), 3)
	v.SetMaxKeyVersion(int16(kmsg.TxnOffsetCommit), 4)
	v.SetMaxKeyVersion(int16(kmsg.EndTxn), 4)
	return []kgo.Opt{kgo.MaxVersions(v)}
}

// Producer issues the transaction requests of one producer id and epoch.
type Producer struct {
	Client *kgo.Client
	ID     string
	PID    int64
	Epoch  int16
}

// NewProducer returns a producer of txn.ID on cl, a client with
// TransactionOpts: a new epoch, which fences every earlier producer of the
// id and aborts its open transaction.
func NewProducer(ctx context.Context, cl *kgo.Client, txn Transactions) (Producer, error) {
	pid, epoch, err := NewProducerID(ctx, cl, &txn, nil)
	if err != nil {
		return Producer{}, fmt.Errorf("a producer id for %s: %w", txn.ID, err)
	}
	return Producer{Client: cl, ID: txn.ID, PID: pid, Epoch: epoch}, nil
}

// txnRetryMax bounds the backoff between tries of a transaction request
// that failed retriably (CONCURRENT_TRANSACTIONS while the markers of the
// last transaction are written, a coordinator moving).
const txnRetryMax = time.Second

// retryTxn calls try until it succeeds, fails for good, or ctx ends: try
// reports the error and whether trying again may help.
func retryTxn(ctx context.Context, what string, try func() (error, bool)) error {
	backoff := 10 * time.Millisecond
	for {
		err, again := try()
		if err == nil {
			return nil
		}
		if !again {
			return fmt.Errorf("%s: %w", what, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (gave up: %w)", what, err, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, txnRetryMax)
	}
}

// retriableTxn reports whether a transaction request that failed with err
// may succeed if sent again as it is.
func retriableTxn(err error) bool {
	return errors.Is(err, kerr.ConcurrentTransactions) || kerr.IsRetriable(err)
}

// AddPartitions adds remote partitions to the open transaction.
func (p Producer) AddPartitions(ctx context.Context, parts map[string][]int32) error {
	return retryTxn(ctx, "adding partitions to the transaction", func() (error, bool) {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = p.ID, p.PID, p.Epoch
		for topic, nums := range parts {
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = topic, nums
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, p.Client)
		if err != nil {
			return err, kerr.IsRetriable(err)
		}
		var first error
		for _, t := range resp.Topics {
			for _, pr := range t.Partitions {
				err := kerr.ErrorForCode(pr.ErrorCode)
				// OPERATION_NOT_ATTEMPTED: another partition of the
				// request failed; its error decides.
				if err != nil && !errors.Is(err, kerr.OperationNotAttempted) && first == nil {
					first = fmt.Errorf("%s[%d]: %w", t.Topic, pr.Partition, err)
				}
			}
		}
		return first, first != nil && retriableTxn(first)
	})
}

// CommitOffsets adds the group to the transaction and commits offs in it
// with the group generation and member id (generation -1 and no member for
// a group without members).
func (p Producer) CommitOffsets(ctx context.Context, group string, generation int32, member string, offs map[string][]kmsg.TxnOffsetCommitRequestTopicPartition) error {
	err := retryTxn(ctx, "adding the progress group to the transaction", func() (error, bool) {
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = p.ID, p.PID, p.Epoch, group
		resp, err := req.RequestWith(ctx, p.Client)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		return err, err != nil && retriableTxn(err)
	})
	if err != nil {
		return err
	}
	return retryTxn(ctx, "committing progress in the transaction", func() (error, bool) {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = p.ID, group, p.PID, p.Epoch
		req.Generation, req.MemberID = generation, member
		for topic, parts := range offs {
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic, rt.Partitions = topic, parts
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, p.Client)
		if err != nil {
			return err, kerr.IsRetriable(err)
		}
		for _, t := range resp.Topics {
			for _, pr := range t.Partitions {
				if err := kerr.ErrorForCode(pr.ErrorCode); err != nil {
					// ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID: this node was
					// fenced out of the flow's group; the transaction must
					// not commit.
					return fmt.Errorf("%s[%d]: %w", t.Topic, pr.Partition, err), retriableTxn(err)
				}
			}
		}
		return nil, false
	})
}

// End commits or aborts the open transaction.
func (p Producer) End(ctx context.Context, commit bool) error {
	what := "committing the transaction"
	if !commit {
		what = "aborting the transaction"
	}
	return retryTxn(ctx, what, func() (error, bool) {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = p.ID, p.PID, p.Epoch, commit
		resp, err := req.RequestWith(ctx, p.Client)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		return err, err != nil && retriableTxn(err)
	})
}

// ProduceOne writes one batch, already rewritten for the producer, to a
// partition's leader and returns its base offset. A retriable error sends
// the same batch again (same sequence: the broker answers a duplicate with
// its first offset).
func (p Producer) ProduceOne(ctx context.Context, topic string, partition int32, b []byte, acks int16) (int64, error) {
	var base int64
	err := retryTxn(ctx, fmt.Sprintf("writing to %s[%d]", topic, partition), func() (error, bool) {
		md, err := kadm.NewClient(p.Client).Metadata(ctx, topic)
		if err != nil {
			return err, true
		}
		leader := int32(-1)
		if pd, ok := md.Topics[topic].Partitions[partition]; ok && pd.Err == nil {
			leader = pd.Leader
		}
		if leader < 0 {
			return fmt.Errorf("no leader: %w", kerr.LeaderNotAvailable), true
		}
		req := kmsg.NewPtrProduceRequest()
		req.TransactionID, req.Acks, req.TimeoutMillis = &p.ID, acks, 30_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = partition, b
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := p.Client.Broker(int(leader)).Request(ctx, req)
		if err != nil {
			// No answer: the batch may be written or not; the same
			// sequence again settles it.
			return err, !errors.Is(err, kgo.ErrClientClosed)
		}
		pr := resp.(*kmsg.ProduceResponse)
		if len(pr.Topics) != 1 || len(pr.Topics[0].Partitions) != 1 {
			return errors.New("the produce response does not answer the partition"), true
		}
		r := pr.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return err, flow.Classify(err) == flow.Retry
		}
		base = r.BaseOffset
		return nil, false
	})
	return base, err
}
