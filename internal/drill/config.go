package drill

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/magiconair/properties"
)

// drillKeys are the flow settings the drill sets for its own flows; the
// file's values of them are dropped.
var drillKeys = map[string]bool{
	"clusters": true, "topics": true, "topics.exclude": true, "groups": true, "groups.exclude": true,
	"topics.blacklist": true, "groups.blacklist": true,
	"replication.policy.class": true, "emit.checkpoints.interval.seconds": true,
	"refresh.topics.interval.seconds": true, "refresh.groups.interval.seconds": true,
	"sync.topic.acls.enabled": true, "sync.group.offsets.enabled": true,
}

// Configure derives the drill's configuration from an MM2 file that
// connects clusters a and b: their connection settings (bootstrap, TLS,
// SASL, client overrides, config providers) under the aliases Alias(a) and
// Alias(b), with the file's top-level settings, and two flows of the
// drill's own between them, both ways, keeping names, on the drill's
// topics and groups only. No flow of the file is kept, so the drill never
// joins a production flow's group or failover state.
func Configure(data []byte, a, b string) ([]byte, error) {
	in := properties.NewProperties()
	in.DisableExpansion = true // ${env:...} and ${file:...} stay for config.Parse
	if err := in.Load(data, properties.UTF8); err != nil {
		return nil, fmt.Errorf("reading the configuration: %w", err)
	}
	aliases := map[string]bool{}
	for _, c := range strings.Split(in.GetString("clusters", ""), ",") {
		aliases[strings.TrimSpace(c)] = true
	}
	for _, c := range []string{a, b} {
		if !aliases[c] {
			return nil, fmt.Errorf("the configuration's clusters do not include %s", c)
		}
	}
	out := properties.NewProperties()
	out.DisableExpansion = true
	set := func(k, v string) {
		if _, _, err := out.Set(k, v); err != nil {
			panic(err) // no expansion: Set cannot fail
		}
	}
	for _, k := range in.Keys() {
		v, _ := in.Get(k)
		head, rest, dotted := strings.Cut(k, ".")
		switch {
		case drillKeys[k] || strings.Contains(head, "->"):
			// the drill's own, or a flow of the file
		case dotted && aliases[head]:
			if head == a || head == b {
				set(Alias(head)+"."+rest, v)
			}
		default:
			set(k, v)
		}
	}
	da, db := Alias(a), Alias(b)
	for _, kv := range [][2]string{
		{"clusters", da + ", " + db},
		{da + "->" + db + ".enabled", "true"},
		{db + "->" + da + ".enabled", "true"},
		{"replication.policy.class", "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"},
		{"topics", "strait-drill-.*"},
		{"groups", "strait-drill-.*"},
		{"emit.checkpoints.interval.seconds", "1"},
		{"refresh.topics.interval.seconds", "1"},
		{"refresh.groups.interval.seconds", "1"},
		{"sync.topic.acls.enabled", "false"},
	} {
		set(kv[0], kv[1])
	}
	var buf bytes.Buffer
	if _, err := out.Write(&buf, properties.UTF8); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
