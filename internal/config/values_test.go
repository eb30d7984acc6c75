package config

import (
	"slices"
	"testing"
)

func TestParseList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"a", []string{"a"}},
		{"a,b", []string{"a", "b"}},
		{"a ,  b\t,c", []string{"a", "b", "c"}},
		{"a,", []string{"a", ""}},
		{",a", []string{"", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := parseList(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("parseList(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestBooleans(t *testing.T) {
	tests := []struct {
		in          string
		want, ok    bool
		wantBoolean bool // Java's Boolean.parseBoolean
	}{
		{"true", true, true, true},
		{"TRUE", true, true, true},
		{"False", false, true, false},
		{"yes", false, false, false},
		{"true ", false, false, false},
		{"", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, ok := parseBool(tt.in)
			if v != tt.want || ok != tt.ok || parseBoolean(tt.in) != tt.wantBoolean {
				t.Errorf("parseBool(%q) = %v, %v; parseBoolean = %v", tt.in, v, ok, parseBoolean(tt.in))
			}
		})
	}
}

func TestJavaOnly(t *testing.T) {
	tests := []struct {
		re   string
		want string // "" = portable
	}{
		{".*", ""},
		{`orders\.(eu|us)-[0-9]+`, ""},
		{`a\+\+`, ""},
		{`[*+]+`, ""},
		{`[]a]+`, ""},
		{`a{2}`, ""},
		{`\Q(?!\E`, ""},
		{`a+?`, ""},
		{"(?=x)", `a lookahead "(?="`},
		{"(?!internal).*", `a negative lookahead "(?!"`},
		{"(?<=a)b", `a lookbehind "(?<="`},
		{"(?<!a)b", `a negative lookbehind "(?<!"`},
		{"(?>a)", `an atomic group "(?>"`},
		{`(a)\1`, `a backreference "\1"`},
		{`(?<x>a)\k<x>`, `a named backreference "\k<"`},
		{"a++", `a possessive quantifier "++"`},
		{"a*+", `a possessive quantifier "*+"`},
		{"a?+", `a possessive quantifier "?+"`},
		{"a{2}+", `a possessive quantifier "}+"`},
		{"[a-z&&[^b]]", `a character class intersection "&&"`},
	}
	for _, tt := range tests {
		t.Run(tt.re, func(t *testing.T) {
			if got, _ := javaOnly(tt.re); got != tt.want {
				t.Errorf("javaOnly(%q) = %q, want %q", tt.re, got, tt.want)
			}
		})
	}
}

func TestCheckHostPort(t *testing.T) {
	tests := []struct {
		in      string
		wantErr bool
	}{
		{"broker:9092", false},
		{"10.0.0.1:9092", false},
		{"[::1]:9092", false},
		{"broker", true},
		{":9092", true},
		{"broker:port", true},
		{"broker:70000", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if err := checkHostPort(tt.in); (err != nil) != tt.wantErr {
				t.Errorf("checkHostPort(%q) = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
		})
	}
}

func TestClosest(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"sync.acls.enabled", "sync.topic.acls.enabled"},
		{"replication.factr", "replication.factor"},
		{"tpoics", "topics"},
		{"emit.heartbeat.enabled", "emit.heartbeats.enabled"},
		{"something.else.entirely", ""},
		{"abc", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := closest(tt.in, connectorKeys); got != tt.want {
				t.Errorf("closest(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"topics", "tpoics", 1}, {"abc", "abc", 0},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSecretKinds(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"ssl.key.password", true},
		{"A.ssl.truststore.password", true},
		{"sasl.jaas.config", true},
		{"ssl.keystore.key", true},
		{"sasl.oauthbearer.client.credentials.client.secret", true},
		{"basic.auth.user.info", true},
		{"ssl.truststore.location", false},
		{"bootstrap.servers", false},
	}
	for _, tt := range tests {
		if got := isSecretKey(tt.key); got != tt.want {
			t.Errorf("isSecretKey(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}
