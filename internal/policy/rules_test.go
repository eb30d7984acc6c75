package policy

import (
	"slices"
	"strings"
	"testing"
)

// mustRules parses rename rules or fails the test.
func mustRules(t *testing.T, text string) *Rules {
	t.Helper()
	rs, err := ParseRules(text)
	if err != nil {
		t.Fatalf("ParseRules(%q): %v", text, err)
	}
	return rs
}

func TestParseRulesRename(t *testing.T) {
	type rename struct{ topic, want string } // want "" = no rule matches
	tests := []struct {
		name    string
		text    string
		renames []rename
		wantStr string // String(), when it differs from text
	}{
		{name: "exact", text: "orders=prod.orders", renames: []rename{{"orders", "prod.orders"}, {"orders2", ""}, {"prod.orders", ""}}},
		{name: "regex with $1", text: "re:^legacy-(.*)$=new-$1",
			renames: []rename{{"legacy-a", "new-a"}, {"legacy-", "new-"}, {"xlegacy-a", ""}, {"legacy", ""}}},
		{name: "full match without anchors", text: "re:legacy-(.*)=new-$1", renames: []rename{{"legacy-a", "new-a"}, {"a-legacy-b", ""}}},
		{name: "first rule wins", text: "orders=first, re:^(ord.*)$=$1-second, re:^(.*)$=$1-third",
			renames: []rename{{"orders", "first"}, {"ordinal", "ordinal-second"}, {"x", "x-third"}}},
		{name: "white space around rules and =", text: "  orders = prod.orders ,\tre: ^a-(.*)$ = b-${1}  ",
			renames: []rename{{"orders", "prod.orders"}, {"a-x", "b-x"}}, wantStr: "orders = prod.orders, re: ^a-(.*)$ = b-${1}"},
		{name: "comma inside a repetition belongs to the regex", text: "re:^(x{1,3})-(.*)$=$2.$1, y=z",
			renames: []rename{{"xx-a", "a.xx"}, {"y", "z"}, {"xxxx-a", ""}}},
		{name: "named group", text: "re:^(?P<team>[a-z]+)\\.(?P<rest>.*)$=${rest}.${team}", renames: []rename{{"pay.orders", "orders.pay"}}},
		{name: "braces make digits explicit", text: "re:^(a)(b)$=${1}2-$2", renames: []rename{{"ab", "a2-b"}}},
		{name: "$12 is group 1 then 2 when there are fewer than 12 groups, as in Java", text: "re:^(a)(b)$=$12-$2", renames: []rename{{"ab", "a2-b"}}},
		{name: "$12 is group 12 when it exists", text: "re:^(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)$=$12$1$2$3$4$5$6$7$8$9$10$11",
			renames: []rename{{"abcdefghijkl", "labcdefghijk"}}},
		{name: "$0 is the whole name", text: "re:^.*-raw$=$0-copy", renames: []rename{{"x-raw", "x-raw-copy"}}},
		{name: "optional group that did not match is empty", text: "re:^(a)?(b)$=x$1$2", renames: []rename{{"b", "xb"}, {"ab", "xab"}}},
		{name: "empty value renames nothing", text: "  ", renames: []rename{{"orders", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := mustRules(t, tt.text)
			for _, r := range tt.renames {
				got, ok := rs.Rename(r.topic)
				if got != r.want || ok != (r.want != "") {
					t.Errorf("Rename(%q) = (%q, %v), want %q", r.topic, got, ok, r.want)
				}
			}
			want := tt.wantStr
			if want == "" {
				want = strings.TrimSpace(tt.text)
			}
			if got := rs.String(); got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			again := mustRules(t, rs.String())
			if again.String() != rs.String() {
				t.Errorf("String() does not read back: %q then %q", rs.String(), again.String())
			}
		})
	}
}

func TestParseRulesErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string // the whole error
	}{
		{name: "no =", text: "orders", want: `rule 1 (orders): no "=": write NAME=NEW-NAME for one topic or re:REGEX=REPLACEMENT for a pattern, e.g. orders=prod.orders or re:^legacy-(.*)$=new-$1`},
		{name: "two =", text: "a=b=c", want: `rule 1 (a=b=c): more than one "=": write NAME=NEW-NAME for one topic or re:REGEX=REPLACEMENT for a pattern, e.g. orders=prod.orders or re:^legacy-(.*)$=new-$1`},
		{name: "empty rule", text: "a=b,,c=d", want: `rule 2 (""): the rule is empty: remove the extra comma`},
		{name: "trailing comma", text: "a=b,", want: `rule 2 (""): the rule is empty: remove the extra comma`},
		{name: "regex without re:", text: "legacy-.*=new", want: `rule 1 (legacy-.*=new): the topic name "legacy-.*" looks like a regex: write re:legacy-.*=... to match a pattern`},
		{name: "bad remote name", text: "a=b c", want: `rule 1 (a=b c): the remote name "b c" has ' ', which Kafka does not allow in a topic name (only ASCII letters, digits, '.', '_' and '-')`},
		{name: "remote name too long", text: "a=" + strings.Repeat("x", 250), want: `longer than Kafka's limit of 249 characters`},
		{name: "same name", text: "a=a", want: `rule 1 (a=a): the rule keeps the name: remove it (a topic no rule matches keeps the flow's replication.policy.class naming)`},
		{name: "heartbeats never renamed", text: "heartbeats=hb", want: `rule 1 (heartbeats=hb): "heartbeats" is a heartbeats topic (its name ends in "heartbeats"), which Strait never renames: remove the rule`},
		{name: "internal never renamed", text: "__consumer_offsets=x", want: `rule 1 (__consumer_offsets=x): "__consumer_offsets" is an internal topic, which Strait never renames: remove the rule`},
		{name: "internal remote name", text: "a=b.internal", want: `rule 1 (a=b.internal): the remote name "b.internal" is an internal topic: name the remote topic like an ordinary topic`},
		{name: "heartbeats remote name", text: "a=myheartbeats", want: `rule 1 (a=myheartbeats): the remote name "myheartbeats" is a heartbeats topic (its name ends in "heartbeats"): name the remote topic like an ordinary topic`},
		{name: "regex making internal names", text: "re:^(.*)$=$1-internal", want: `rule 1 (re:^(.*)$=$1-internal): every remote name it makes is an internal topic: name remote topics like ordinary topics`},
		{name: "duplicate source", text: "a=b, a=c", want: `rule 2 (a=c): rule 1 (a=b) already renames "a": keep one of the two`},
		{name: "two sources, one remote name", text: "a=x, b=x", want: `rule 2 (b=x): rule 1 (a=x) already names a remote topic "x": two topics cannot share one remote topic; give each its own name`},
		{name: "exact shadowed by a regex", text: "re:^o(.*)$=$1, orders=x", want: `rule 2 (orders=x): it never applies: rule 1 (re:^o(.*)$=$1) matches "orders" first; put the exact rule before it`},
		{name: "exact and regex name one topic", text: "foo=bar-c, re:^(.*)$=$1-c", want: `rule 1 (foo=bar-c): rule 2 (re:^(.*)$=$1-c) gives topic "bar" the same remote name "bar-c": two topics cannot share one remote topic; give each its own name`},
		{name: "lookahead", text: "re:^a(?!b).*$=c", want: `rule 1 (re:^a(?!b).*$=c): pattern "^a(?!b).*$" uses negative lookahead "(?!": Go's RE2 engine does not support it (it has no lookaround, which keeps matching linear-time); write the regex without it, or write exact rules`},
		{name: "backreference", text: `re:^(a)\1$=x`, want: `uses backreference "\\1"`},
		{name: "invalid regex", text: "re:^(a$=x", want: `pattern "^(a$" is not a valid Go (RE2) regular expression`},
		{name: "no replacement", text: "re:^a$=", want: `rule 1 (re:^a$=): the replacement is empty: give the remote name, e.g. re:^legacy-(.*)$=new-$1`},
		{name: "no regex", text: "re:=x", want: `rule 1 (re:=x): the regex is empty`},
		{name: "no = in regex rule", text: "re:^a$", want: `rule 1 (re:^a$): no "=" between the regex and the replacement`},
		{name: "missing group", text: "re:^(a)$=$2", want: `rule 1 (re:^(a)$=$2): the replacement uses group 2, but the regex has only 1 group`},
		{name: "missing named group", text: "re:^(a)$=${x}", want: `the replacement uses group "x", but the regex has no group of that name (name one with (?P<x>...))`},
		{name: "unclosed brace", text: "re:^(a)$=${1", want: `the replacement has "${" without "}"`},
		{name: "stray dollar", text: "re:^(a)$=$x", want: `the replacement has a "$" that starts no group`},
		{name: "bad character in replacement", text: `re:^(a)$=$1/x`, want: `the replacement has '/', which Kafka does not allow in a topic name`},
		{name: "white space in regex", text: "re:^a b$=c", want: `the regex contains white space, which no topic name does: remove it`},
		{name: "part outside groups varies", text: "re:^(?:a|b)-(.*)$=$1", want: `rule 1 (re:^(?:a|b)-(.*)$=$1): the rule cannot be reversed (outside the groups the replacement uses, the regex has "[ab]", which matches different texts): two topics could get one remote name, and a remote name could not be traced back to its source topic; capture every part that varies in a group the replacement uses (e.g. re:^(a|b)-(.*)$=$1.$2 rather than re:^(?:a|b)-(.*)$=$1), or write exact rules`},
		{name: "group unused", text: "re:^(a|b)-(.*)$=$2", want: `the rule cannot be reversed (group 1 is not used in the replacement)`},
		{name: "case folded literal", text: "re:(?i)legacy-(.*)=$1", want: `the rule cannot be reversed (the part "(?i:LEGACY-)" ignores case, so it matches several spellings)`},
		{name: "adjacent groups of varying length", text: "re:^(.*)-(.*)$=$1$2", want: `the rule cannot be reversed (the replacement joins group 1 and group 2 with nothing between them while group 1 matches texts of different lengths)`},
		{name: "every problem is reported", text: "a, b=c d, re:^(?=x)$=y", want: `rule 1 (a): no "="`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := ParseRules(tt.text)
			if err == nil {
				t.Fatalf("ParseRules(%q) = %q, want an error", tt.text, rs)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseRules(%q) error:\n%v\nwant it to contain:\n%s", tt.text, err, tt.want)
			}
		})
	}
	t.Run("all problems", func(t *testing.T) {
		_, err := ParseRules("a, b=c d, re:^(?=x)$=y")
		list, ok := err.(RuleErrors)
		if !ok || len(list) != 3 || list[0].Rule != 1 || list[1].Rule != 2 || list[2].Rule != 3 {
			t.Errorf("error = %#v, want three RuleErrors for rules 1, 2, 3", err)
		}
	})
}

