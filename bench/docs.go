package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The docs' figures are generated, not typed: `go run ./bench -docs` rewrites each section
// between <!-- bench:NAME --> and <!-- /bench:NAME --> in the README and
// docs/performance.md from the reports matrix-latest.md and distance-latest.md point at,
// and TestDocsMatchLatestReports fails when a section differs from what the reports give.
// The analysis around the tables stays written by hand.

// docFiles are the files with generated sections, relative to the repository root.
var docFiles = []string{"README.md", filepath.Join("docs", "performance.md")}

// latestReports are the stored reports the docs cite: the loopback matrix's and the
// distance matrix's latest.
type latestReports struct {
	Matrix, Distance         *results
	MatrixName, DistanceName string // e.g. 20261205-082036.md
}

var pointerLink = regexp.MustCompile(`\[([0-9]{8}-[0-9]{6})\.md\]\(`)

// loadLatest reads the reports matrix-latest.md and distance-latest.md in dir point at.
func loadLatest(dir string) (latestReports, error) {
	var l latestReports
	for _, p := range []struct {
		pointer string
		res     **results
		name    *string
	}{{"matrix-latest.md", &l.Matrix, &l.MatrixName}, {"distance-latest.md", &l.Distance, &l.DistanceName}} {
		b, err := os.ReadFile(filepath.Join(dir, p.pointer))
		if err != nil {
			return l, err
		}
		m := pointerLink.FindSubmatch(b)
		if m == nil {
			return l, fmt.Errorf("%s: no link to a report such as [20261205-082036.md](20261205-082036.md)", p.pointer)
		}
		stamp := string(m[1])
		js, err := os.ReadFile(filepath.Join(dir, stamp+".json"))
		if err != nil {
			return l, fmt.Errorf("%s points at %s.md, whose results are missing: %w", p.pointer, stamp, err)
		}
		var res results
		if err := json.Unmarshal(js, &res); err != nil {
			return l, fmt.Errorf("%s.json: not a bench result: %w", stamp, err)
		}
		*p.res, *p.name = &res, stamp+".md"
	}
	return l, nil
}

// docSections renders every generated section by name.
func (l latestReports) docSections() map[string]string {
	return map[string]string{
		"headline": l.headline(),
		"loopback": l.loopback(),
		"distance": l.distance(),
	}
}

// reportLine names a report, its command and the commit it measured.
func reportLine(name, command string, res *results) string {
	commit := res.Machine.StraitCommit
	if len(commit) > 7 {
		commit = commit[:7]
	}
	if res.Machine.StraitDirty {
		commit += " with uncommitted changes"
	}
	return fmt.Sprintf("`bench/results/%s` (`%s`, on %s)", name, command, commit)
}

// lines renders a section line by line with fill's w, which formats one line.
func lines(fill func(w func(format string, a ...any))) string {
	var b strings.Builder
	fill(func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) })
	return b.String()
}

// headline is the README's table: every loopback cell, then the distance cell furthest
// away (uncapped, fewest partitions) against MM2 at its defaults and as tuned.
func (l latestReports) headline() string { return lines(l.headlineLines) }

func (l latestReports) headlineLines(w func(format string, a ...any)) {
	w("| workload | Strait MB/s | MM2 MB/s | throughput × MM2 | CPU per GB, Strait / MM2 | peak RSS, Strait / MM2 |")
	w("|---|--:|--:|--:|--:|--:|")
	for _, c := range l.Matrix.Cells {
		s, m := c.Summary[toolStrait], c.Summary[toolMM2]
		w("| %s | %.1f | %.1f | %.2f× | %.3f | %.3f |", plainWorkload(c.Workload),
			s.SteadyMBps.Median, m.SteadyMBps.Median, c.Ratios.SteadyMBps, c.Ratios.SteadyCPUPerGB, c.Ratios.PeakRSS)
	}
	if c, ok := farthestCell(l.Distance.Cells); ok {
		sd := c.Summary[toolStraitDefault]
		for _, peer := range []struct{ tool, label string }{
			{toolMM2Default, fmt.Sprintf("source %d ms away, %s, both at their defaults", c.Workload.Link.RTT.Milliseconds(), plainWorkload(c.Workload))},
			{toolMM2, "the same, MM2 tuned (" + mm2TuningText(l.Distance) + ")"},
		} {
			m := c.Summary[peer.tool]
			w("| %s | %.1f | %.1f | %.2f× | %.3f | %.3f |", peer.label, sd.SteadyMBps.Median, m.SteadyMBps.Median,
				ratioOf(sd.SteadyMBps.Median, m.SteadyMBps.Median), ratioOf(sd.SteadyCPUPerGB.Median, m.SteadyCPUPerGB.Median),
				ratioOf(sd.PeakRSSMiB.Median, m.PeakRSSMiB.Median))
		}
	}
	w("")
	w("Reports: %s; %s. Medians of %d runs per tool. %s",
		reportLine(l.MatrixName, "go run ./bench -matrix", l.Matrix), reportLine(l.DistanceName, "go run ./bench -matrix distance", l.Distance),
		l.Matrix.Params.Runs, startupText(l.Matrix))
}

