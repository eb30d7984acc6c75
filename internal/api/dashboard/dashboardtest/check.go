// Package dashboardtest loads a Strait dashboard in headless Chromium and
// checks what an operator would see: charts of throughput, lag and
// replication latency drawn with data, the partition table with each
// topic's remote name, stopped partitions with their reasons, checkpoint
// ages, a layout that uses the window's width, and the bearer token from
// the URL fragment sent to the API. The dashboard's own
// browser test runs it against a fake API; cmd/strait's integration tests
// can run it against a real node.
//
// The browser is Debian's chromium, found by scripts/chromium.sh path (or
// STRAIT_CHROMIUM); `scripts/chromium.sh install` installs it.
package dashboardtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Want is what the page must show. Flows, partitions and stopped
// partitions the page shows beyond these are fine.
type Want struct {
	// Flows must each have a card whose three charts (throughput, lag,
	// replication latency) hold more than one point and have their first
	// series drawn.
	Flows []string
	// Partitions must each be a row of the partition table.
	Partitions []Partition
	// Remotes, when set, are the remote topic names the table must show
	// beside each source topic (by source topic).
	Remotes map[string]string
	// Stopped must each be listed under "Stopped partitions and errors"
	// and be a highlighted row of the table, with Error in both.
	Stopped []Stopped
	// Checkpoints must each show an age (not "none yet"), in the warning
	// colour exactly when Stale.
	Checkpoints []Checkpoint
	// NewPoints waits, after the first look, until every flow in Flows has
	// gained a point: the page refreshes the history on its polls.
	NewPoints bool
	// Timeout bounds each wait; 0 means 30 s.
	Timeout time.Duration
}

// Partition names one replicated partition by its flow and source topic.
type Partition struct {
	Flow      string `json:"flow"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// String names p in failure messages: "A->B orders[3]".
func (p Partition) String() string { return fmt.Sprintf("%s %s[%d]", p.Flow, p.Topic, p.Partition) }

// Stopped is a stopped partition and a part of its error text.
type Stopped struct {
	Partition
	Error string
}

// Checkpoint is a flow's checkpoint freshness.
type Checkpoint struct {
	Flow  string
	Stale bool // older than the page's 2-minute threshold
}

// The browser's viewport: screenshots are this wide.
const (
	windowWidth  = 1280
	windowHeight = 900
)

// Check opens baseURL (with #token=token when token is not empty), waits for
// the page to read the API, saves a full-page PNG screenshot to
// screenshotPath (unless empty; also when a wait fails), and reports
// every difference from want with t.Errorf.
func Check(t testing.TB, baseURL, token, screenshotPath string, want Want) {
	t.Helper()
	timeout := want.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	tab, faults := openTab(t)
	defer func() {
		// Also when a wait failed: an exception is usually why.
		seen := faults.list()
		for i, f := range seen {
			if i == 10 {
				t.Errorf("and %d more", len(seen)-i)
				break
			}
			t.Errorf("the page reported: %s", f)
		}
	}()

	target := strings.TrimRight(baseURL, "/") + "/"
	if token != "" {
		target += "#token=" + url.QueryEscape(token)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(target)); err != nil {
		t.Fatalf("opening the dashboard at %s: %v", baseURL, err)
	}
	defer func() {
		if screenshotPath != "" {
			saveScreenshot(t, tab, screenshotPath)
		}
	}()

	if err := wait(tab, timeout, `window.straitDashboard && window.straitDashboard.okPolls >= 1`); err != nil {
		t.Fatalf("the dashboard never read the API: %v; it shows: %s", err, pageProblem(tab))
	}
	flowsJSON := jsList(want.Flows)
	if len(want.Flows) > 0 {
		grown := `(() => { const c = window.straitDashboard.charts();
			return ` + flowsJSON + `.every(f => c[f] && c[f].throughput.points > 1 && c[f].lag.points > 1); })()`
		if err := wait(tab, timeout, grown); err != nil {
			t.Fatalf("the charts of %v never held more than one point: %v; they hold %s", want.Flows, err, evalJSON(tab, `window.straitDashboard.charts()`))
		}
	}
	if want.NewPoints && len(want.Flows) > 0 {
		before := evalJSON(tab, `window.straitDashboard.charts()`)
		more := `(() => { const before = ` + before + `, c = window.straitDashboard.charts();
			return ` + flowsJSON + `.every(f => c[f].throughput.points > before[f].throughput.points || c[f].throughput.last > before[f].throughput.last); })()`
		if err := wait(tab, timeout, more); err != nil {
			t.Fatalf("no new chart point arrived for %v (the page must refresh the history on every poll): %v; before %s, now %s",
				want.Flows, err, before, evalJSON(tab, `window.straitDashboard.charts()`))
		}
	}

	s, err := chromedp.Run(tab, chromedp.Evaluate[snapshot](snapshotJS))
	if err != nil {
		t.Fatalf("reading the page: %v", err)
	}
	checkSnapshot(t, s, token, want)
}

// CheckAsksForToken opens baseURL with no token, on a node that asks for
// one, checks that the page says to open it with #token=, and saves a
// screenshot to screenshotPath unless it is empty.
func CheckAsksForToken(t testing.TB, baseURL, screenshotPath string) {
	t.Helper()
	tab, _ := openTab(t)
	if err := chromedp.Do(tab, chromedp.Navigate(strings.TrimRight(baseURL, "/")+"/")); err != nil {
		t.Fatalf("opening the dashboard at %s: %v", baseURL, err)
	}
	defer func() {
		if screenshotPath != "" {
			saveScreenshot(t, tab, screenshotPath)
		}
	}()
	shown := `(() => { const b = document.getElementById("banner"); return b && !b.hidden && b.textContent; })()`
	if err := wait(tab, 30*time.Second, shown); err != nil {
		t.Fatalf("the page showed no message about the missing token: %v", err)
	}
	text, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("banner").textContent`))
	if err != nil {
		t.Fatalf("reading the banner: %v", err)
	}
	if !strings.Contains(text, "#token=") || !strings.Contains(text, "token") {
		t.Errorf("the message for a missing token does not say to open the page with #token=: %q", text)
	}
	status, err := chromedp.Run(tab, chromedp.Evaluate[int](`window.straitDashboard.error ? window.straitDashboard.error.status : 0`))
	if err != nil || status != 401 {
		t.Errorf("the page's last error is HTTP %d (%v), want 401", status, err)
	}
}

