package config

import (
	"bytes"
	"strings"
	"testing"

	"strait/internal/policy"
)

func TestRenameRulesResolution(t *testing.T) {
	const three = `clusters = A, B, C
A.bootstrap.servers = a.example:9092
B.bootstrap.servers = b.example:9092
C.bootstrap.servers = c.example:9092
A->B.enabled = true
A->C.enabled = true
`
	tests := []struct {
		name        string
		src         string
		want        map[string]string // flow -> Rules.String() ("" = none)
		wantLine    map[string]int    // flow -> line of the rules' origin
		wantWarning string
	}{
		{
			name:     "top level applies to every flow",
			src:      three + "strait.rename.rules = orders=prod.orders, re:^legacy-(.*)$=new-$1\n",
			want:     map[string]string{"A->B": "orders=prod.orders, re:^legacy-(.*)$=new-$1", "A->C": "orders=prod.orders, re:^legacy-(.*)$=new-$1"},
			wantLine: map[string]int{"A->B": 7, "A->C": 7},
		},
		{
			name:     "flow scope overrides the top level",
			src:      three + "strait.rename.rules = orders=prod.orders\nA->C.strait.rename.rules = orders=c.orders\n",
			want:     map[string]string{"A->B": "orders=prod.orders", "A->C": "orders=c.orders"},
			wantLine: map[string]int{"A->B": 7, "A->C": 8},
		},
		{
			name: "an empty flow value renames nothing there",
			src:  three + "strait.rename.rules = orders=prod.orders\nA->C.strait.rename.rules =\n",
			want: map[string]string{"A->B": "orders=prod.orders", "A->C": ""},
		},
		{
			name: "a regex escape written with two backslashes",
			src:  three + `A->B.strait.rename.rules = re:^legacy\\.(.*)$=new.$1` + "\n",
			want: map[string]string{"A->B": `re:^legacy\.(.*)$=new.$1`, "A->C": ""},
		},
		{
			name: "a rule continued on the next line",
			src:  three + "A->B.strait.rename.rules = orders=prod.orders, \\\n    payments=prod.payments\n",
			want: map[string]string{"A->B": "orders=prod.orders, payments=prod.payments", "A->C": ""},
		},
		{
			name: "the example in docs/configuration.md (Renaming topics)",
			src:  three + "A->B.strait.rename.rules = orders=prod.orders, re:^legacy-(.*)$=new-$1, \\\n    re:^([a-z]+)\\\\.v1$=$1.v2\n",
			want: map[string]string{"A->B": `orders=prod.orders, re:^legacy-(.*)$=new-$1, re:^([a-z]+)\.v1$=$1.v2`, "A->C": ""},
		},
		{
			name:        "per cluster it has no effect",
			src:         three + "A.strait.rename.rules = orders=prod.orders\n",
			want:        map[string]string{"A->B": "", "A->C": ""},
			wantWarning: `key "A.strait.rename.rules" (line 7): has no effect: Strait reads strait.rename.rules at the top level or per flow (A->B.strait.rename.rules), not per cluster`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src)
			for name, want := range tt.want {
				f := flowOf(t, c, name)
				if got := f.Policy.Rules.String(); got != want {
					t.Errorf("%s rules = %q, want %q", name, got, want)
				}
				if line, ok := tt.wantLine[name]; ok && f.Origins[keyRenameRules].Line != line {
					t.Errorf("%s rules from %v, want line %d", name, f.Origins[keyRenameRules], line)
				}
			}
			if tt.wantWarning != "" && !strings.Contains(warningsText(c), tt.wantWarning) {
				t.Errorf("warnings:\n%s\nwant one containing:\n%s", warningsText(c), tt.wantWarning)
			}
		})
	}
}

func TestRenameRulesErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{
			name: "a lost regex escape",
			src:  base + `strait.rename.rules = re:^a\d(.*)$=b$1` + "\n",
			want: `mm2.properties:5: key "strait.rename.rules": \d in a properties file is an escape that reads as plain "d", so a regex would see "d": write \\d (two backslashes) for the regex escape`,
		},
		{
			name: "a bad rule, with the flow key and its line",
			src:  base + "A->B.strait.rename.rules = orders\n",
			want: `mm2.properties:5: key "A->B.strait.rename.rules": rule 1 (orders): no "=": write NAME=NEW-NAME for one topic or re:REGEX=REPLACEMENT for a pattern, e.g. orders=prod.orders or re:^legacy-(.*)$=new-$1`,
		},
		{
			name: "a secret value is not shown",
			src:  base + "config.providers = env\nconfig.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider\nA->B.strait.rename.rules = ${env:KAFKA_PASSWORD}\n",
			want: `mm2.properties:7: key "A->B.strait.rename.rules": the rules in [redacted] are not valid: check the value where it is defined`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.src)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error:\n%v\nwant:\n%s", err, tt.want)
			}
		})
	}
}

func TestKnownPolicyClasses(t *testing.T) {
	tests := []struct {
		class       string
		want        string
		wantWarning string
	}{
		{class: DefaultPolicyClass, want: DefaultPolicyClass},
		{class: "IdentityReplicationPolicy", want: IdentityPolicyClass, wantWarning: "MM2 loads the policy by its full class name: write " + IdentityPolicyClass},
		{class: "io.strimzi.kafka.connect.mirror.IdentityReplicationPolicy", want: IdentityPolicyClass,
			wantWarning: `key "replication.policy.class" (line 5): Strait runs "io.strimzi.kafka.connect.mirror.IdentityReplicationPolicy" as org.apache.kafka.connect.mirror.IdentityReplicationPolicy: remote topics keep their names as with that class, but replicated heartbeats go to "<source>.heartbeats" as with Kafka's policy, not into the target's own "heartbeats" topic`},
		{class: "com.amazonaws.kafka.samples.CustomMM2ReplicationPolicy", want: IdentityPolicyClass,
			wantWarning: `Strait runs "com.amazonaws.kafka.samples.CustomMM2ReplicationPolicy" as org.apache.kafka.connect.mirror.IdentityReplicationPolicy`},
	}
	for _, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			c := mustParse(t, base+"replication.policy.class = "+tt.class+"\n")
			f := flowOf(t, c, "A->B")
			if f.Policy.Class != tt.want {
				t.Errorf("class = %q, want %q", f.Policy.Class, tt.want)
			}
			if tt.wantWarning != "" && !strings.Contains(warningsText(c), tt.wantWarning) {
				t.Errorf("warnings:\n%s\nwant one containing:\n%s", warningsText(c), tt.wantWarning)
			}
			if _, err := f.ReplicationPolicy(); err != nil {
				t.Errorf("ReplicationPolicy: %v", err)
			}
		})
	}
	_, err := parse(t, base+"replication.policy.class = com.example.SuffixPolicy\n")
	if err == nil || !strings.Contains(err.Error(), `unknown replication policy class "com.example.SuffixPolicy": a Java policy cannot run in Strait`) ||
		!strings.Contains(err.Error(), "write strait.rename.rules (docs/configuration.md, Renaming topics)") {
		t.Errorf("unknown class: error = %v", err)
	}
}

func TestFlowReplicationPolicy(t *testing.T) {
	// Active-active with the same top-level rules: each flow reads the other's names back.
	c := mustParse(t, base+"B->A.enabled = true\nreplication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\nstrait.rename.rules = re:^(.*)$=$1.mirror\n")
	ab, ba := flowOf(t, c, "A->B"), flowOf(t, c, "B->A")
	if got := ab.Policy.Inbound["B"].Rules.String(); got != "re:^(.*)$=$1.mirror" || len(ab.Policy.Inbound) != 1 {
		t.Fatalf("A->B inbound = %v", ab.Policy.Inbound)
	}
	if ba.Policy.Inbound["A"].Rules == nil {
		t.Fatalf("B->A inbound = %v", ba.Policy.Inbound)
	}
	p, err := ab.ReplicationPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if got := p.FormatRemoteTopic("A", "orders"); got != "orders.mirror" {
		t.Errorf("FormatRemoteTopic(A, orders) = %q", got)
	}
	if !policy.IsCycle(p, "B", "orders.mirror") {
		t.Error("orders.mirror on A came from B, but IsCycle(A->B) is false")
	}
	if got := policy.CheckpointTopic(p, "A", "B", "orders.mirror"); got != "orders" {
		t.Errorf("CheckpointTopic(orders.mirror) = %q, want orders", got)
	}

	// No rules anywhere: the plain policy of the class.
	plain := mustParse(t, base)
	p, err = flowOf(t, plain, "A->B").ReplicationPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if _, renaming := p.(*policy.Renaming); renaming {
		t.Error("a flow without rules got a renaming policy")
	}
	// A heartbeat-only flow's rules rename nothing, so they are nobody's inbound rules.
	hb := mustParse(t, base+"B->A.strait.rename.rules = a=b\n")
	if in := flowOf(t, hb, "A->B").Policy.Inbound; in != nil {
		t.Errorf("inbound from a heartbeat-only flow: %v", in)
	}
}

