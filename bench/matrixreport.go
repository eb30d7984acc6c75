package main

import (
	"fmt"
	"html"
	"strings"
)

// matrixTable renders one row per cell: the steady-state medians and ranges of both tools,
// the ratios of the medians and the targets, then the totals with startup in their own table.
func (res *results) matrixTable(w func(string, ...any)) {
	if len(res.Cells) == 0 || !res.anyCopies() {
		return
	}
	p := res.Params
	w("")
	if p.Matrix != matrixNone {
		w("## Workload matrix (%s), %d runs per tool", p.Matrix, p.Runs)
	} else {
		w("## Summary, %d runs per tool", p.Runs)
	}
	w("")
	w("Steady state: from the first record on B to the complete copy. Each figure is the median of the runs [min–max]; ratios are Strait / MM2 of the medians. Targets (issue 8): throughput ≥ 3×, CPU per GB ≤ 1/10 on the fast path or ≤ 1/4 on the record path, peak RSS ≤ 1/8. *Path* is Strait's path for the cell: fast (which recompresses batches whose codec is not the compression.type), or record when Strait's log shows partitions continuing on the record path or strait.fast.path=false.")
	if res.Chart != "" {
		w("")
		w("![throughput per cell](%s)", res.Chart)
	}
	w("")
	w("| # | workload | path | Strait MB/s | MM2 MB/s | ratio | Strait CPU s/GB | MM2 CPU s/GB | ratio | Strait peak RSS MiB | MM2 peak RSS MiB | ratio | targets |")
	w("|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, c := range res.Cells {
		s, m := c.Summary[toolStrait], c.Summary[toolMM2]
		w("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", c.Index, c.Name, c.StraitPath,
			runsText(s, s.SteadyMBps, "%.1f"), runsText(m, m.SteadyMBps, "%.1f"), ratioText(c, c.Ratios.SteadyMBps, "%.2f×"),
			runsText(s, s.SteadyCPUPerGB, "%.2f"), runsText(m, m.SteadyCPUPerGB, "%.2f"), ratioText(c, c.Ratios.SteadyCPUPerGB, "%.3f"),
			runsText(s, s.PeakRSSMiB, "%.0f"), runsText(m, m.PeakRSSMiB, "%.0f"), ratioText(c, c.Ratios.PeakRSS, "%.3f"),
			targetsText(c.Targets)+failedText(c))
	}
	w("")
	w("Totals including startup (process start to complete copy; MM2's include the JVM, Connect's herder and task start):")
	w("")
	w("| # | workload | Strait MB/s | MM2 MB/s | ratio | Strait CPU s/GB | MM2 CPU s/GB | ratio | first record on B, Strait / MM2 (s) |")
	w("|--:|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, c := range res.Cells {
		s, m := c.Summary[toolStrait], c.Summary[toolMM2]
		w("| %d | %s | %s | %s | %s | %s | %s | %s | %s / %s |", c.Index, c.Name,
			runsText(s, s.MBps, "%.1f"), runsText(m, m.MBps, "%.1f"), ratioText(c, c.Ratios.MBps, "%.2f×"),
			runsText(s, s.CPUPerGB, "%.2f"), runsText(m, m.CPUPerGB, "%.2f"), ratioText(c, c.Ratios.CPUPerGB, "%.3f"),
			runsText(s, s.FirstRecordS, "%.2f"), runsText(m, m.FirstRecordS, "%.2f"))
	}
	w("")
	w("Backlogs: %s. compression.type *unset* writes no key: a Kafka producer then defaults to none, so MM2 writes uncompressed batches, while Strait forwards each batch in its source codec.", res.backlogsText())
}