// snapshot is what the page shows, read in one evaluation.
type snapshot struct {
	Layout      layout         `json:"layout"`
	Cards       []card         `json:"cards"`
	Rows        []row          `json:"rows"`
	Problems    []problem      `json:"problems"`
	Series      map[string]int `json:"series"` // history points the page holds, per flow
	Banner      string         `json:"banner"`
	Hash        string         `json:"hash"`
	StoredToken string         `json:"storedToken"`
	Violations  []string       `json:"violations"`
	Foreign     []string       `json:"foreign"`
}

// layout is how wide the page's parts are, in CSS pixels: the page must
// use the window's width, not leave half of it empty.
type layout struct {
	Viewport int `json:"viewport"` // the window's width
	Cards    int `json:"cards"`    // the flow cards' container
	Table    int `json:"table"`    // the partition table's box
}

// card is a flow's card.
type card struct {
	Flow            string  `json:"flow"`
	State           string  `json:"state"`
	Checkpoint      string  `json:"checkpoint"`
	CheckpointStale bool    `json:"checkpointStale"`
	Width           int     `json:"width"`     // in CSS pixels
	ChartRows       int     `json:"chartRows"` // distinct rows its charts sit in
	Charts          []chart `json:"charts"`
}

// chart is one uPlot chart of a card.
type chart struct {
	Chart      string `json:"chart"` // throughput, lag or latency
	Width      int    `json:"width"` // of its canvas, in pixels
	Height     int    `json:"height"`
	Points     int    `json:"points"`
	LinePixels int    `json:"linePixels"`
}

// row is a row of the partition table, its cells by column.
type row struct {
	Partition
	Stopped bool              `json:"stopped"` // highlighted as stopped
	Cells   map[string]string `json:"cells"`
}

// problem is an entry under "Stopped partitions and errors".
type problem struct {
	Partition
	Stopped bool   `json:"stopped"`
	Reason  string `json:"reason"`
}

func (s *snapshot) card(flow string) *card {
	for i := range s.Cards {
		if s.Cards[i].Flow == flow {
			return &s.Cards[i]
		}
	}
	return nil
}

func (s *snapshot) row(p Partition) *row {
	for i := range s.Rows {
		if s.Rows[i].Partition == p {
			return &s.Rows[i]
		}
	}
	return nil
}

