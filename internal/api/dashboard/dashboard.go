// Package dashboard serves the node's live dashboard: one HTML page, its
// script and style sheet, and a vendored chart library, all embedded in the
// binary so the page needs nothing but the node itself (no CDN). The page
// reads the JSON API (/api/v1/flows, /partitions, /history) from the same
// origin every 2 seconds; the files hold no data, so they need no token.
package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"time"
)

//go:embed static
var static embed.FS

// contentTypes are set by extension from this table rather than from the
// mime package, whose answers depend on the host's /etc/mime.types.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".md":   "text/plain; charset=utf-8",
	"":      "text/plain; charset=utf-8", // LICENSE
}

// securityPolicy lets the page load only its own files and talk only to its
// own origin: even a string from the API that slipped into markup could run
// no script. uPlot sets element styles from script, which style-src allows.
const securityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// file is one embedded file, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the dashboard: GET / is the page and /static/... its
// files. Every answer says Cache-Control: no-cache with an ETag, so a
// browser revalidates (a 304 when unchanged) and never keeps the page or a
// script of an older binary. Any other path is a JSON 404, as the API's are.
func Handler() http.Handler {
	files, err := load()
	if err != nil {
		// The files are compiled in: this is a build defect, caught by the tests.
		panic(fmt.Sprintf("dashboard: reading the embedded files: %v", err))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed: the dashboard is read-only", r.Method))
			return
		}
		name := r.URL.Path
		f, ok := files[name]
		if !ok {
			writeError(w, http.StatusNotFound, fmt.Sprintf("no dashboard file %s; the dashboard is at /", r.URL.Path))
			return
		}
		h := w.Header()
		h.Set("Content-Type", f.contentType)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", f.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if f.contentType == contentTypes[".html"] {
			h.Set("Content-Security-Policy", securityPolicy)
		}
		// ServeContent answers If-None-Match with 304 and HEAD without a body.
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
	})
}

// load reads every embedded file, keyed by the URL path it is served at
// (/ for the page, /static/app.js for the others).
func load() (map[string]file, error) {
	files := map[string]file{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			return fmt.Errorf("%s: no content type for %q files", p, path.Ext(p))
		}
		sum := sha256.Sum256(body)
		// The page is served at / only: its relative paths (static/app.js,
		// api/v1/flows) resolve from there.
		name := "/" + p
		if p == "static/index.html" {
			name = "/"
		}
		files[name] = file{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	return files, err
}

// errorView has the shape of api.ErrorView (Kafka Connect's REST errors),
// written here so that the page's package builds on its own.
type errorView struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(errorView{Code: code, Message: msg})
}
