package policy

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestCompilePatternRejectsJavaOnly(t *testing.T) {
	tests := []struct {
		name          string
		list          []string
		wantPattern   string // PatternError.Pattern
		wantConstruct string // substring of PatternError.Construct
		wantReason    string // substring of PatternError.Reason
	}{
		// RE2 cannot run these.
		{name: "lookahead", list: []string{"foo(?=bar)"}, wantPattern: "foo(?=bar)", wantConstruct: `lookahead "(?="`, wantReason: "no lookaround"},
		{name: "negative lookahead", list: []string{"foo(?!bar).*"}, wantPattern: "foo(?!bar).*", wantConstruct: `negative lookahead "(?!"`, wantReason: "topics.exclude"},
		{name: "lookbehind", list: []string{"(?<=a)b"}, wantPattern: "(?<=a)b", wantConstruct: `lookbehind "(?<="`, wantReason: "no lookaround"},
		{name: "negative lookbehind", list: []string{"(?<!a)b"}, wantPattern: "(?<!a)b", wantConstruct: `negative lookbehind "(?<!"`, wantReason: "no lookaround"},
		{name: "atomic group", list: []string{"(?>a|ab)c"}, wantPattern: "(?>a|ab)c", wantConstruct: `atomic group "(?>"`, wantReason: "(?:...)"},
		{name: "possessive star", list: []string{"a*+"}, wantPattern: "a*+", wantConstruct: `possessive quantifier "*+"`, wantReason: "plain quantifier"},
		{name: "possessive plus", list: []string{"c++"}, wantPattern: "c++", wantConstruct: `possessive quantifier "++"`, wantReason: `\+`},
		{name: "possessive question", list: []string{"a?+b"}, wantPattern: "a?+b", wantConstruct: `possessive quantifier "?+"`},
		{name: "possessive repeat", list: []string{"a{2}+"}, wantPattern: "a{2}+", wantConstruct: `possessive quantifier "{2}+"`},
		{name: "possessive open repeat", list: []string{"a{2,}+"}, wantPattern: "a{2,}+", wantConstruct: `possessive quantifier "{2,}+"`},
		{name: "possessive range repeat", list: []string{"a{2,3}+"}, wantPattern: "a{2,3}+", wantConstruct: `possessive quantifier "{2,3}+"`},
		{name: "possessive after class", list: []string{"[ab]*+"}, wantPattern: "[ab]*+", wantConstruct: `"*+"`},
		{name: "possessive after property", list: []string{`\p{L}++`}, wantPattern: `\p{L}++`, wantConstruct: `"++"`},
		{name: "backreference", list: []string{`(a)\1`}, wantPattern: `(a)\1`, wantConstruct: `backreference "\\1"`, wantReason: "no backreferences"},
		{name: "backreference Go reads as octal", list: []string{`(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)\12`}, wantConstruct: `backreference "\\1"`, wantReason: "octal"},
		{name: "backreference 9", list: []string{`\9`}, wantPattern: `\9`, wantConstruct: `backreference "\\9"`},
		{name: "named backreference", list: []string{`(?<x>a)\k<x>`}, wantPattern: `(?<x>a)\k<x>`, wantConstruct: `"\\k"`, wantReason: "no backreferences"},
		// Go accepts these with another meaning.
		{name: "vertical white space", list: []string{`a\vb`}, wantPattern: `a\vb`, wantConstruct: `"\\v" (Java: vertical white space)`, wantReason: "vertical tab alone"},
		{name: "vertical white space in class", list: []string{`[\v]`}, wantConstruct: `"\\v"`},
		{name: "U flag", list: []string{"(?U)a*"}, wantPattern: "(?U)a*", wantConstruct: `the U flag in "(?U)"`, wantReason: "ungreedy"},
		{name: "U flag combined", list: []string{"(?iU)a"}, wantConstruct: `the U flag in "(?iU)"`},
		{name: "U flag group", list: []string{"(?U:a*)b"}, wantConstruct: `the U flag in "(?U:"`},
		{name: "U flag negated", list: []string{"(?i-U)a"}, wantConstruct: `the U flag`},
		{name: "nested class", list: []string{"[a[b]]"}, wantPattern: "[a[b]]", wantConstruct: "nested", wantReason: "union"},
		{name: "POSIX class", list: []string{"[[:alpha:]]+"}, wantPattern: "[[:alpha:]]+", wantConstruct: "nested", wantReason: "POSIX"},
		{name: "negated class nested", list: []string{"[^[a]]"}, wantConstruct: "nested"},
		{name: "intersection", list: []string{"[a-z&&[^aeiou]]"}, wantConstruct: `class intersection "&&"`, wantReason: "intersection"},
		{name: "plain intersection", list: []string{"[a-z&&b]"}, wantConstruct: `"&&"`},
		{name: "octal with three digits", list: []string{`\0101`}, wantPattern: `\0101`, wantConstruct: `octal escape "\\0101"`, wantReason: "three octal digits"},
		{name: "NUL without digits", list: []string{`a\0`}, wantPattern: `a\0`, wantConstruct: `"\\0" without octal digits`, wantReason: `\x00`},
		// Java escapes Go lacks get a Java-aware message.
		{name: "horizontal white space", list: []string{`a\hb`}, wantPattern: `a\hb`, wantConstruct: `"\\h" (Java: horizontal white space)`, wantReason: `[ \t\xA0`},
		{name: "non-horizontal white space", list: []string{`\H`}, wantConstruct: `"\\H"`, wantReason: `[^ \t`},
		{name: "non-vertical white space", list: []string{`\V`}, wantConstruct: `"\\V"`, wantReason: `[^\n`},
		{name: "end before terminator", list: []string{`orders\Z`}, wantPattern: `orders\Z`, wantConstruct: `"\\Z"`, wantReason: `\z`},
		{name: "line break", list: []string{`\R`}, wantConstruct: `"\\R"`, wantReason: `\r\n`},
		{name: "grapheme", list: []string{`\X`}, wantConstruct: `"\\X"`},
		{name: "previous match", list: []string{`\Gfoo`}, wantConstruct: `"\\G"`, wantReason: "^"},
		{name: "escape char", list: []string{`\e`}, wantConstruct: `"\\e"`, wantReason: `\x1B`},
		{name: "control char", list: []string{`\cA`}, wantConstruct: `"\\c"`, wantReason: `\x01`},
		{name: "UTF-16 escape", list: []string{`caf\u00e9`}, wantPattern: `caf\u00e9`, wantConstruct: `"\\u"`, wantReason: `\x{00E9}`},
		{name: "named character", list: []string{`\N{LATIN SMALL LETTER A}`}, wantConstruct: `"\\N"`, wantReason: `\x{hhhh}`},
		// The element at fault is named, not the joined list.
		{name: "second element named", list: []string{"orders", "pay(?!ments)", "x"}, wantPattern: "pay(?!ments)", wantConstruct: "negative lookahead"},
		{name: "last element named", list: []string{"a", "b", `c\1`}, wantPattern: `c\1`, wantConstruct: "backreference"},
		{name: "first element named", list: []string{"(?=a)", "b"}, wantPattern: "(?=a)", wantConstruct: "lookahead"},
		// Brackets after an escaped bracket or a quote are still outside a class.
		{name: "after escaped bracket", list: []string{`\[a*+`}, wantConstruct: "possessive"},
		{name: "after quote", list: []string{`\Q[\Ea++`}, wantConstruct: "possessive"},
		{name: "after class", list: []string{`[ab](?=c)`}, wantConstruct: "lookahead"},
		{name: "class with leading bracket then nested", list: []string{`[]a[b]`}, wantConstruct: "nested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompilePattern(tt.list)
			if err == nil {
				t.Fatalf("CompilePattern(%q) = %v, want error", tt.list, p)
			}
			var pe *PatternError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *PatternError", err)
			}
			if tt.wantPattern != "" && pe.Pattern != tt.wantPattern {
				t.Errorf("Pattern = %q, want %q", pe.Pattern, tt.wantPattern)
			}
			if !strings.Contains(pe.Construct, tt.wantConstruct) {
				t.Errorf("Construct = %q, want it to contain %q", pe.Construct, tt.wantConstruct)
			}
			if !strings.Contains(pe.Reason, tt.wantReason) {
				t.Errorf("Reason = %q, want it to contain %q", pe.Reason, tt.wantReason)
			}
			if msg := err.Error(); !strings.Contains(msg, pe.Construct) || !strings.Contains(msg, `pattern "`) {
				t.Errorf("Error() = %q, want the pattern and the construct", msg)
			}
		})
	}
}