func (s *snapshot) problem(p Partition) *problem {
	for i := range s.Problems {
		if s.Problems[i].Partition == p {
			return &s.Problems[i]
		}
	}
	return nil
}

// snapshotJS reads the page as a person sees it, from the DOM, plus the
// state object the page exposes. linePixels counts the pixels of a chart's
// canvas in the colour of its first series: proof that a line was drawn.
const snapshotJS = `(() => {
	const d = window.straitDashboard, charts = d.charts();
	const near = (r, g, b, c) => Math.abs(r - c[0]) < 40 && Math.abs(g - c[1]) < 40 && Math.abs(b - c[2]) < 40;
	const rgb = (hex) => [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16));
	// Only the plotting area counts: the axis labels are drawn in the same colour.
	const linePixels = (canvas, hex, plot) => {
		if (!plot || plot.width < 1 || plot.height < 1) return 0;
		const px = canvas.getContext("2d").getImageData(plot.left, plot.top, plot.width, plot.height).data, c = rgb(hex);
		let n = 0;
		for (let i = 0; i < px.length; i += 4) if (px[i + 3] > 200 && near(px[i], px[i + 1], px[i + 2], c)) n++;
		return n;
	};
	const text = (root, sel) => { const e = root.querySelector(sel); return e ? e.textContent : ""; };
	const banner = document.getElementById("banner");
	// The page builds only these elements around API strings; any other is
	// markup from the API that was parsed instead of shown.
	const foreign = (sel, allowed) => [...document.querySelectorAll(sel)]
		.filter(e => !allowed.includes(e.tagName)).map(e => "<" + e.tagName.toLowerCase() + "> in " + sel.split(" ")[0]);
	const width = (sel) => { const e = document.querySelector(sel); return e ? Math.round(e.getBoundingClientRect().width) : 0; };
	return {
		layout: { viewport: document.documentElement.clientWidth, cards: width("#flow-cards"), table: width("#partitions .table-wrap") },
		foreign: [...foreign("#problem-list *", ["LI", "SPAN"]), ...foreign("#partition-rows *", ["TR", "TD", "SPAN"]),
			...foreign("#flow-cards h3 *", []), ...foreign("#banner q *", [])],
		cards: [...document.querySelectorAll("#flow-cards .card")].map(card => ({
			flow: card.dataset.flow,
			state: text(card, "header .state"),
			checkpoint: text(card, "[data-fact=checkpoint] dd"),
			checkpointStale: card.querySelector("[data-fact=checkpoint]").classList.contains("warn"),
			width: Math.round(card.getBoundingClientRect().width),
			chartRows: new Set([...card.querySelectorAll(".chart")].map(box => Math.round(box.getBoundingClientRect().top))).size,
			charts: [...card.querySelectorAll(".chart")].map(box => {
				const canvas = box.querySelector("canvas"), info = (charts[card.dataset.flow] || {})[box.dataset.chart] || {};
				return { chart: box.dataset.chart, width: canvas ? canvas.width : 0, height: canvas ? canvas.height : 0,
					points: info.points || 0, linePixels: canvas && info.color ? linePixels(canvas, info.color, info.plot) : 0 };
			}),
		})),
		rows: [...document.querySelectorAll("#partition-rows tr")].map(r => ({
			flow: r.dataset.flow, topic: r.dataset.topic, partition: Number(r.dataset.partition), stopped: r.classList.contains("stopped"),
			cells: Object.fromEntries([...r.children].map(td => [td.dataset.col, td.textContent])),
		})),
		problems: [...document.querySelectorAll("#problem-list li")].map(li => ({
			flow: li.dataset.flow, topic: li.dataset.topic, partition: Number(li.dataset.partition),
			stopped: li.classList.contains("stopped"), reason: text(li, ".reason"),
		})),
		series: Object.fromEntries(Object.entries(d.series).map(([f, s]) => [f, s.t.length])),
		banner: banner.hidden ? "" : banner.textContent,
		hash: location.hash,
		storedToken: sessionStorage.getItem("strait.token") || "",
		violations: window.__straitViolations || [],
	};
})()`

