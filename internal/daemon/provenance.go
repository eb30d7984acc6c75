package daemon

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"strait/internal/config"
	"strait/internal/mirror"
	"strait/internal/provenance"
	"strait/internal/tail"
)

// provenance sets up an active-active flow (its reverse flow is enabled
// too): it registers its producer ids in the target's registry, written by
// meta, and skips the source records the reverse flow wrote. A one-way flow
// gets the zero value and no registry topic.
func (b *builder) provenance(idempotent bool, meta *kgo.Client, tgtAdm *kadm.Client) (mirror.Provenance, error) {
	f, fc := b.f, b.f.cfg
	if !fc.ReverseEnabled {
		return mirror.Provenance{}, nil
	}
	name := fc.Name()
	if !idempotent {
		if fc.Policy.Class != config.DefaultPolicyClass {
			return mirror.Provenance{}, fmt.Errorf("flow %s: its reverse flow %s->%s is enabled and %s keeps topic names, so Strait breaks the loop by the producer ids it writes with, and %s.producer.enable.idempotence=false writes without one: remove that setting",
				name, fc.Target, fc.Source, fc.Policy.Class, fc.Target)
		}
		// The default policy's names already break the loop (spec §3.4).
		return mirror.Provenance{}, nil
	}
	reader, err := b.client(b.p.SourceConsumer, "producer-registry-reader", tail.ClientOpts()...)
	if err != nil {
		return mirror.Provenance{}, err
	}
	f.internal = append(f.internal, internalTopic{adm: tgtAdm, name: provenance.Topic, rf: fc.OffsetSyncsTopicReplicationFactor})
	return mirror.Provenance{
		Register: func(ctx context.Context, pid int64) error { return provenance.Register(ctx, meta, name, pid) },
		Returned: provenance.NewFilter(reader, fc.Target+"->"+fc.Source),
	}, nil
}