func TestCompilePatternGoErrors(t *testing.T) {
	tests := []struct {
		name        string
		list        []string
		wantPattern string
		wantGoErr   string // substring of Go's message
		wantHint    string // substring of PatternError.Reason; "" = no hint
	}{
		{name: "unbalanced paren", list: []string{"orders", "a(b"}, wantPattern: "a(b", wantGoErr: "missing closing )"},
		{name: "bad range", list: []string{"[z-a]"}, wantPattern: "[z-a]", wantGoErr: "invalid character class range"},
		{name: "missing argument", list: []string{"*orders"}, wantPattern: "*orders", wantGoErr: "missing argument to repetition operator"},
		{name: "Java property name", list: []string{`\p{Lower}`}, wantPattern: `\p{Lower}`, wantGoErr: "invalid character class range", wantHint: `\p{Ll}`},
		{name: "Java script name", list: []string{`\P{IsLatin}+`}, wantPattern: `\P{IsLatin}+`, wantGoErr: "invalid character class range", wantHint: `\p{Latin}`},
		{name: "comments flag", list: []string{"(?x) a b"}, wantPattern: "(?x) a b", wantGoErr: "invalid or unsupported Perl syntax", wantHint: "x (comments)"},
		{name: "Unicode case flag", list: []string{"(?iu)a"}, wantPattern: "(?iu)a", wantGoErr: "invalid or unsupported Perl syntax", wantHint: "inline flags i, m and s"},
		{name: "comment group", list: []string{"a(?#note)"}, wantPattern: "a(?#note)", wantGoErr: "invalid or unsupported Perl syntax"},
		{name: "repeat count", list: []string{"a{1001}"}, wantPattern: "a{1001}", wantGoErr: "invalid repeat count"},
		{name: "trailing backslash", list: []string{`a\`}, wantPattern: `a\`, wantGoErr: "trailing backslash"},
		// Java rejects a stray ')' too; anchoring must not hide it.
		{name: "closing paren", list: []string{"a)(b"}, wantPattern: "a)(b", wantGoErr: "unexpected )"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompilePattern(tt.list)
			if err == nil {
				t.Fatalf("CompilePattern(%q) = %v, want error", tt.list, p)
			}
			var pe *PatternError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *PatternError", err)
			}
			if pe.Pattern != tt.wantPattern {
				t.Errorf("Pattern = %q, want %q", pe.Pattern, tt.wantPattern)
			}
			if pe.Construct != "" {
				t.Errorf("Construct = %q, want empty for a Go syntax error", pe.Construct)
			}
			if errors.Unwrap(err) == nil {
				t.Fatalf("errors.Unwrap(%v) = nil, want Go's error", err)
			}
			if tt.wantHint == "" && pe.Reason != "" || !strings.Contains(pe.Reason, tt.wantHint) {
				t.Errorf("Reason = %q, want it to contain %q", pe.Reason, tt.wantHint)
			}
			msg := err.Error()
			for _, s := range []string{`pattern "`, tt.wantGoErr, "Go (RE2)", pe.Reason} {
				if !strings.Contains(msg, s) {
					t.Errorf("Error() = %q, want it to contain %q", msg, s)
				}
			}
		})
	}
}