func checkSnapshot(t testing.TB, s snapshot, token string, want Want) {
	t.Helper()
	if s.Banner != "" {
		t.Errorf("the page shows a problem banner: %q", s.Banner)
	}
	for _, e := range s.Foreign {
		t.Errorf("the page turned an API string into markup: %s", e)
	}
	for _, v := range s.Violations {
		t.Errorf("the page broke its Content-Security-Policy: %s", v)
	}
	if token != "" {
		if strings.Contains(s.Hash, "token") {
			t.Errorf("the token is left in the address bar: %q", s.Hash)
		}
		if s.StoredToken != token {
			t.Errorf("sessionStorage holds token %q, want the one from the fragment", s.StoredToken)
		}
	}

	// At the test's window width (windowWidth) the cards and the table
	// take the page's width, one card per row with its charts side by side.
	if l := s.Layout; l.Cards < l.Viewport*85/100 || l.Table < l.Viewport*85/100 {
		t.Errorf("the flow cards take %d px and the partition table %d px of a %d px wide window: the page leaves part of it empty", l.Cards, l.Table, l.Viewport)
	}
	for _, c := range s.Cards {
		if c.Width < s.Layout.Cards*95/100 {
			t.Errorf("flow %s's card is %d px wide in the %d px the flow cards have: the rest of the row is empty", c.Flow, c.Width, s.Layout.Cards)
		}
		if c.ChartRows > 1 {
			t.Errorf("flow %s's charts are in %d rows in a %d px wide window, want them side by side in one", c.Flow, c.ChartRows, s.Layout.Viewport)
		}
	}

	for _, flow := range want.Flows {
		c := s.card(flow)
		if c == nil {
			t.Errorf("flow %s has no card", flow)
			continue
		}
		if n := s.Series[flow]; n <= 1 {
			t.Errorf("flow %s: the page holds %d history points, want more than 1", flow, n)
		}
		var names []string
		for _, ch := range c.Charts {
			names = append(names, ch.Chart)
		}
		if got := strings.Join(names, ","); got != "throughput,lag,latency" {
			t.Errorf("flow %s has charts %q, want throughput,lag,latency", flow, got)
		}
		for _, ch := range c.Charts {
			switch {
			case ch.Width == 0 || ch.Height == 0:
				t.Errorf("flow %s: the %s chart's canvas is %dx%d", flow, ch.Chart, ch.Width, ch.Height)
			case ch.Points <= 1:
				t.Errorf("flow %s: the %s chart holds %d points, want more than 1", flow, ch.Chart, ch.Points)
			case ch.LinePixels == 0:
				t.Errorf("flow %s: the %s chart's plot has no pixel of its first series' colour: no line drawn", flow, ch.Chart)
			}
		}
	}

	for _, p := range want.Partitions {
		r := s.row(p)
		if r == nil {
			t.Errorf("the partition table has no row for %s", p)
			continue
		}
		if remote, ok := want.Remotes[p.Topic]; ok && r.Cells["remote"] != remote {
			t.Errorf("the row of %s shows remote topic %q, want %q", p, r.Cells["remote"], remote)
		}
	}

	for _, w := range want.Stopped {
		if q := s.problem(w.Partition); q == nil {
			t.Errorf("%s is not listed under stopped partitions and errors", w.Partition)
		} else if !q.Stopped || !strings.Contains(q.Reason, w.Error) {
			t.Errorf("%s is listed as stopped=%v with reason %q, want stopped with %q", w.Partition, q.Stopped, q.Reason, w.Error)
		}
		r := s.row(w.Partition)
		if r == nil {
			t.Errorf("the partition table has no row for stopped %s", w.Partition)
			continue
		}
		if !r.Stopped || r.Cells["state"] != "stopped" || !strings.Contains(r.Cells["last_error"], w.Error) {
			t.Errorf("the row of %s is highlighted=%v, state %q, last error %q; want a highlighted stopped row with %q",
				w.Partition, r.Stopped, r.Cells["state"], r.Cells["last_error"], w.Error)
		}
	}

	for _, w := range want.Checkpoints {
		c := s.card(w.Flow)
		if c == nil {
			t.Errorf("flow %s has no card to show its checkpoint age", w.Flow)
			continue
		}
		if !strings.HasSuffix(c.Checkpoint, " ago") || !strings.ContainsAny(c.Checkpoint, "0123456789") {
			t.Errorf("flow %s shows its last checkpoint as %q, want an age (\"12 s ago\")", w.Flow, c.Checkpoint)
		}
		if c.CheckpointStale != w.Stale {
			t.Errorf("flow %s: checkpoint %q in the warning colour: %v, want %v", w.Flow, c.Checkpoint, c.CheckpointStale, w.Stale)
		}
	}
}

