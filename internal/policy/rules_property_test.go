package policy

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// randRules draws a rule list of one to three rules from shapes users write, with literals
// from a small alphabet so that rules overlap and collide often.
func randRules(r *rand.Rand) string {
	lit := func() string { return randString(r, []string{"a", "b", "x", ".", "-", "_"}, 1, 3) }
	word := func() string { return randString(r, []string{"a", "b", "x"}, 1, 3) }
	shapes := []func() string{
		func() string { return word() + "=" + word() + lit() },
		func() string { return "re:^" + regexQuote(lit()) + "(.*)$=" + word() + "$1" },
		func() string { return "re:^(.*)" + regexQuote(lit()) + "$=$1" + lit() + word() },
		func() string { return "re:^([a-z]+)" + regexQuote(lit()) + "(.*)$=$2" + lit() + "$1" },
		func() string { return "re:(.*)=" + word() + "${1}" },
		func() string { return "re:^(a|b)" + regexQuote(lit()) + "(.*)$=$1" + lit() + "$2" + word() },
	}
	n := 1 + r.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = shapes[r.IntN(len(shapes))]()
	}
	return strings.Join(parts, ", ")
}

func regexQuote(s string) string {
	return strings.NewReplacer(".", `\.`, "-", `\-`).Replace(s)
}

// TestRulesProperties checks, for random rule lists ParseRules accepts and random topics:
//   - every remote name the rules make inverts to a topic the rules give that same name
//     (Invert is sound and finds a source whenever one exists);
//   - through Renaming, a renamed topic's remote name reads back as coming from the flow's
//     source, and sending it back to the source is a cycle;
//   - String reads back as the same rules.
func TestRulesProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(20261201, 5))
	accepted, renamed := 0, 0
	for i := range 3000 {
		text := randRules(r)
		rs, err := ParseRules(text)
		if err != nil {
			continue
		}
		accepted++
		if again, err := ParseRules(rs.String()); err != nil || again.String() != rs.String() {
			t.Fatalf("case %d: %q does not read back: %v", i, rs.String(), err)
		}
		p, err := NewRenaming(mustNew(t, DefaultClass, ".", true, "S"), "S", rs)
		if err != nil {
			continue // an exact rule names an internal topic
		}
		for range 20 {
			topic := randString(r, []string{"a", "b", "x", ".", "-", "_"}, 1, 8)
			remote, ok := rs.Rename(topic)
			if !ok {
				continue
			}
			renamed++
			back, ok := rs.Invert(remote)
			if !ok {
				t.Fatalf("case %d: rules %q: Rename(%q) = %q, but Invert(%q) finds no topic", i, text, topic, remote, remote)
			}
			if again, _ := rs.Rename(back); again != remote {
				t.Fatalf("case %d: rules %q: Invert(%q) = %q, which the rules name %q", i, text, remote, back, again)
			}
			if p.protected(topic) || p.protected(remote) {
				continue
			}
			if got := p.FormatRemoteTopic("S", topic); got != remote {
				t.Fatalf("case %d: rules %q: FormatRemoteTopic(S, %q) = %q, want %q", i, text, topic, got, remote)
			}
			if src, ok := p.TopicSource(remote); !ok || src != "S" {
				t.Fatalf("case %d: rules %q: TopicSource(%q) = (%q, %v), want S", i, text, remote, src, ok)
			}
			if !IsCycle(p, "S", remote) {
				t.Fatalf("case %d: rules %q: IsCycle(target S, %q) = false", i, text, remote)
			}
		}
	}
	if accepted < 500 || renamed < 2000 {
		t.Errorf("only %d rule lists accepted and %d topics renamed; widen the generator", accepted, renamed)
	}
}

// FuzzParseRules checks that ParseRules never panics, that what it accepts reads back from
// String, and that Invert finds a source for every name Rename makes.
func FuzzParseRules(f *testing.F) {
	for _, seed := range []struct{ rules, topic string }{
		{"orders=prod.orders, re:^legacy-(.*)$=new-$1", "legacy-x"},
		{"re:^([a-z]+)\\.(.*)$=$2.$1", "team.orders"},
		{"re:^(x{1,3})-(.*)$=$2.$1, y=z", "xx-a"},
		{"re:^(?P<a>.)(?P<b>.*)$=${b}-${a}", "abc"},
		{"re:^(a)?(b.*)$=x$1-$2", "b"},
		{"re:^([0-9]{4})(.*)$=$1$2-x", "2024a"},
		{"re:(.*)=$0.copy", "a"},
	} {
		f.Add(seed.rules, seed.topic)
	}
	f.Fuzz(func(t *testing.T, text, topic string) {
		rs, err := ParseRules(text)
		if err != nil {
			if _, ok := err.(RuleErrors); !ok {
				t.Fatalf("ParseRules(%q) error %T is not RuleErrors", text, err)
			}
			return
		}
		again, err := ParseRules(rs.String())
		if err != nil || again.String() != rs.String() {
			t.Fatalf("ParseRules(%q).String() = %q reads back as %v, %v", text, rs.String(), again, err)
		}
		remote, ok := rs.Rename(topic)
		if !ok {
			return
		}
		back, ok := rs.Invert(remote)
		if !ok {
			t.Fatalf("rules %q: Rename(%q) = %q, but Invert finds no topic", text, topic, remote)
		}
		if got, _ := rs.Rename(back); got != remote {
			t.Fatalf("rules %q: Invert(%q) = %q, which the rules name %q", text, remote, back, got)
		}
	})
}
