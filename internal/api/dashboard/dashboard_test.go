package dashboard

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, header map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHandlerServesThePageAndItsFiles(t *testing.T) {
	h := Handler()
	tests := []struct {
		path, file, contentType string
	}{
		{"/", "static/index.html", "text/html; charset=utf-8"},
		{"/static/app.js", "static/app.js", "text/javascript; charset=utf-8"},
		{"/static/app.css", "static/app.css", "text/css; charset=utf-8"},
		{"/static/vendor/uplot/uPlot.iife.min.js", "static/vendor/uplot/uPlot.iife.min.js", "text/javascript; charset=utf-8"},
		{"/static/vendor/uplot/uPlot.min.css", "static/vendor/uplot/uPlot.min.css", "text/css; charset=utf-8"},
		{"/static/vendor/uplot/LICENSE", "static/vendor/uplot/LICENSE", "text/plain; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := get(t, h, http.MethodGet, tt.path, nil)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", res.StatusCode)
			}
			if got := res.Header.Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type %q, want %q", got, tt.contentType)
			}
			if got := res.Header.Get("Cache-Control"); got != "no-cache" {
				t.Errorf("Cache-Control %q, want no-cache", got)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want nosniff", got)
			}
			want, err := static.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if got := body(t, res); got != string(want) || len(want) == 0 {
				t.Errorf("body is %d bytes, want the %d of %s", len(got), len(want), tt.file)
			}
		})
	}
}

func TestPageHasASecurityPolicy(t *testing.T) {
	res := get(t, Handler(), http.MethodGet, "/", nil)
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
}

// TestIndexReferencesServedFiles follows every src and href of the page:
// each must be a relative path the handler serves with the right type.
func TestIndexReferencesServedFiles(t *testing.T) {
	h := Handler()
	page := body(t, get(t, h, http.MethodGet, "/", nil))
	refs := regexp.MustCompile(`(src|href)="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 4 {
		t.Fatalf("index.html has %d src/href attributes, want the 2 scripts and 2 style sheets", len(refs))
	}
	for _, r := range refs {
		ref := r[2]
		if strings.HasPrefix(ref, "/") || strings.Contains(ref, ":") {
			t.Errorf("index.html refers to %q: want a relative path (it works behind a path prefix)", ref)
			continue
		}
		res := get(t, h, http.MethodGet, "/"+ref, nil)
		if res.StatusCode != http.StatusOK {
			t.Errorf("index.html refers to %q, which answers %d", ref, res.StatusCode)
			continue
		}
		ct := res.Header.Get("Content-Type")
		if (strings.HasSuffix(ref, ".js") && !strings.HasPrefix(ct, "text/javascript")) ||
			(strings.HasSuffix(ref, ".css") && !strings.HasPrefix(ct, "text/css")) {
			t.Errorf("%s is served as %q", ref, ct)
		}
	}
}

// vendorBanner is the one URL allowed: the licence comment uPlot's build
// puts on the first line of its minified file. It is a comment, not a load.
var vendorBanner = regexp.MustCompile(`^/\*! https://github\.com/leeoniya/uPlot \(v1\.6\.\d+\) \*/`)

// TestNoExternalURLs: nothing the page loads comes from another host (no
// CDN), so the dashboard works on a node with no internet access.
func TestNoExternalURLs(t *testing.T) {
	// A scheme, a protocol-relative reference in an attribute, a CSS url()
	// or any quoted string, or a CSS import.
	url := regexp.MustCompile(`(?i)https?://|(src|href)\s*=\s*["']?//|url\(\s*["']?//|["'` + "`" + `]//[a-z0-9]|@import`)
	n := 0
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		text := string(b)
		if p == "static/vendor/uplot/uPlot.iife.min.js" {
			banner := vendorBanner.FindString(text)
			if banner == "" {
				t.Errorf("%s does not start with uPlot's licence banner; update vendorBanner with the vendored file", p)
			}
			text = text[len(banner):]
		}
		for _, loc := range url.FindAllStringIndex(text, -1) {
			t.Errorf("%s refers to another host: %q", p, text[loc[0]:min(len(text), loc[1]+40)])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 6 {
		t.Errorf("walked %d embedded files, want at least index.html, app.js, app.css and uPlot's 3", n)
	}
}

// TestScriptInsertsNoMarkup: API strings (topic names, errors) must reach
// the page as text. app.js builds every element itself.
func TestScriptInsertsNoMarkup(t *testing.T) {
	js, err := static.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "createContextualFragment"} {
		if strings.Contains(string(js), bad) {
			t.Errorf("app.js uses %s: build elements and set textContent instead", bad)
		}
	}
}

func TestRevalidationAnswersNotModified(t *testing.T) {
	h := Handler()
	first := get(t, h, http.MethodGet, "/static/app.js", nil)
	etag := first.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag: with no-cache every poll of the page would download it again")
	}
	again := get(t, h, http.MethodGet, "/static/app.js", map[string]string{"If-None-Match": etag})
	if again.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag answers %d, want 304", again.StatusCode)
	}
	if other := get(t, h, http.MethodGet, "/static/app.css", nil).Header.Get("ETag"); other == etag {
		t.Errorf("app.js and app.css have the same ETag %s", etag)
	}
}

func TestHeadHasNoBody(t *testing.T) {
	res := get(t, Handler(), http.MethodHead, "/", nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("HEAD / answers %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if b := body(t, res); b != "" {
		t.Errorf("HEAD / has a %d-byte body", len(b))
	}
}

func TestOtherRequestsAreJSONErrors(t *testing.T) {
	h := Handler()
	tests := []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, "/nope", http.StatusNotFound},
		{http.MethodGet, "/static/", http.StatusNotFound},
		{http.MethodGet, "/static/missing.js", http.StatusNotFound},
		{http.MethodGet, "/static/index.html", http.StatusNotFound}, // its relative paths work from / only
		{http.MethodGet, "/static/../dashboard.go", http.StatusNotFound},
		{http.MethodPost, "/", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			res := get(t, h, tt.method, tt.path, nil)
			if res.StatusCode != tt.code {
				t.Errorf("status %d, want %d", res.StatusCode, tt.code)
			}
			if ct := res.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			var e struct {
				Code    int    `json:"error_code"`
				Message string `json:"message"`
			}
			if err := json.NewDecoder(res.Body).Decode(&e); err != nil {
				t.Fatalf("not an error document: %v", err)
			}
			if e.Code != tt.code || e.Message == "" {
				t.Errorf("error document %+v, want error_code %d and a message", e, tt.code)
			}
		})
	}
}
