package policy

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// javaSplit is a direct transcription of Java's Pattern.split(input, 0) for the pattern
// Pattern.quote(sep) (sep non-empty), as DefaultReplicationPolicy.topicSource calls it:
// non-overlapping matches left to right, no match returns the input itself, and trailing
// empty strings are removed.
func javaSplit(input, sep string) []string {
	var matchList []string
	index := 0
	for from := 0; ; {
		j := strings.Index(input[from:], sep)
		if j < 0 {
			break
		}
		start, end := from+j, from+j+len(sep)
		matchList = append(matchList, input[index:start])
		index, from = end, end
	}
	if index == 0 {
		return []string{input}
	}
	matchList = append(matchList, input[index:])
	resultSize := len(matchList)
	for resultSize > 0 && matchList[resultSize-1] == "" {
		resultSize--
	}
	return matchList[:resultSize]
}

// javaTopicSource is DefaultReplicationPolicy.topicSource on top of javaSplit.
func javaTopicSource(topic, sep string) (string, bool) {
	parts := javaSplit(topic, sep)
	if len(parts) < 2 {
		return "", false
	}
	return parts[0], true
}

func TestJavaSplitTranscription(t *testing.T) {
	tests := []struct {
		name       string
		input, sep string
		want       []string
	}{
		{name: "plain", input: "a.b.c", sep: ".", want: []string{"a", "b", "c"}},
		{name: "leading empty kept", input: ".a", sep: ".", want: []string{"", "a"}},
		{name: "trailing empties dropped", input: "a..", sep: ".", want: []string{"a"}},
		{name: "all separators", input: "...", sep: ".", want: []string{}},
		{name: "no match returns input", input: "abc", sep: ".", want: []string{"abc"}},
		{name: "empty input", input: "", sep: ".", want: []string{""}},
		{name: "non-overlapping", input: "axxxb", sep: "xx", want: []string{"a", "xb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := javaSplit(tt.input, tt.sep)
			if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") || len(got) != len(tt.want) {
				t.Errorf("javaSplit(%q, %q) = %q, want %q", tt.input, tt.sep, got, tt.want)
			}
		})
	}
}

// randString draws a string of n in [minLen, maxLen] symbols from a small alphabet, so that
// separators, repeats and overlaps are common.
func randString(r *rand.Rand, alphabet []string, minLen, maxLen int) string {
	var b strings.Builder
	for range minLen + r.IntN(maxLen-minLen+1) {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// TestDefaultPolicyProperties checks, for random names and separators:
//   - TopicSource equals Java's split rule exactly;
//   - FormatRemoteTopic then TopicSource/UpstreamTopic round-trips, whenever the alias
//     contains no separator, the separator does not overlap the end of the alias (a="x",
//     sep="xx" gives "xxxt", whose first "xx" starts inside the alias) and the topic is not
//     made only of separators (Java's split drops them, leaving one part);
//   - a topic formatted for alias b is a cycle for target b.
func TestDefaultPolicyProperties(t *testing.T) {
	const iterations = 20000
	alphabet := []string{"a", "b", "x", ".", "_", "-", "→"}
	r := rand.New(rand.NewPCG(20241025, 1))
	roundTrips := 0
	for i := range iterations {
		sep := randString(r, alphabet, 1, 3)
		alias := randString(r, alphabet, 0, 4)
		topic := randString(r, alphabet, 0, 8)
		p, err := New(DefaultClass, sep, true, "")
		if err != nil {
			t.Fatalf("New(sep %q): %v", sep, err)
		}

		got, gotOK := p.TopicSource(topic)
		want, wantOK := javaTopicSource(topic, sep)
		if got != want || gotOK != wantOK {
			t.Fatalf("iteration %d: TopicSource(%q) with sep %q = (%q, %v), Java split gives (%q, %v)",
				i, topic, sep, got, gotOK, want, wantOK)
		}

		remote := p.FormatRemoteTopic(alias, topic)
		if jsrc, jok := javaTopicSource(remote, sep); func() bool { src, ok := p.TopicSource(remote); return src != jsrc || ok != jok }() {
			t.Fatalf("iteration %d: TopicSource(%q) with sep %q disagrees with Java split (%q, %v)", i, remote, sep, jsrc, jok)
		}
		aliasClean := strings.Index(alias+sep, sep) == len(alias)
		topicRemote := !onlyRepeats(topic, sep)
		if !aliasClean || !topicRemote {
			continue
		}
		roundTrips++
		if src, ok := p.TopicSource(remote); !ok || src != alias {
			t.Fatalf("iteration %d: TopicSource(FormatRemoteTopic(%q, %q)) with sep %q = (%q, %v), want (%q, true)",
				i, alias, topic, sep, src, ok, alias)
		}
		if up, ok := p.UpstreamTopic(remote); !ok || up != topic {
			t.Fatalf("iteration %d: UpstreamTopic(%q) with sep %q = (%q, %v), want (%q, true)", i, remote, sep, up, ok, topic)
		}
		if !IsCycle(p, alias, remote) {
			t.Fatalf("iteration %d: IsCycle(target %q, %q) with sep %q = false, want true", i, alias, remote, sep)
		}
	}
	if roundTrips < iterations/10 {
		t.Errorf("only %d of %d random cases exercised the round trip; widen the generator", roundTrips, iterations)
	}
}

// TestRoundTripPreconditions pins the cases the round-trip property must exclude: they are
// real behaviour of MM2's split, not bugs.
func TestRoundTripPreconditions(t *testing.T) {
	tests := []struct {
		name         string
		sep          string
		alias, topic string
		wantSource   string
		wantOK       bool
	}{
		{name: "separator overlapping the alias end", sep: "xx", alias: "x", topic: "orders", wantSource: "", wantOK: true},
		{name: "alias containing the separator", sep: ".", alias: "us.west", topic: "orders", wantSource: "us", wantOK: true},
		{name: "empty topic", sep: ".", alias: "A", topic: "", wantOK: false},
		{name: "topic of separators only", sep: ".", alias: "A", topic: "..", wantOK: false},
		{name: "empty alias", sep: ".", alias: "", topic: "orders", wantSource: "", wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, DefaultClass, tt.sep, true, "")
			remote := p.FormatRemoteTopic(tt.alias, tt.topic)
			if src, ok := p.TopicSource(remote); src != tt.wantSource || ok != tt.wantOK {
				t.Errorf("TopicSource(%q) = (%q, %v), want (%q, %v)", remote, src, ok, tt.wantSource, tt.wantOK)
			}
		})
	}
}

// TestIdentityNeverDetectsCycles: for random non-heartbeat names the identity policy never
// reports a cycle, whatever the target of the flow.
func TestIdentityNeverDetectsCycles(t *testing.T) {
	alphabet := []string{"A", "B", "C", ".", "o"}
	r := rand.New(rand.NewPCG(7, 7))
	p := mustNew(t, IdentityClass, ".", true, "A") // flow A->target, target never A
	for i := range 5000 {
		topic := randString(r, alphabet, 1, 8)
		target := randString(r, alphabet[1:3], 1, 1)
		if IsCycle(p, target, topic) {
			t.Fatalf("iteration %d: IsCycle(target %q, %q) = true for the identity policy", i, target, topic)
		}
	}
}
