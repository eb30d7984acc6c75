package config

import (
	"slices"
	"testing"
)

func TestLogicalLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []logicalLine
	}{
		{
			name: "comments and blank lines",
			in:   "# a\n! b\n\n   \t\nk=v\n",
			want: []logicalLine{{"k=v", 5}},
		},
		{
			name: "continuation joins and strips the next line's indent",
			in:   "k = a, \\\n    b, \\\n\tc\nx=y",
			want: []logicalLine{{"k = a, b, c", 1}, {"x=y", 4}},
		},
		{
			name: "an even number of backslashes does not continue",
			in:   "k = a\\\\\nx=y",
			want: []logicalLine{{"k = a\\\\", 1}, {"x=y", 2}},
		},
		{
			name: "a comment never continues",
			in:   "# comment \\\nk=v",
			want: []logicalLine{{"k=v", 2}},
		},
		{
			name: "a continued line may look like a comment",
			in:   "k = a\\\n# b",
			want: []logicalLine{{"k = a# b", 1}},
		},
		{
			name: "a continuation at the end of the file is dropped",
			in:   "k = a\\",
			want: []logicalLine{{"k = a", 1}},
		},
		{
			name: "CRLF and CR line ends",
			in:   "a=1\r\nb=2\rc=3",
			want: []logicalLine{{"a=1", 1}, {"b=2", 2}, {"c=3", 3}},
		},
		{
			name: "a BOM is ignored",
			in:   "\uFEFFclusters=A",
			want: []logicalLine{{"clusters=A", 1}},
		},
		{
			name: "a continuation onto an empty line ends there",
			in:   "k = a\\\n\nx=y",
			want: []logicalLine{{"k = a", 1}, {"x=y", 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := logicalLines(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("logicalLines(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantKey   string
		wantValue string
		wantErr   bool
	}{
		{name: "equals", in: "k = v", wantKey: "k", wantValue: "v"},
		{name: "colon", in: "clusters: west, east", wantKey: "clusters", wantValue: "west, east"},
		{name: "whitespace separator", in: "k v w", wantKey: "k", wantValue: "v w"},
		{name: "trailing whitespace is kept", in: "k = v  ", wantKey: "k", wantValue: "v  "},
		{name: "flow key", in: "A->B.enabled=true", wantKey: "A->B.enabled", wantValue: "true"},
		{name: "no value", in: "k", wantKey: "k", wantValue: ""},
		{name: "escaped separator in key", in: `a\=b = c`, wantKey: "a=b", wantValue: "c"},
		{name: "unknown escapes drop the backslash", in: `k = .*\.replica`, wantKey: "k", wantValue: ".*.replica"},
		{name: "escaped backslash", in: `k = a\\d`, wantKey: "k", wantValue: `a\d`},
		{name: "unicode escape", in: `k = caf\u00e9`, wantKey: "k", wantValue: "café"},
		{name: "UTF-8", in: "k = café", wantKey: "k", wantValue: "café"},
		{name: "bad unicode escape", in: `k = \u00`, wantErr: true},
		{name: "empty key", in: "= v", wantErr: true},
		{name: "empty key with colon", in: ": v", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, v, err := parseLine(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if k != tt.wantKey || v != tt.wantValue {
				t.Errorf("parseLine(%q) = %q, %q; want %q, %q", tt.in, k, v, tt.wantKey, tt.wantValue)
			}
		})
	}
}
