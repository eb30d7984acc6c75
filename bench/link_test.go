package main

import (
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
)

func TestLinkSpec(t *testing.T) {
	tests := []struct {
		link   linkSpec
		text   string
		oneWay time.Duration
	}{
		{link: linkSpec{RTT: duration{150 * time.Millisecond}}, text: "RTT 150 ms, uncapped", oneWay: 75 * time.Millisecond},
		{link: linkSpec{RTT: duration{20 * time.Millisecond}, MBps: 100}, text: "RTT 20 ms, 100 MB/s cap", oneWay: 10 * time.Millisecond},
		{link: linkSpec{RTT: duration{2 * time.Second}, MBps: 12.5}, text: "RTT 2000 ms, 12.5 MB/s cap", oneWay: time.Second},
	}
	for _, tt := range tests {
		if got := tt.link.text(); got != tt.text {
			t.Errorf("text() = %q, want %q", got, tt.text)
		}
		if got := tt.link.oneWay(); got != tt.oneWay {
			t.Errorf("%s: oneWay() = %s, want %s", tt.text, got, tt.oneWay)
		}
	}
	w := newWorkload(1024, 8, 1, "none", false, targetUnset, 1000)
	if got := w.name(); got != "1 KiB × 8p, none → unset" {
		t.Errorf("loopback cell name() = %q", got)
	}
	w.Link = &linkSpec{RTT: duration{80 * time.Millisecond}, MBps: 100}
	if got := w.name(); got != "1 KiB × 8p, none → unset, RTT 80 ms, 100 MB/s cap" {
		t.Errorf("distance cell name() = %q", got)
	}
	if w.hasLimitTarget() {
		t.Error("a distance cell carries the loopback produce-only target")
	}
}

// TestLinkToxicBook checks the shared cap's booking: bytes leave one after the other at
// the rate, whichever connection books them, and an idle link starts again from the clock
// with at most linkSlack of credit.
func TestLinkToxicBook(t *testing.T) {
	lt := &linkToxic{Rate: 100e6} // 100 MB/s: 1 MB takes 10 ms
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(d time.Time) float64 { return float64(d.Sub(t0)) / float64(time.Millisecond) }
	// The first booking of an idle link starts linkSlack before now.
	if got := ms(lt.book(1e6, t0)); got != 10-2 {
		t.Errorf("first MB done at %g ms, want 8", got)
	}
	// Two more at the same instant (two connections) queue behind it.
	if got := ms(lt.book(1e6, t0)); got != 18 {
		t.Errorf("second MB done at %g ms, want 18", got)
	}
	if got := ms(lt.book(5e5, t0.Add(time.Millisecond))); got != 23 {
		t.Errorf("half a MB booked at 1 ms done at %g ms, want 23", got)
	}
	// After 100 ms of idle the link is free again: only linkSlack of credit.
	if got := ms(lt.book(1e6, t0.Add(100*time.Millisecond))); got != 108 {
		t.Errorf("a MB after idle done at %g ms, want 108", got)
	}
	// 100 MB booked in 25 kB chunks at the same instant take one second (less the slack).
	lt = &linkToxic{Rate: 100e6}
	var done time.Time
	for range 4000 {
		done = lt.book(25000, t0)
	}
	if got := done.Sub(t0); got < 990*time.Millisecond || got > time.Second {
		t.Errorf("100 MB at 100 MB/s done after %s, want about 1s", got)
	}
}