// startupText sets the ratios with startup against MM2's time to its first record.
func startupText(res *results) string {
	var ratios, firsts []float64
	for _, c := range res.Cells {
		if c.Ratios.MBps > 0 {
			ratios = append(ratios, c.Ratios.MBps)
		}
		if m, ok := c.Summary[toolMM2]; ok {
			firsts = append(firsts, m.FirstRecordS.Median)
		}
	}
	if len(ratios) == 0 || len(firsts) == 0 {
		return ""
	}
	return fmt.Sprintf("With startup (process start to the complete copy) Strait is %.1f–%.0f× MM2, whose JVM and Connect herder take %.0f–%.0f s before the first record.",
		slices.Min(ratios), slices.Max(ratios), slices.Min(firsts), slices.Max(firsts))
}

// mm2TuningText says how MM2 was tuned in a report, from its properties file.
func mm2TuningText(res *results) string {
	var parts []string
	for _, line := range strings.Split(res.Properties, "\n") {
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case !ok:
		case k == "tasks.max":
			parts = append(parts, v+" tasks")
		case strings.HasSuffix(k, "consumer.max.partition.fetch.bytes") && v == "4194304":
			parts = append(parts, "4 MiB fetches")
		}
	}
	slices.Sort(parts)
	parts = slices.Compact(parts)
	if len(parts) == 0 {
		return "see bench/README.md"
	}
	return strings.Join(parts, ", ")
}

// farthestCell is the distance cell with the longest round trip, uncapped, with the
// fewest partitions, that both Strait at its defaults and MM2 ran.
func farthestCell(cells []cellResult) (cellResult, bool) {
	var best cellResult
	found := false
	for _, c := range cells {
		_, sd := c.Summary[toolStraitDefault]
		_, md := c.Summary[toolMM2Default]
		if c.Workload.Link == nil || c.Workload.Link.MBps > 0 || !sd || !md {
			continue
		}
		if !found || c.Workload.Link.RTT.Duration > best.Workload.Link.RTT.Duration ||
			c.Workload.Link.RTT.Duration == best.Workload.Link.RTT.Duration && c.Workload.totalPartitions() < best.Workload.totalPartitions() {
			best, found = c, true
		}
	}
	return best, found
}

// plainWorkload is a workload in words: "1 KiB × 8 partitions, zstd → lz4".
func plainWorkload(w workload) string {
	parts := fmt.Sprintf("%d partitions", w.Partitions)
	if w.Topics > 1 {
		parts = fmt.Sprintf("%s topics of %d partition%s", groupThousands(w.Topics), w.Partitions, map[bool]string{true: "", false: "s"}[w.Partitions == 1])
	}
	codec := func(c string) string {
		if c == "none" {
			return "uncompressed"
		}
		return c
	}
	src := codec(w.Codec)
	if w.Mixed {
		src = "uncompressed and " + w.Codec
	}
	if w.Target != targetUnset && w.TargetCodec != w.Codec {
		src += " → " + codec(w.TargetCodec)
	} else if w.Mixed {
		src += " → " + w.Codec
	}
	return fmt.Sprintf("%s × %s, %s", sizeText(w.RecordSize), parts, src)
}

// groupThousands writes n with a comma between thousands: 2,000.
func groupThousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// loopback is performance.md's table of the loopback matrix.
func (l latestReports) loopback() string { return lines(l.loopbackLines) }

func (l latestReports) loopbackLines(w func(format string, a ...any)) {
	res := l.Matrix
	w("Report %s, read-ahead %d KiB; %d runs per tool, median [min–max]; ratios are Strait / MM2 of the medians.",
		reportLine(l.MatrixName, "go run ./bench -matrix", res), res.Params.ReadAheadKB, res.Params.Runs)
	w("")
	w("| # | workload | Strait MB/s | MM2 MB/s | × MM2 | CPU/GB, Strait / MM2 | peak RSS, Strait / MM2 | broker B CPU/GB, Strait / MM2 |")
	w("|--:|---|--:|--:|--:|--:|--:|--:|")
	for _, c := range res.Cells {
		s, m := c.Summary[toolStrait], c.Summary[toolMM2]
		w("| %d | %s | %s | %.1f | %.2f× | %.3f | %.3f | %.2f |", c.Index, c.Name, statText(s.SteadyMBps, "%.1f"),
			m.SteadyMBps.Median, c.Ratios.SteadyMBps, c.Ratios.SteadyCPUPerGB, c.Ratios.PeakRSS, c.Ratios.BrokerBCPUPerGB)
	}
}

