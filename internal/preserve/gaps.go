package preserve

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/mirror/fastpath"
)

// Gaps is the fast path's GapFiller: a Filler on a client of the target with
// fastpath.TransactionOpts, made again with a new epoch of the same transactional id
// after one failed (which aborts the transaction it may have left open). Like a
// Filler, it is not safe for concurrent use.
type Gaps struct {
	cl     *kgo.Client
	txn    fastpath.Transactions
	filler *Filler
}

var _ fastpath.GapFiller = (*Gaps)(nil)

// NewGaps returns a GapFiller writing with transactional id txn.ID on cl, which it
// does not close.
func NewGaps(cl *kgo.Client, txn fastpath.Transactions) *Gaps {
	return &Gaps{cl: cl, txn: txn}
}

// Filler returns the filler, making it with a new producer epoch when there is none
// or the last one failed.
func (g *Gaps) Filler(ctx context.Context) (*Filler, error) {
	if g.filler == nil || g.filler.failed != nil {
		p, err := fastpath.NewProducer(ctx, g.cl, g.txn)
		if err != nil {
			return nil, fmt.Errorf("the filler's producer: %w", err)
		}
		g.filler = NewFiller(p)
	}
	return g.filler, nil
}

// Fill is Filler.Fill on the current filler.
func (g *Gaps) Fill(ctx context.Context, gaps []fastpath.Gap) []error {
	f, err := g.Filler(ctx)
	if err != nil {
		return fill(make([]error, len(gaps)), err)
	}
	return f.Fill(ctx, gaps)
}

// StartAt is Filler.StartAt on the current filler.
func (g *Gaps) StartAt(ctx context.Context, starts []Start) []error {
	f, err := g.Filler(ctx)
	if err != nil {
		return fill(make([]error, len(starts)), err)
	}
	return f.StartAt(ctx, starts)
}