// TestCompileErrorNamesJoinedList covers the fallback for a list whose elements compile alone
// but not together; Go's syntax gives no such list today, so the error is synthetic.
func TestCompileErrorNamesJoinedList(t *testing.T) {
	goErr := errors.New("expression too large")
	err := compileError([]string{"a", "b"}, "a|b", goErr)
	var pe *PatternError
	if !errors.As(err, &pe) || pe.Pattern != "a|b" || !errors.Is(err, goErr) {
		t.Errorf("compileError() = %#v, want a *PatternError for \"a|b\" wrapping %v", err, goErr)
	}
}

// TestCompilePatternAccepts checks constructs that look like Java-only syntax but are escaped,
// quoted, inside a class or have the same meaning in both engines.
func TestCompilePatternAccepts(t *testing.T) {
	tests := []struct {
		name   string
		list   []string
		accept []string
		reject []string
	}{
		{name: "quoted lookahead", list: []string{`\Q(?=\E`}, accept: []string{"(?="}},
		{name: "quoted possessive", list: []string{`\Q*+\E`}, accept: []string{"*+"}},
		{name: "unterminated quote", list: []string{`orders\Q.*`}, accept: []string{"orders.*"}, reject: []string{"orders1"}},
		{name: "unterminated quote after escaped Q", list: []string{`\\Q.*`}, accept: []string{`\Qx`}},
		{name: "escaped plus twice", list: []string{`c\+\+`}, accept: []string{"c++"}, reject: []string{"c"}},
		{name: "escaped star then plus", list: []string{`\*+`}, accept: []string{"*", "***"}},
		{name: "quantifier chars in class", list: []string{`[*+?]+`}, accept: []string{"*+?"}},
		{name: "group syntax in class", list: []string{`[(?=]+`}, accept: []string{"(?="}},
		{name: "escaped backslash then digit", list: []string{`\\1`}, accept: []string{`\1`}},
		{name: "ampersands outside class", list: []string{"a&&b"}, accept: []string{"a&&b"}},
		{name: "single ampersand in class", list: []string{"[a&b]"}, accept: []string{"&"}},
		{name: "escaped bracket in class", list: []string{`[a\[]`}, accept: []string{"["}, reject: []string{"]"}},
		{name: "leading bracket in class", list: []string{"[]a]"}, accept: []string{"]", "a"}},
		{name: "leading bracket in negated class", list: []string{"[^]a]"}, accept: []string{"b"}, reject: []string{"]"}},
		{name: "property then plus", list: []string{`\p{L}+`}, accept: []string{"abc"}, reject: []string{"a1"}},
		{name: "hex brace then plus", list: []string{`\x{41}+`}, accept: []string{"AA"}},
		{name: "named group", list: []string{"(?<env>prod|dev)-.*"}, accept: []string{"prod-orders"}},
		{name: "lazy quantifiers", list: []string{"a*?b+?c??"}, accept: []string{"abc", "b"}},
		{name: "repeat then plus literal-free", list: []string{"a{2}b+"}, accept: []string{"aab"}},
		{name: "literal brace", list: []string{"a{b"}, accept: []string{"a{b"}},
		{name: "flags", list: []string{"(?i)orders", "(?s)x.y"}, accept: []string{"ORDERS", "x\ny"}},
		{name: "octal with one digit", list: []string{`a\01`}, accept: []string{"a\x01"}},
		{name: "octal with two digits", list: []string{`a\012`}, accept: []string{"a\n"}},
		{name: "octal over 0377 reads two digits in both", list: []string{`\0456`}, accept: []string{"%6"}},
		{name: "same-meaning escapes", list: []string{`\A\w+\.\d+\z`}, accept: []string{"orders.1"}},
		{name: "word boundary", list: []string{`.*\bv2`}, accept: []string{"orders-v2"}, reject: []string{"ordersv2"}},
		{name: "escaped dash in class", list: DefaultTopicsExclude(), accept: []string{"a-internal", "a.internal"}, reject: []string{"a_internal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompilePattern(tt.list)
			if err != nil {
				t.Fatalf("CompilePattern(%q): %v", tt.list, err)
			}
			for _, name := range tt.accept {
				if !p.Matches(name) {
					t.Errorf("Matches(%q) = false, want true", name)
				}
			}
			for _, name := range tt.reject {
				if p.Matches(name) {
					t.Errorf("Matches(%q) = true, want false", name)
				}
			}
		})
	}
}