// distance is performance.md's table of the distance matrix.
func (l latestReports) distance() string { return lines(l.distanceLines) }

func (l latestReports) distanceLines(w func(format string, a ...any)) {
	res := l.Distance
	w("Report %s, read-ahead %d KiB; %d runs per tool, median [min–max] for Strait at its defaults, medians elsewhere.",
		reportLine(l.DistanceName, "go run ./bench -matrix distance", res), res.Params.ReadAheadKB, res.Params.Runs)
	w("")
	w("| round trip | cap | partitions | Strait at defaults | Strait, tuned file | MM2 tuned | MM2 at defaults | link's limit | at defaults: of the link / × MM2 defaults / × MM2 tuned |")
	w("|--:|---|--:|--:|--:|--:|--:|--:|---|")
	for _, c := range res.Cells {
		if c.Workload.Link == nil {
			continue
		}
		f := c.Link
		if f == nil {
			f = linkFiguresOf(c.Summary, c.Limits)
		}
		capText := "–"
		if c.Workload.Link.MBps > 0 {
			capText = fmt.Sprintf("%g MB/s", c.Workload.Link.MBps)
		}
		num := func(v float64, format string) string {
			if v == 0 {
				return "–"
			}
			return fmt.Sprintf(format, v)
		}
		sd := c.Summary[toolStraitDefault]
		w("| %d ms | %s | %d | %s | %s | %s | %s | %s | %s / %s / %s |", c.Workload.Link.RTT.Milliseconds(), capText, c.Workload.totalPartitions(),
			statText(sd.SteadyMBps, "%.1f"), num(c.Summary[toolStrait].SteadyMBps.Median, "%.1f"), num(c.Summary[toolMM2].SteadyMBps.Median, "%.1f"),
			num(c.Summary[toolMM2Default].SteadyMBps.Median, "%.1f"), num(f.LimitMBps, "%.1f"),
			num(100*f.DefaultOfLimit, "%.0f %%"), num(f.DefaultOverMM2Default, "%.2f×"), num(f.DefaultOverMM2, "%.2f×"))
	}
}

// spliceSections replaces every generated section of doc with sections[NAME]. It refuses
// a section that is not closed or that it cannot render, so a typo is not left stale.
func spliceSections(doc string, sections map[string]string) (string, error) {
	var out strings.Builder
	rest := doc
	for {
		i := strings.Index(rest, "<!-- bench:")
		if i < 0 {
			out.WriteString(rest)
			return out.String(), nil
		}
		open := rest[i:]
		end := strings.Index(open, " -->")
		if end < 0 {
			return "", errors.New("a <!-- bench:NAME --> marker without its closing -->")
		}
		name := open[len("<!-- bench:"):end]
		body, ok := sections[name]
		if !ok {
			return "", fmt.Errorf("no generated section is called %q (there are %v)", name, sortedKeys(sections))
		}
		closeMark := "<!-- /bench:" + name + " -->"
		j := strings.Index(open, closeMark)
		if j < 0 {
			return "", fmt.Errorf("section %q has no %s", name, closeMark)
		}
		out.WriteString(rest[:i])
		out.WriteString("<!-- bench:" + name + " -->\n" + body + closeMark)
		rest = open[j+len(closeMark):]
	}
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// docFile is a file with generated sections: as it is, and as the reports give it.
type docFile struct {
	path       string
	have, want string
}

// renderDocs renders every doc file under root from the latest reports in resultsDir.
func renderDocs(root, resultsDir string) ([]docFile, latestReports, error) {
	l, err := loadLatest(resultsDir)
	if err != nil {
		return nil, l, err
	}
	sections := l.docSections()
	var out []docFile
	for _, f := range docFiles {
		path := filepath.Join(root, f)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, l, fmt.Errorf("%w (run it from the repository's root)", err)
		}
		want, err := spliceSections(string(b), sections)
		if err != nil {
			return nil, l, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, docFile{path: path, have: string(b), want: want})
	}
	return out, l, nil
}

// writeDocs rewrites the generated sections of every doc file under root from the
// latest reports in resultsDir.
func writeDocs(root, resultsDir string, stdout, stderr io.Writer) int {
	files, l, err := renderDocs(root, resultsDir)
	if err != nil {
		fmt.Fprintf(stderr, "bench: -docs: %v\n", err)
		return 1
	}
	for _, f := range files {
		if f.want == f.have {
			fmt.Fprintf(stdout, "%s: up to date\n", f.path)
			continue
		}
		if err := os.WriteFile(f.path, []byte(f.want), 0o644); err != nil {
			fmt.Fprintf(stderr, "bench: -docs: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s: rewritten from %s and %s\n", f.path, l.MatrixName, l.DistanceName)
	}
	return 0
}