// TestLinkProxyMeters runs bytes through the proxy with the toxics of a capped link and
// checks that they arrive whole and are counted (no timing is checked).
func TestLinkProxyMeters(t *testing.T) {
	const size = 1 << 20
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = c.Write(make([]byte, size))
	}()
	lp, err := newLinkProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer lp.close()
	if err := lp.p.Update(&toxiproxy.Proxy{Listen: lp.p.Listen, Upstream: ln.Addr().String(), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if got := lp.bytesDown(); got != 0 {
		t.Errorf("bytesDown() without toxics = %d, want 0", got)
	}
	if err := lp.set(linkSpec{RTT: duration{2 * time.Millisecond}, MBps: 1000}); err != nil {
		t.Fatal(err)
	}
	// Setting the link again replaces the toxics rather than failing on their names.
	if err := lp.set(linkSpec{RTT: duration{2 * time.Millisecond}, MBps: 1000}); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", lp.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, err := io.Copy(io.Discard, c)
	if err != nil || n != size {
		t.Fatalf("read %d bytes across the proxy (err %v), want %d", n, err, size)
	}
	if got := lp.bytesDown(); got != size {
		t.Errorf("bytesDown() = %d, want %d", got, size)
	}
	if err := lp.clear(); err != nil {
		t.Fatal(err)
	}
	if got := lp.bytesDown(); got != 0 {
		t.Errorf("bytesDown() after clear = %d, want 0", got)
	}
	if !strings.HasPrefix(lp.addr(), "127.0.0.1:") || lp.port() == "" || lp.port() == "0" {
		t.Errorf("addr() = %q, port() = %q", lp.addr(), lp.port())
	}
}

func TestParseStartOutput(t *testing.T) {
	out := `a 127.0.0.1:20001 /tmp/tb/a
b 127.0.0.1:20011 /tmp/tb/b
node a:1 127.0.0.1:20001 127.0.0.1:20005 127.0.0.1:41234 /tmp/tb/a
/tmp/tb
`
	a, b := parseStartOutput(out)
	if a != (cluster{name: "a", bootstrap: "127.0.0.1:20001", dir: "/tmp/tb/a", external: "127.0.0.1:20005"}) {
		t.Errorf("a = %+v", a)
	}
	if b != (cluster{name: "b", bootstrap: "127.0.0.1:20011", dir: "/tmp/tb/b"}) {
		t.Errorf("b = %+v", b)
	}
	a, _ = parseStartOutput("a 127.0.0.1:20001 /tmp/tb/a\nb 127.0.0.1:20011 /tmp/tb/b\n/tmp/tb\n")
	if a.external != "" {
		t.Errorf("without --external: a.external = %q", a.external)
	}
}

func TestLinkFigures(t *testing.T) {
	sum := map[string]toolSummary{
		toolStrait:     {Runs: 3, SteadyMBps: stat{Median: 90}},
		toolMM2:        {Runs: 3, SteadyMBps: stat{Median: 45}},
		toolMM2Default: {Runs: 3, SteadyMBps: stat{Median: 9}},
	}
	limits := []limitResult{{Name: limitLink, MBPerSec: 80, SteadyMBPerSec: 100, Seconds: 6, FirstRecordSeconds: 1}}
	f := linkFiguresOf(sum, limits)
	if *f != (linkFigures{LimitMBps: 100, StraitOverMM2: 2, StraitOverMM2Default: 10, StraitOfLimit: 0.9}) {
		t.Errorf("linkFiguresOf = %+v", *f)
	}
	// A probe that read the backlog in about one fetch has no steady figure.
	f = linkFiguresOf(sum, []limitResult{{Name: limitLink, MBPerSec: 30, SteadyMBPerSec: 4000, Seconds: 1.7, FirstRecordSeconds: 1.69}})
	if f.LimitMBps != 0 || f.StraitOfLimit != 0 {
		t.Errorf("a probe with a 0.01 s window: %+v", *f)
	}
	delete(sum, toolMM2Default)
	f = linkFiguresOf(sum, nil)
	if *f != (linkFigures{StraitOverMM2: 2}) {
		t.Errorf("without mm2-default and probe: %+v", *f)
	}
	// A distance cell has no issue-8 targets, but its ratios.
	c := cellResult{Workload: workload{Link: &linkSpec{RTT: duration{20 * time.Millisecond}}}, Limits: limits,
		Copies: []copyResult{{Tool: toolStrait, SteadyMBPerSec: 90}, {Tool: toolMM2, SteadyMBPerSec: 30}}}
	c.summarizeCell()
	if len(c.Targets) != 0 || c.Ratios.SteadyMBps != 3 || c.Link == nil || c.Link.StraitOfLimit != 0.9 {
		t.Errorf("summarizeCell: targets %v, ratios %+v, link %+v", c.Targets, c.Ratios, c.Link)
	}
}

// TestDistanceEstimate keeps the distance matrix's estimate in the range bench/README.md
// gives, and checks that links slow the estimate down.
func TestDistanceEstimate(t *testing.T) {
	p, err := parseParams([]string{"-matrix", "distance"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	est := estimate(p.cells(), p.Runs, p.Tools, latencyEstimate(p))
	if est < 20*time.Minute || est > 60*time.Minute {
		t.Errorf("the distance matrix is estimated at %s, outside the README's 20 to 60 minutes", est)
	}
	t.Logf("distance matrix: %d cells, estimated %s", len(p.cells()), est)
	near := estimate(p.cells()[:1], 1, p.Tools, 0)
	far := estimate(p.cells()[4:5], 1, p.Tools, 0)
	if far <= near {
		t.Errorf("150 ms estimated at %s, 20 ms at %s: want longer", far, near)
	}
	if got := linkRate(100, 32, nil); got != 100 {
		t.Errorf("linkRate without a link = %g", got)
	}
	// 32 MB in flight: 0.1 s of round trip and 0.32 s to move it at the cap.
	if got := linkRate(1000, 32, &linkSpec{RTT: duration{100 * time.Millisecond}, MBps: 100}); math.Abs(got-32/0.42) > 1e-9 {
		t.Errorf("linkRate capped = %g, want %g", got, 32/0.42)
	}
	if got := linkRate(50, 320, &linkSpec{RTT: duration{10 * time.Millisecond}, MBps: 100}); math.Abs(got-320/6.41) > 1e-9 {
		t.Errorf("linkRate below the cap = %g, want %g", got, 320/6.41)
	}
}

// TestMM2DefaultSettings checks the file of MM2 at its defaults and that the settings
// check catches an MM2 that ran tuned.
func TestMM2DefaultSettings(t *testing.T) {
	f := flowSpec{source: "A1", target: "B1", sourceBoot: "127.0.0.1:22448", destBoot: "127.0.0.1:35722",
		topic: backlogTopic, tuning: defaultParams().MM2, targetCodec: "lz4"}
	f.tuning.TasksMax = 8
	got := f.properties(toolMM2Default)
	golden(t, "mm2-default.properties", got)
	for _, k := range []string{"tasks.max", "batch.size", "fetch.bytes", "max.poll.records", "max.in.flight"} {
		if strings.Contains(got, k) {
			t.Errorf("MM2 at its defaults gets %s", k)
		}
	}
	// Strait at its defaults reads the same file but for its first line, the comment.
	straitFile := f.properties(toolStraitDefault)
	_, mm2Rest, _ := strings.Cut(got, "\n")
	first, straitRest, _ := strings.Cut(straitFile, "\n")
	if straitRest != mm2Rest || !strings.Contains(first, "Strait at its defaults (strait-default)") {
		t.Errorf("properties(strait-default) is not mm2-default's file:\n%s", straitFile)
	}
	// The log of a tuned run: mm2-default's check must refuse it.
	b, err := os.ReadFile(filepath.Join("testdata", mm2ClientLog))
	if err != nil {
		t.Fatal(err)
	}
	_, err = checkClientConfigs(parseClientConfigs(string(b)), f.wantedMM2Defaults())
	if err == nil || !strings.Contains(err.Error(), "batch.size = 262144, the file says 16384") ||
		!strings.Contains(err.Error(), "max.partition.fetch.bytes = 4194304, the file says 1048576") {
		t.Errorf("checking a tuned MM2 against the defaults: %v", err)
	}
}