func TestPatternZero(t *testing.T) {
	var nilPattern *Pattern
	for name, p := range map[string]*Pattern{"nil": nilPattern, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			if p.Matches("") || p.Matches("orders") {
				t.Error("empty pattern matches, want nothing matched")
			}
			if p.String() != "" || len(p.List()) != 0 {
				t.Errorf("String() = %q, List() = %q, want empty", p.String(), p.List())
			}
		})
	}
}

// TestJavaEscapeHintsCompile checks that every replacement suggested in an error compiles in
// Go, so that following the advice works.
func TestJavaEscapeHintsCompile(t *testing.T) {
	hint := regexp.MustCompile(`(?:e\.g\. |; write )(.+)$`)
	for _, e := range []byte("hHvVRe") {
		t.Run(string(e), func(t *testing.T) {
			_, fix, ok := javaEscape(e)
			if !ok {
				t.Fatalf("javaEscape(%q) unknown", e)
			}
			m := hint.FindStringSubmatch(fix)
			if m == nil {
				t.Fatalf("fix %q has no example", fix)
			}
			if _, err := regexp.Compile(m[1]); err != nil {
				t.Errorf("suggested %q does not compile: %v", m[1], err)
			}
			if _, err := CompilePattern([]string{m[1]}); err != nil {
				t.Errorf("suggested %q is rejected: %v", m[1], err)
			}
		})
	}
}