func TestDescribeShowsRules(t *testing.T) {
	c := mustParse(t, base+"A->B.strait.rename.rules = orders=prod.orders, re:^legacy-(.*)$=new-$1\n")
	var b bytes.Buffer
	c.Describe(&b)
	want := "strait.rename.rules                                  orders=prod.orders, re:^legacy-(.*)$=new-$1  (line 5: A->B.strait.rename.rules)"
	if !strings.Contains(b.String(), want) {
		t.Errorf("Describe does not show the rules:\n%s", b.String())
	}
}

func TestRegexRouterRules(t *testing.T) {
	router := func(scope, regex, repl string) string {
		return scope + "transforms = route\n" +
			scope + "transforms.route.type = org.apache.kafka.connect.transforms.RegexRouter\n" +
			scope + "transforms.route.regex = " + regex + "\n" +
			scope + "transforms.route.replacement = " + repl + "\n"
	}
	identity := "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n"
	tests := []struct {
		name         string
		src          string // after base
		want         string // the rule, as file text
		wantProblems []string
	}{
		{name: "identity: as it is", src: identity + router("", `^legacy-(.*)$`, `new-$1`), want: "re:^legacy-(.*)$=new-${1}"},
		{name: "identity: Java escapes and greedy group numbers", src: identity + router("A->B.", `^(a)(b)-(.*)$`, `$3\-$12$2`), want: "re:^(a)(b)-(.*)$=${3}-${1}2${2}"},
		{name: "default: the prefix spelt out", src: router("", `^A\\.legacy-(.*)$`, `new-$1`), want: `re:^legacy-(.*)$=new-${1}`},
		{name: "default: prefix with an unescaped dot", src: router("", `A.(.*)`, `x.$1`), want: `re:^(.*)=x.${1}`,
			wantProblems: []string{`in MM2 the router also renames "A.heartbeats", which Strait never renames`}},
		{name: "default: $0 gets the prefix back", src: router("", `^A\\.(o.*)$`, `$0-copy`), want: `re:^(o.*)$=A.${0}-copy`},
		{name: "default: one group around the name", src: router("", `(.*)`, `$1-mirror`), want: "re:(.*)=A.${1}-mirror",
			wantProblems: []string{`in MM2 the router also renames "A.heartbeats", which Strait never renames`, `in MM2 the router also renames "heartbeats"`, `"A.checkpoints.internal"`}},
		{name: "default: another prefix never matches", src: router("", `^B\\.(.*)$`, `$1`), want: ""},
		{name: "default: not convertible", src: router("", `.*\\.(.*)`, `$1`),
			wantProblems: []string{`with DefaultReplicationPolicy the router sees remote names "A.<topic>", and Strait converts only a regex that starts with that prefix written out (^A\.(.*)$) or one group around the whole name (^(.*)$)`}},
		{name: "default: alternation", src: router("", `^A\\.x|y$`, `z`), wantProblems: []string{"Strait converts only"}},
		{name: "predicate", src: identity + router("", `^(a.*)$`, `$1-x`) + "transforms.route.predicate = isFoo\n", want: "re:^(a.*)$=${1}-x",
			wantProblems: []string{`it renames only the records its predicate "isFoo" selects`}},
		{name: "regex Go cannot run", src: identity + router("", `^(?!x)(.*)$`, `$1`), wantProblems: []string{`its regex: pattern "^(?!x)(.*)$" uses negative lookahead`}},
		{name: "no replacement", src: identity + "transforms = route\ntransforms.route.type = RegexRouter\ntransforms.route.regex = a\n",
			wantProblems: []string{"transforms.route.replacement is not set (Connect requires it)"}},
		{name: "a rule that cannot be reversed", src: identity + router("", `^(?:a|b)-(.*)$`, `$1`), want: "re:^(?:a|b)-(.*)$=${1}",
			wantProblems: []string{"the equivalent rule is not accepted: rule 1 (re:^(?:a|b)-(.*)$=${1}): the rule cannot be reversed"}},
		{name: "two routers", src: identity + "transforms = r1, r2\ntransforms.r1.type = RegexRouter\ntransforms.r1.regex = (a.*)\ntransforms.r1.replacement = $1\ntransforms.r2.type = RegexRouter\ntransforms.r2.regex = (b.*)\ntransforms.r2.replacement = $1\n",
			want: "re:(a.*)=${1}", wantProblems: []string{`it chains 2 RegexRouters ("r1", "r2")`}},
		{name: "bad group in the replacement", src: identity + router("", `^(a)$`, `$2`), wantProblems: []string{"its replacement uses group 2, which its regex does not have"}},
		{name: "no router", src: identity, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := parse(t, base+tt.src)
			rule, problems := RegexRouterRules(flowOf(t, c, "A->B"))
			if rule != tt.want {
				t.Errorf("rule = %q, want %q", rule, tt.want)
			}
			joined := strings.Join(problems, "\n")
			for _, w := range tt.wantProblems {
				if !strings.Contains(joined, w) {
					t.Errorf("problems:\n%s\nwant one containing:\n%s", joined, w)
				}
			}
			if len(tt.wantProblems) == 0 && len(problems) > 0 {
				t.Errorf("problems = %q, want none", problems)
			}
		})
	}
}