// faults collects what the page reported while it ran: uncaught
// exceptions and console.error calls.
type faults struct {
	mu   sync.Mutex
	seen []string
}

func (f *faults) add(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, s)
}

func (f *faults) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// violationsJS runs before the page's own scripts and records every
// Content-Security-Policy violation, which the page's JS cannot see itself.
const violationsJS = `window.__straitViolations = [];
document.addEventListener("securitypolicyviolation", e => window.__straitViolations.push(e.violatedDirective + " blocked " + e.blockedURI));`

// openTab starts a headless Chromium for t and opens a tab with a fault
// recorder and the CSP violation recorder; t's cleanup ends the browser.
func openTab(t testing.TB) (context.Context, *faults) {
	t.Helper()
	var out syncBuffer
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(ChromiumPath(t)),
		chromedp.NoSandbox, // root in a container has no user namespace sandbox
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.WindowSize(windowWidth, windowHeight),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.CombinedOutput(&out),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser to exit and removes its profile directory
		if s := out.String(); t.Failed() && s != "" {
			t.Logf("chromium's output:\n%s", s)
		}
	})
	// Start the browser and the tab with no deadline, so that only the
	// waits below time out and the browser lives until the cleanup.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("starting chromium: %v\n%s", err, out.String())
	}
	f := &faults{}
	if err := chromedp.Listen(tab, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg += " " + d.Exception.Description
			}
			f.add(fmt.Sprintf("uncaught exception at %s:%d: %s", d.URL, d.LineNumber+1, msg))
		case *runtime.EventConsoleAPICalled:
			if ev.Type != runtime.ConsoleAPICalledTypeError {
				return
			}
			var parts []string
			for _, a := range ev.Args {
				if a.Description != "" {
					parts = append(parts, a.Description)
				} else {
					parts = append(parts, string(a.Value))
				}
			}
			f.add("console.error: " + strings.Join(parts, " "))
		}
	}); err != nil {
		t.Fatalf("listening to the tab: %v", err)
	}
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: violationsJS}); err != nil {
		t.Fatalf("adding the CSP violation recorder: %v", err)
	}
	return tab, f
}

// wait polls a JS expression until it is truthy, for at most timeout.
func wait(tab context.Context, timeout time.Duration, expr string) error {
	ctx, cancel := context.WithTimeout(tab, timeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(100*time.Millisecond)))
	return err
}

// evalJSON is the JSON of a JS expression, or the error as a JSON string.
func evalJSON(tab context.Context, expr string) string {
	raw, err := chromedp.Run(tab, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		return fmt.Sprintf("%q", "(reading "+expr+": "+err.Error()+")")
	}
	return string(raw)
}

// pageProblem says what the page shows when it has no data: its banner and
// its last error.
func pageProblem(tab context.Context) string {
	return evalJSON(tab, `({ banner: (document.getElementById("banner") || {}).textContent || "",
		error: window.straitDashboard ? window.straitDashboard.error : "no window.straitDashboard: app.js did not run" })`)
}

func saveScreenshot(t testing.TB, tab context.Context, path string) {
	t.Helper()
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("taking the screenshot: %v", err)
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Errorf("saving the screenshot: %v", err)
		return
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Errorf("saving the screenshot: %v", err)
		return
	}
	t.Logf("dashboard screenshot: %s", path)
}

// ChromiumPath is the browser to drive: $STRAIT_CHROMIUM, or what
// `scripts/chromium.sh path` prints. Without one the test fails, naming
// the install command: a browser test that skips proves nothing.
func ChromiumPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("STRAIT_CHROMIUM"); p != "" {
		return p
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "chromium.sh")
	out, err := exec.Command(script, "path").Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("no Chromium: %s (run %s install)", strings.TrimSpace(string(exit.Stderr)), script)
		}
		t.Fatalf("running %s path: %v", script, err)
	}
	return strings.TrimSpace(string(out))
}

// RepoRoot is the nearest directory above the working directory with
// go.mod and scripts/chromium.sh: Strait's checkout.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) && fileExists(filepath.Join(dir, "scripts", "chromium.sh")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no directory above the working directory holds go.mod and scripts/chromium.sh")
		}
		dir = parent
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// jsList is a JS array literal of strings (JSON is valid JS).
func jsList(ss []string) string {
	if ss == nil {
		ss = []string{}
	}
	b, _ := json.Marshal(ss) // strings always encode
	return string(b)
}

// syncBuffer is the browser's output, written by chromedp's goroutine and
// read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
