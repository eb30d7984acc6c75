package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, always returns a Config, and
// reports problems only as *Errors.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"testdata/examples", "testdata/bad"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.properties"))
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte(secretsConfig))
	f.Add([]byte("a\\\n  b = c\\\\\r\nd:e\\u00e9\\"))
	f.Add([]byte("clusters=A,B\nA->B.enabled=true\nA->B.topics=${env:X}\n=x\n:y\n\\"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.properties", data, testOptions())
		if c == nil {
			t.Fatal("Parse returned no Config")
		}
		if err != nil {
			asErrors(t, err)
		}
		var b bytes.Buffer
		c.Describe(&b)
		if !strings.HasPrefix(b.String(), "Configuration fuzz.properties") {
			t.Fatalf("Describe output starts %q", b.String()[:min(40, b.Len())])
		}
	})
}