func TestRegexRouterRefused(t *testing.T) {
	src := base + "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n" +
		"A->B.transforms = route\n" +
		"A->B.transforms.route.type = org.apache.kafka.connect.transforms.RegexRouter\n" +
		"A->B.transforms.route.regex = ^legacy\\\\.(.*)$\n" +
		"A->B.transforms.route.replacement = new.$1\n"
	_, err := parse(t, src)
	want := `mm2.properties:6: key "A->B.transforms": transform "route" (RegexRouter) renames topics, which Strait does with rename rules, not transforms: for flow A->B, remove the transforms settings and set A->B.strait.rename.rules = re:^legacy\\.(.*)$=new.${1} (the same remote names)`
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
	// The rule it names is accepted as it is printed.
	c := mustParse(t, base+"A->B.strait.rename.rules = re:^legacy\\\\.(.*)$=new.${1}\n")
	if got, _ := flowOf(t, c, "A->B").Policy.Rules.Rename("legacy.orders"); got != "new.orders" {
		t.Errorf("the printed rule renames legacy.orders to %q", got)
	}
	// A router next to another transform: the other is refused as before, alone.
	_, err = parse(t, src+"A->B.transforms = route, mask\nA->B.transforms.mask.type = org.apache.kafka.connect.transforms.MaskField$Value\n")
	if err == nil || !strings.Contains(err.Error(), `cannot run transform "mask"; remove the key and its transforms.* settings`) ||
		!strings.Contains(err.Error(), `transform "route" (RegexRouter) renames topics`) {
		t.Errorf("error = %v", err)
	}
}

// Rename rules can drop the alias the default policy puts in a name, so a
// ring of three flows with rules on one is refused like an identity ring.
func TestCycleWithRenameRulesIsRefused(t *testing.T) {
	ring := threeClusters + "A->B.enabled = true\nB->C.enabled = true\nC->A.enabled = true\n"
	_, err := parse(t, ring+"B->C.strait.rename.rules = re:^A\\\\.(.*)$=$1\n")
	if err == nil || !strings.Contains(err.Error(), "A->B, B->C, C->A form a cycle, and a policy other than DefaultReplicationPolicy, or strait.rename.rules, may keep topic names on it") {
		t.Fatalf("a ring with rename rules: error %v, want the cycle named", err)
	}
}