// ceilingsTable shows, per cell, where the machine's cores went during each tool's copies
// and what a client alone writes into B. On 2 cores shared by both brokers and the
// replicator, a cell whose copies keep both cores busy, most of it in broker B, is bound by
// the brokers: a replicator cannot be 3× a peer that already needs a third of B's ceiling.
func (res *results) ceilingsTable(w func(string, ...any)) {
	if res.Params.Matrix == matrixNone || !res.anyCopies() {
		return
	}
	w("")
	w("### Ceilings per cell")
	w("")
	w("Cores busy is the CPU of the tool and both brokers over each run's whole copy (process start to complete), median of the runs, split as tool / broker A / broker B. *Produce-only into B* is franz-go alone writing the cell's records, in the codec that lands on B, into a new topic with the cell's partitions, right after the preload.")
	w("")
	w("| # | workload | Strait: cores busy (Strait / A / B) | MM2: cores busy (MM2 / A / B) | produce-only into B MB/s | Strait steady MB/s | Strait / produce-only | 3× MM2 MB/s |")
	w("|--:|---|--:|--:|--:|--:|--:|--:|")
	for _, c := range res.Cells {
		limit := "–"
		share := "–"
		s := c.Summary[toolStrait]
		for _, l := range c.Limits {
			if l.Name == "produce-only" && l.MBPerSec > 0 {
				limit = fmt.Sprintf("%.1f", l.MBPerSec)
				if s.Runs > 0 {
					share = fmt.Sprintf("%.0f%%", 100*s.SteadyMBps.Median/l.MBPerSec)
				}
			}
		}
		threeMM2 := "–"
		if m := c.Summary[toolMM2]; m.Runs > 0 {
			threeMM2 = fmt.Sprintf("%.1f", 3*m.SteadyMBps.Median)
		}
		w("| %d | %s | %s | %s | %s | %s | %s | %s |", c.Index, c.Name, coresText(c.Copies, toolStrait), coresText(c.Copies, toolMM2),
			limit, runsText(s, s.SteadyMBps, "%.1f"), share, threeMM2)
	}
}

// coresText is the median over tool's good runs of the cores the tool and each broker kept
// busy during the copy, "–" without runs.
func coresText(copies []copyResult, tool string) string {
	var all, own, a, b []float64
	for _, cp := range copies {
		if cp.Tool != tool || cp.Error != "" || cp.WallSeconds <= 0 {
			continue
		}
		t := cp.WallSeconds
		all = append(all, (cp.CPUSeconds+cp.BrokerCPU["a"]+cp.BrokerCPU["b"])/t)
		own, a, b = append(own, cp.CPUSeconds/t), append(a, cp.BrokerCPU["a"]/t), append(b, cp.BrokerCPU["b"]/t)
	}
	if len(all) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f (%.2f / %.2f / %.2f)", statOf(all).Median, statOf(own).Median, statOf(a).Median, statOf(b).Median)
}

func (res *results) anyCopies() bool {
	for _, c := range res.Cells {
		if len(c.Copies) > 0 {
			return true
		}
	}
	return false
}

func (res *results) backlogsText() string {
	var out []string
	for _, c := range res.Cells {
		if c.Preload == nil {
			continue
		}
		out = append(out, fmt.Sprintf("#%d %d records, %.0f MB payload, %.0f MB on disk", c.Index, c.Preload.Records, float64(c.Preload.PayloadBytes)/1e6, float64(c.Preload.DiskBytes)/1e6))
	}
	return strings.Join(out, "; ")
}

// runsText is a figure of a tool's runs, "–" when the tool did not run.
func runsText(s toolSummary, v stat, format string) string {
	if s.Runs == 0 {
		return "–"
	}
	return statText(v, format)
}

// ratioText is a ratio of the medians, "–" unless both tools have good runs.
func ratioText(c cellResult, r float64, format string) string {
	if len(c.Targets) == 0 {
		return "–"
	}
	return fmt.Sprintf(format, r)
}