func TestRulesInvert(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		remote string
		want   string // "" = not a name the rules make
	}{
		{name: "exact", text: "orders=prod.orders", remote: "prod.orders", want: "orders"},
		{name: "exact, other name", text: "orders=prod.orders", remote: "orders"},
		{name: "regex", text: "re:^legacy-(.*)$=new-$1", remote: "new-x.y", want: "legacy-x.y"},
		{name: "regex, not its shape", text: "re:^legacy-(.*)$=new-$1", remote: "old-x"},
		{name: "reordered groups", text: "re:^([a-z]+)\\.(.*)$=$2.$1", remote: "orders.v2.team", want: "team.orders.v2"},
		{name: "group used twice", text: "re:^(.*)$=$1-$1", remote: "a-a", want: "a"},
		{name: "group used twice, different", text: "re:^(.*)$=$1-$1", remote: "a-b"},
		// Neither a greedy nor an ungreedy inverse finds the cut in the middle: the
		// fuzzer's ${0}0${0} of 000000000000 (testdata/fuzz/FuzzParseRules).
		{name: "group used twice around its own text", text: "re:^(.*)$=$1x$1", remote: "xxxxx", want: "xx"},
		// $0 holds group 2, so the values depend on each other: both inverses
		// cut 000 wrongly ("00|0|" and "|0|00"), and only a search finds 0|0|0.
		{name: "a group beside the $0 that holds it", text: "re:^()(0*)$=${2}0${0}", remote: "000", want: "0"},
		{name: "$0", text: "re:^.*-raw$=$0.copy", remote: "x-raw.copy", want: "x-raw"},
		{name: "$0 whose source does not match", text: "re:^.*-raw$=$0.copy", remote: "x-cooked.copy"},
		{name: "fixed-length adjacent groups", text: "re:^([0-9]{4})-(.*)$=$1$2", remote: "2024orders", want: "2024-orders"},
		{name: "a name an earlier rule takes is not inverted by a later one", text: "re:^a(.*)$=y$1, re:^(.*)$=x$1", remote: "xab"},
		// ab and b both get xb: ParseRules cannot see it (RemoteNames reports it for the
		// topics that exist), and the first rule's reading wins.
		{name: "two regex rules naming two topics alike", text: "re:^a(.*)$=x$1, re:^(.*)$=x$1", remote: "xb", want: "ab"},
		{name: "ungreedy reading", text: "re:^(.*)\\.(.*)$=$2-$1", remote: "c-a.b", want: "a.b.c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := mustRules(t, tt.text)
			got, ok := rs.Invert(tt.remote)
			if got != tt.want || ok != (tt.want != "") {
				t.Fatalf("Invert(%q) = (%q, %v), want %q", tt.remote, got, ok, tt.want)
			}
			if ok {
				if back, _ := rs.Rename(got); back != tt.remote {
					t.Errorf("Rename(Invert(%q)) = %q", tt.remote, back)
				}
			}
		})
	}
}

func TestSplitRules(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{text: "", want: nil},
		{text: "a=b", want: []string{"a=b"}},
		{text: " a=b , c=d ", want: []string{"a=b", "c=d"}},
		{text: "re:^x{1,2}$=y,re:^[,]$=z", want: []string{"re:^x{1,2}$=y", "re:^[,]$=z"}},
		{text: `re:^(a,b)$=c, re:^\,$=d`, want: []string{"re:^(a,b)$=c", `re:^\,$=d`}},
		{text: "re:^[]a,]$=c, d=e", want: []string{"re:^[]a,]$=c", "d=e"}},
		{text: "a=b,", want: []string{"a=b", ""}},
	}
	for _, tt := range tests {
		if got := splitRules(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("splitRules(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
