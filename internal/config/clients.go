package config

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// layer is one source of client properties; later layers override earlier
// ones. flowPrefix is how the user would set this layer at flow scope, for
// the hint when a flow-scope key is overridden by a later layer.
type layer struct {
	flowPrefix string
	p          props
}

// consumerDefaults are what MM2's consumers put-if-absent (enable.auto.commit
// is forced false by MM2 and dropped by Strait, which never autocommits).
var consumerDefaults = map[string]string{"auto.offset.reset": "earliest"}

// buildClient merges layers into a Client. role names the client in hints
// ("" for the cluster-level clients, which have no flow scope).
func (l *loader) buildClient(cluster, role string, layers []layer, defaults map[string]string) Client {
	merged := props{}
	for i, ly := range layers {
		for _, k := range slices.Sorted(maps.Keys(ly.p)) {
			e := ly.p[k]
			if prev := merged[k]; prev != nil && prev != e && i > 0 && role != "" &&
				strings.Contains(prev.key, "->") && !strings.Contains(e.key, "->") && ly.flowPrefix != "" {
				l.rep.warnf(prev.origin(), "has no effect on the %s: MM2 applies %q (%s) after it; set %s%s instead",
					role, e.key, e.where(), ly.flowPrefix, k)
			}
			merged[k] = e
		}
	}
	c := Client{Cluster: cluster}
	for _, k := range slices.Sorted(maps.Keys(merged)) {
		if k == "enable.auto.commit" {
			continue
		}
		e := merged[k]
		c.Props = append(c.Props, ClientProp{
			Key:    k,
			Value:  NewSecret(e.trimmed()),
			Secret: e.secret || isSecretKey(k),
			Origin: e.origin(),
		})
	}
	for _, k := range slices.Sorted(maps.Keys(defaults)) {
		if _, ok := merged[k]; !ok {
			c.Props = append(c.Props, ClientProp{Key: k, Value: NewSecret(defaults[k]), Origin: Origin{Key: k}})
		}
	}
	slices.SortFunc(c.Props, func(a, b ClientProp) int { return cmp.Compare(a.Key, b.Key) })
	return c
}

// without returns p minus the given keys and key prefixes (connector
// settings that share a client prefix, like consumer.poll.timeout.ms).
func (p props) without(keys ...string) props {
	out := props{}
	for k, e := range p {
		if !slices.ContainsFunc(keys, func(x string) bool {
			return k == x || (strings.HasSuffix(x, ".") && strings.HasPrefix(k, x))
		}) {
			out[k] = e
		}
	}
	return out
}

// clients builds the client roles of f (spec §1.5 "Client configs built
// inside the connectors"): cluster connection keys, then the connector's
// consumer./producer./admin. keys (set per flow), then source.* or
// target.* (set as <alias>.consumer.* etc.). The data producer is the
// Connect worker's: the target's producer.* plus the flow's
// producer.override.*.
func (l *loader) clients(f *Flow, cc, worker props) {
	s, t, fp := f.Source, f.Target, f.Name()+"."
	srcConn := cc.stripped("source.cluster.").only(connectionKeys)
	tgtConn := cc.stripped("target.cluster.").only(connectionKeys)
	consumer := cc.stripped("consumer.").without("poll.timeout.ms")
	producer := cc.stripped("producer.").without("override.")
	admin := cc.stripped("admin.").without("timeout.ms")

	role := func(name string) string { return name + " of " + f.Name() }
	f.SourceConsumer = l.buildClient(s, role("source consumer"), []layer{
		{"", srcConn}, {fp + "consumer.", consumer}, {fp + "source.consumer.", cc.stripped("source.consumer.")},
	}, consumerDefaults)
	f.SourceAdmin = l.buildClient(s, role("source admin"), []layer{
		{"", srcConn}, {fp + "admin.", admin}, {fp + "source.admin.", cc.stripped("source.admin.")},
	}, nil)
	f.SourceProducer = l.buildClient(s, role("source producer"), []layer{
		{"", srcConn}, {fp + "producer.", producer}, {fp + "source.producer.", cc.stripped("source.producer.")},
	}, nil)
	f.TargetConsumer = l.buildClient(t, role("target consumer"), []layer{
		{"", tgtConn}, {fp + "consumer.", consumer}, {fp + "target.consumer.", cc.stripped("target.consumer.")},
	}, consumerDefaults)
	f.TargetAdmin = l.buildClient(t, role("target admin"), []layer{
		{"", tgtConn}, {fp + "admin.", admin}, {fp + "target.admin.", cc.stripped("target.admin.")},
	}, nil)
	f.TargetProducer = l.buildClient(t, role("target producer"), []layer{
		{"", worker.only(map[string]bool{"bootstrap.servers": true})},
		{"", worker.stripped("producer.")},
		{fp + "producer.override.", cc.stripped("producer.override.")},
	}, nil)
	for _, c := range []Client{f.SourceConsumer, f.SourceAdmin, f.SourceProducer, f.TargetConsumer, f.TargetAdmin, f.TargetProducer} {
		l.checkClient(c)
	}
}

// checkClient validates the client values Strait interprets itself.
func (l *loader) checkClient(c Client) {
	for _, p := range c.Props {
		if p.Origin.Line == 0 {
			continue // a default
		}
		v := p.Value.Reveal()
		show := fmt.Sprintf("%q", p.Display())
		switch p.Key {
		case "security.protocol":
			if _, ok := securityProtocol(v); !ok {
				l.rep.errorf(p.Origin, "security.protocol %s is not valid: use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", show)
			}
		case "isolation.level":
			if v != "read_committed" && v != "read_uncommitted" {
				l.rep.errorf(p.Origin, "isolation.level %s is not valid: use read_committed or read_uncommitted", show)
			}
		case "auto.offset.reset":
			switch strings.ToLower(v) {
			case "earliest", "latest", "none":
			case "smallest", "largest":
				l.rep.errorf(p.Origin, "auto.offset.reset %s is the old consumer's name: use earliest (for smallest) or latest (for largest)", show)
			default:
				l.rep.errorf(p.Origin, "auto.offset.reset %s is not valid: use earliest, latest or none", show)
			}
		case "bootstrap.servers":
			for _, s := range bootstrapList(v) {
				if err := checkHostPort(s); err != nil {
					part := fmt.Sprintf("%q", s)
					if p.Secret {
						part = "[redacted]"
					}
					l.rep.errorf(p.Origin, "bootstrap server %s %v: write host:port[,host:port...]", part, err)
				}
			}
		}
	}
}
