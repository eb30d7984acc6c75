package saslconf

import (
	"strings"
	"testing"
)

// FuzzParseJAAS: the JAAS parser takes whatever an operator pastes. It
// never panics, and its errors never quote an option value (values hold
// passwords): a value of a distinctive marker never shows in the error.
func FuzzParseJAAS(f *testing.F) {
	for _, s := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`,
		`org.apache.kafka.common.security.scram.ScramLoginModule required username='a\'b' password="c\"d";`,
		`com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k" principal="p@R"; /* c */`,
		`x required a="unterminated`, `x required a=1b;`, `a b c`, `;;`, `x required // comment` + "\n" + `k="v";`,
	} {
		f.Add(s)
	}
	const marker = "Zq9secretZq9"
	f.Fuzz(func(t *testing.T, s string) {
		e, err := parseJAAS(s)
		if err == nil && e == nil {
			t.Fatal("no entry and no error")
		}
		// The same line with a password of the marker.
		withSecret := strings.Replace(s, `"`, `"`+marker, 1)
		if _, err := parseJAAS(withSecret); err != nil && strings.Contains(err.Error(), marker) && !strings.Contains(s, marker) {
			t.Fatalf("error %q quotes a value", err)
		}
	})
}
