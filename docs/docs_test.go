// Package docs holds Strait's documentation; its test keeps the README and
// these pages' links true.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} +(.+)$`)
	// GitHub's anchor: lower case, punctuation but '-' and '_' dropped, spaces to '-'.
	anchorDrop = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

func anchors(t *testing.T, path string, cache map[string]map[string]bool) map[string]bool {
	if a, ok := cache[path]; ok {
		return a
	}
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(string(body), -1) {
		a[strings.ReplaceAll(anchorDrop.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), ""), " ", "-")] = true
	}
	cache[path] = a
	return a
}

// TestLinksResolve: every relative link of the README and of docs/ names a
// file that exists, and every #anchor a heading of that file.
func TestLinksResolve(t *testing.T) {
	pages := []string{"../README.md", "../bench/README.md"}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	cache := map[string]map[string]bool{}
	for _, page := range pages {
		body, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(body), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(link, "#")
			target := page
			if file != "" {
				target = filepath.Join(filepath.Dir(page), file)
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: link %s: %v", page, link, err)
				continue
			}
			if frag != "" && strings.HasSuffix(target, ".md") && !anchors(t, target, cache)[frag] {
				t.Errorf("%s: link %s: no heading %q in %s", page, link, frag, target)
			}
		}
	}
}

// TestReadmeIsAFrontDoor: the README stays short and starts with the two
// commands a newcomer runs first, the demo and the whole test suite.
func TestReadmeIsAFrontDoor(t *testing.T) {
	body, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(body), "\n")
	if len(lines) > 350 {
		t.Errorf("README.md has %d lines: keep it under 350 and move depth to docs/", len(lines))
	}
	first := strings.Join(lines[:min(len(lines), 15)], "\n")
	for _, want := range []string{"strait demo", "make ci"} {
		if !strings.Contains(first, want) {
			t.Errorf("the README's first lines lack %q:\n%s", want, first)
		}
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil || !strings.Contains(string(ci), "make ci") {
		t.Errorf(".ci/run does not run make ci (err %v):\n%s", err, ci)
	}
}