// failedText names the failed runs of a cell, and runs that left more records on B than
// the source holds (duplicates), for the targets column.
func failedText(c cellResult) string {
	var out []string
	for _, t := range []string{toolStrait, toolMM2} {
		if n := c.Failed[t]; n > 0 {
			out = append(out, fmt.Sprintf("**%s: %d of %d runs failed**", t, n, n+c.Summary[t].Runs))
		}
	}
	for _, cp := range c.Copies {
		if cp.Error == "" && cp.TargetRecords > cp.Records {
			out = append(out, fmt.Sprintf("**%s run %d: %d duplicates on B**", cp.Tool, cp.Run, cp.TargetRecords-cp.Records))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; " + strings.Join(out, ", ")
}

func targetsText(ts []targetCheck) string {
	if len(ts) == 0 {
		return "–"
	}
	var met, missed []string
	for _, t := range ts {
		label := map[string]string{"throughput": "throughput ≥ 3×", "rss": "RSS ≤ 1/8"}[t.Name]
		if t.Name == "cpu" {
			label = t.Goal
		}
		if t.Met {
			met = append(met, label)
		} else {
			missed = append(missed, label)
		}
	}
	var out []string
	if len(met) > 0 {
		out = append(out, "met: "+strings.Join(met, ", "))
	}
	if len(missed) > 0 {
		out = append(out, "**missed: "+strings.Join(missed, ", ")+"**")
	}
	return strings.Join(out, "; ")
}

// Layout of the chart, in SVG user units (pixels).
const (
	chartWidth    = 960
	chartLabelW   = 360 // the cell names on the left
	chartRight    = 70  // room for the value labels
	chartTop      = 50
	chartBarH     = 11
	chartCellGap  = 10
	chartAxisFont = 11
)

// chartSVG draws the steady-state throughput of both tools per cell as horizontal bars
// (median) with a line over the range of the runs. Written by hand rather than with
// gonum/plot: the chart is a few rectangles, and gonum would be a new module dependency in
// go.mod for the bench command alone.
func (res *results) chartSVG() string {
	var maxV float64
	for _, c := range res.Cells {
		for _, s := range c.Summary {
			maxV = max(maxV, s.SteadyMBps.Max)
		}
	}
	if maxV == 0 {
		maxV = 1
	}
	maxV = niceCeil(maxV)
	plotW := float64(chartWidth - chartLabelW - chartRight)
	x := func(v float64) float64 { return chartLabelW + v/maxV*plotW }
	cellH := 2*chartBarH + chartCellGap
	height := chartTop + len(res.Cells)*cellH + 40
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`, chartWidth, height, chartWidth, height, chartAxisFont)
	f(`<rect width="100%%" height="100%%" fill="white"/>`)
	f(`<text x="%d" y="18" font-size="14" font-weight="bold">Steady-state throughput per cell, MB/s of payload (median of %d runs; line: range)</text>`, 10, res.Params.Runs)
	f(`<rect x="%d" y="28" width="12" height="10" fill="#1f77b4"/><text x="%d" y="37">Strait</text>`, chartLabelW, chartLabelW+16)
	f(`<rect x="%d" y="28" width="12" height="10" fill="#ff7f0e"/><text x="%d" y="37">MM2</text>`, chartLabelW+70, chartLabelW+86)
	bottom := chartTop + len(res.Cells)*cellH
	for i := 0; i <= 4; i++ {
		v := maxV * float64(i) / 4
		f(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`, x(v), chartTop-4, x(v), bottom)
		f(`<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%g</text>`, x(v), bottom+14, v)
	}
	for i, c := range res.Cells {
		y0 := chartTop + i*cellH
		f(`<text x="%d" y="%d" text-anchor="end">%s</text>`, chartLabelW-6, y0+chartBarH+4, html.EscapeString(fmt.Sprintf("%d. %s", c.Index, c.Name)))
		for j, t := range []struct{ tool, color string }{{toolStrait, "#1f77b4"}, {toolMM2, "#ff7f0e"}} {
			s, ok := c.Summary[t.tool]
			if !ok {
				continue
			}
			y := y0 + j*chartBarH
			f(`<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`, chartLabelW, y, x(s.SteadyMBps.Median)-chartLabelW, chartBarH-1, t.color)
			mid := float64(y) + float64(chartBarH-1)/2
			f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`, x(s.SteadyMBps.Min), mid, x(s.SteadyMBps.Max), mid)
			f(`<text x="%.1f" y="%d" fill="#333">%.1f</text>`, x(s.SteadyMBps.Max)+4, y+chartBarH-2, s.SteadyMBps.Median)
		}
	}
	f(`</svg>`)
	return b.String()
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := 1.0
	for p > v {
		p /= 10
	}
	for p*10 <= v {
		p *= 10
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
