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
		if se, me, ok := c.eosSummaries(); ok {
			w("| %d | ↳ the same backlog, exactly-once | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", c.Index, c.StraitPath,
				runsText(se, se.SteadyMBps, "%.1f"), runsText(me, me.SteadyMBps, "%.1f"), eosRatioText(se, me, func(s toolSummary) float64 { return s.SteadyMBps.Median }, "%.2f×"),
				runsText(se, se.SteadyCPUPerGB, "%.2f"), runsText(me, me.SteadyCPUPerGB, "%.2f"), eosRatioText(se, me, func(s toolSummary) float64 { return s.SteadyCPUPerGB.Median }, "%.3f"),
				runsText(se, se.PeakRSSMiB, "%.0f"), runsText(me, me.PeakRSSMiB, "%.0f"), eosRatioText(se, me, func(s toolSummary) float64 { return s.PeakRSSMiB.Median }, "%.3f"),
				eosCostText(c))
		}
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
		if se, me, ok := c.eosSummaries(); ok {
			w("| %d | ↳ the same backlog, exactly-once | %s | %s | %s | %s | %s | %s | %s / %s |", c.Index,
				runsText(se, se.MBps, "%.1f"), runsText(me, me.MBps, "%.1f"), eosRatioText(se, me, func(s toolSummary) float64 { return s.MBps.Median }, "%.2f×"),
				runsText(se, se.CPUPerGB, "%.2f"), runsText(me, me.CPUPerGB, "%.2f"), eosRatioText(se, me, func(s toolSummary) float64 { return s.CPUPerGB.Median }, "%.3f"),
				runsText(se, se.FirstRecordS, "%.2f"), runsText(me, me.FirstRecordS, "%.2f"))
		}
	}
	w("")
	w("Backlogs: %s. compression.type *unset* writes no key: a Kafka producer then defaults to none, so MM2 writes uncompressed batches, while Strait forwards each batch in its source codec.", res.backlogsText())
}

// eosSummaries returns the cell's exactly-once variants (a zero summary for one that did
// not run); ok is false when neither ran.
func (c cellResult) eosSummaries() (strait, mm2 toolSummary, ok bool) {
	strait, okS := c.Summary[toolStraitEOS]
	mm2, okM := c.Summary[toolMM2EOS]
	return strait, mm2, okS || okM || c.Failed[toolStraitEOS] > 0 || c.Failed[toolMM2EOS] > 0
}

// eosRatioText is Strait's exactly-once figure over MM2's, "–" unless both ran.
func eosRatioText(s, m toolSummary, v func(toolSummary) float64, format string) string {
	if s.Runs == 0 || m.Runs == 0 || v(m) == 0 {
		return "–"
	}
	return fmt.Sprintf(format, v(s)/v(m))
}

// eosCostText is the targets column of an exactly-once row: each replicator's
// exactly-once medians over its at-least-once ones.
func eosCostText(c cellResult) string {
	var out []string
	for _, t := range []string{toolStrait, toolMM2} {
		if e, ok := c.EOSCost[t]; ok {
			out = append(out, fmt.Sprintf("%s exactly-once / at-least-once: throughput %.2f×, CPU/GB %.2f×, RSS %.2f×", toolLabel(t), e.SteadyMBps, e.SteadyCPUPerGB, e.PeakRSS))
		}
	}
	for _, t := range []string{toolStraitEOS, toolMM2EOS} {
		if n := c.Failed[t]; n > 0 {
			out = append(out, fmt.Sprintf("**%s: %d of %d runs failed**", t, n, n+c.Summary[t].Runs))
		}
	}
	if len(out) == 0 {
		return "–"
	}
	return strings.Join(out, "; ")
}

// toolLabel is a tool's name in prose.
func toolLabel(t string) string {
	switch t {
	case toolStrait:
		return "Strait"
	case toolMM2:
		return "MM2"
	case toolStraitEOS:
		return "Strait exactly-once"
	case toolMM2EOS:
		return "MM2 exactly-once"
	case toolMM2Default:
		return "MM2 at defaults"
	case toolStraitDefault:
		return "Strait at defaults"
	}
	return t
}

// eosTable sets each replicator's exactly-once runs beside its at-least-once runs of the
// same cell: what exactly-once costs, measured on the same backlog in alternating runs.
func (res *results) eosTable(w func(string, ...any)) {
	var cells []cellResult
	for _, c := range res.Cells {
		if _, _, ok := c.eosSummaries(); ok {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return
	}
	flush := "Strait's default of 1 s"
	if ms := res.Params.MM2.OffsetFlushMs; ms > 0 {
		flush = fmt.Sprintf("%d ms (-offset-flush-ms)", ms)
	}
	w("")
	w("### The cost of exactly-once")
	w("")
	w("Each replicator's exactly-once runs beside its at-least-once runs of the same cell, the runs alternating on one backlog. Strait's exactly-once mode (`strait.exactly.once = true`) writes B inside transactions that commit every `offset.flush.interval.ms`, here %s, each with the records, the offset index and the progress. MM2's (`exactly.once.source.support = enabled`, internal REST on, source read_committed; its log must show transactional task producers) commits one transaction per task poll. A copy in exactly-once mode is complete when a read_committed reader of B sees every record: the harness polls the last stable offsets and, once they reach the record counts, reads B read_committed up to them and counts the records, passing over the transaction markers that take offsets of their own (complete.go). Each such run must leave markers on B (high watermark above the records in every partition), or it fails. Steady figures count from the first record written to B, committed or not, to that moment, so they include the wait for the last commit.", flush)
	w("")
	w("| # | workload | replicator | at-least-once MB/s | exactly-once MB/s | ratio | at-least-once CPU s/GB | exactly-once CPU s/GB | ratio | at-least-once peak RSS MiB | exactly-once peak RSS MiB | ratio | exactly-once: cores busy (tool / A / B) | exactly-once: offsets on B per record |")
	w("|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, c := range cells {
		for _, t := range []string{toolStrait, toolMM2} {
			v := eosVariant(t)
			plain, eos := c.Summary[t], c.Summary[v]
			if eos.Runs == 0 && c.Failed[v] == 0 {
				continue
			}
			e, ok := c.EOSCost[t]
			ratio := func(x float64, format string) string {
				if !ok {
					return "–"
				}
				return fmt.Sprintf(format, x)
			}
			w("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", c.Index, c.Name, toolLabel(t),
				runsText(plain, plain.SteadyMBps, "%.1f"), runsText(eos, eos.SteadyMBps, "%.1f"), ratio(e.SteadyMBps, "%.2f×"),
				runsText(plain, plain.SteadyCPUPerGB, "%.2f"), runsText(eos, eos.SteadyCPUPerGB, "%.2f"), ratio(e.SteadyCPUPerGB, "%.2f×"),
				runsText(plain, plain.PeakRSSMiB, "%.0f"), runsText(eos, eos.PeakRSSMiB, "%.0f"), ratio(e.PeakRSS, "%.2f×"),
				coresText(c.Copies, v), offsetsPerRecordText(c.Copies, v))
		}
	}
}

// offsetsPerRecordText is the median over tool's good runs of B's offsets per record at
// completion: 1 plus the transaction markers (and aborted records) per record.
func offsetsPerRecordText(copies []copyResult, tool string) string {
	var xs []float64
	for _, cp := range copies {
		if cp.Tool == tool && cp.Error == "" && cp.TargetRecords > 0 && cp.TargetOffsets > 0 {
			xs = append(xs, float64(cp.TargetOffsets)/float64(cp.TargetRecords))
		}
	}
	if len(xs) == 0 {
		return "–"
	}
	return statText(statOf(xs), "%.5f")
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

// brokerLoadTable shows, per cell and tool, the CPU seconds per GB copied that the tool
// cost itself, broker A and broker B, and broker B's under Strait over under MM2: issue
// 23 asks for broker B's CPU per GB no higher than under MM2, and a cell where Strait's is
// higher is flagged.
func (res *results) brokerLoadTable(w func(string, ...any)) {
	if res.Params.Matrix == matrixNone || !res.anyCopies() {
		return
	}
	w("")
	w("### Broker load per GB")
	w("")
	w("CPU seconds per GB of payload copied (10^9 bytes of key + value, as every CPU s/GB here) of the replicator, broker A and broker B, over each run's whole copy (process start to complete, the window the brokers' CPU is read over: the replicator's figure is the totals' CPU s/GB, with startup); median of the runs [min–max]. A broker's CPU counts everything it did meanwhile: the tool's fetches, produces, metadata, group and offset traffic, MM2's internal topics, and the broker's own background work, which a longer copy (MM2's startup) adds more of. The last column is broker B's CPU per GB under Strait over under MM2 (of the medians; in an exactly-once row, over MM2 exactly-once); issue 23's target is at most 1, and **bold** marks a cell where Strait costs broker B more (*ranges overlap*: the runs' ranges overlap, so the difference may be noise).")
	w("")
	w("| # | workload | replicator | replicator CPU s/GB | broker A CPU s/GB | broker B CPU s/GB | broker B: Strait / MM2 |")
	w("|--:|---|---|--:|--:|--:|--:|")
	var flagged []string
	for _, c := range res.Cells {
		name := c.Name
		for _, t := range allTools {
			s, ok := c.Summary[t]
			if !ok {
				continue
			}
			broker := func(k string) string {
				if v, ok := s.BrokerCPUPerGB[k]; ok {
					return statText(v, "%.2f")
				}
				return "–"
			}
			ratio := ""
			if baseTool(t) == toolStrait {
				peer := toolMM2
				if t == toolStraitEOS {
					peer = toolMM2EOS
				}
				ratio = "–"
				if r, above, overlap, ok := brokerBLoad(s, c.Summary[peer]); ok {
					ratio = brokerBRatioText(r, above, overlap)
					if above && t == toolStraitEOS {
						flagged = append(flagged, fmt.Sprintf("#%d (exactly-once)", c.Index))
					} else if above {
						flagged = append(flagged, fmt.Sprintf("#%d", c.Index))
					}
				}
			}
			w("| %d | %s | %s | %s | %s | %s | %s |", c.Index, name, toolLabel(t), statText(s.CPUPerGB, "%.2f"), broker("a"), broker("b"), ratio)
			name = "" // the workload once per cell
		}
	}
	w("")
	if len(flagged) == 0 {
		w("Broker B's CPU per GB under Strait is no higher than under MM2 in every cell where both have the figure.")
	} else {
		w("**Strait costs broker B more CPU per GB than MM2 in %s.**", strings.Join(flagged, ", "))
	}
}

// brokerBRatioText is the broker-B column of brokerLoadTable: the ratio, bold with a
// flag when Strait's median is the higher.
func brokerBRatioText(r float64, above, overlap bool) string {
	if !above {
		return fmt.Sprintf("%.2f", r)
	}
	if overlap {
		return fmt.Sprintf("**%.2f, higher** (ranges overlap)", r)
	}
	return fmt.Sprintf("**%.2f, higher**", r)
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
	_, okS := c.Summary[toolStrait]
	_, okM := c.Summary[toolMM2]
	if !okS || !okM {
		return "–"
	}
	return fmt.Sprintf(format, r)
}

// failedText names the failed runs of a cell, and runs that left more records on B than
// the source holds (duplicates), for the targets column.
func failedText(c cellResult) string {
	var out []string
	for _, t := range allTools {
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

// chartColors are the bars' colours per tool: each exactly-once variant a lighter shade
// of its replicator's.
var chartColors = map[string]string{toolStrait: "#1f77b4", toolStraitEOS: "#9ecae1", toolMM2: "#ff7f0e", toolMM2EOS: "#fdbe85", toolMM2Default: "#7f7f7f", toolStraitDefault: "#17becf", toolStraitKeep: "#2ca02c"}

// chartSVG draws the steady-state throughput of both tools (and of their exactly-once
// variants where a cell ran them) per cell as horizontal bars (median) with a line over
// the range of the runs. Written by hand rather than with
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
	// Every cell has a bar per tool that ran in it: Strait and MM2, and the
	// exactly-once variants where a cell ran them.
	bars := func(c cellResult) []string {
		var out []string
		for _, t := range allTools {
			if _, ok := c.Summary[t]; ok || t == toolStrait || t == toolMM2 {
				out = append(out, t)
			}
		}
		return out
	}
	var tops []int
	bottom := chartTop
	used := map[string]bool{}
	for _, c := range res.Cells {
		tops = append(tops, bottom)
		for _, t := range bars(c) {
			used[t] = true
		}
		bottom += len(bars(c))*chartBarH + chartCellGap
	}
	height := bottom + 40
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`, chartWidth, height, chartWidth, height, chartAxisFont)
	f(`<rect width="100%%" height="100%%" fill="white"/>`)
	f(`<text x="%d" y="18" font-size="14" font-weight="bold">Steady-state throughput per cell, MB/s of payload (median of %d runs; line: range)</text>`, 10, res.Params.Runs)
	lx := chartLabelW
	for _, t := range allTools {
		if !used[t] {
			continue
		}
		f(`<rect x="%d" y="28" width="12" height="10" fill="%s"/><text x="%d" y="37">%s</text>`, lx, chartColors[t], lx+16, toolLabel(t))
		lx += 30 + 7*len(toolLabel(t))
	}
	for i := 0; i <= 4; i++ {
		v := maxV * float64(i) / 4
		f(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`, x(v), chartTop-4, x(v), bottom)
		f(`<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%g</text>`, x(v), bottom+14, v)
	}
	for i, c := range res.Cells {
		y0 := tops[i]
		f(`<text x="%d" y="%d" text-anchor="end">%s</text>`, chartLabelW-6, y0+chartBarH+4, html.EscapeString(fmt.Sprintf("%d. %s", c.Index, c.Name)))
		for j, t := range bars(c) {
			s, ok := c.Summary[t]
			if !ok {
				continue
			}
			y := y0 + j*chartBarH
			f(`<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`, chartLabelW, y, x(s.SteadyMBps.Median)-chartLabelW, chartBarH-1, chartColors[t])
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

// distanceTable renders the distance cells: each tool's steady throughput across the
// link, Strait against MM2 as tuned and at its defaults, and against the link's own limit.
func (res *results) distanceTable(w func(string, ...any)) {
	var cells []cellResult
	for _, c := range res.Cells {
		if c.Workload.Link != nil && (len(c.Copies) > 0 || len(c.Limits) > 0) {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return
	}
	w("")
	w("## Distance: cluster A behind a latency proxy, %d runs per tool", res.Params.Runs)
	w("")
	w("The tools run near the target, as both tools' docs advise: every connection of a tool to cluster A, and of the link-limit probe, crosses an in-process toxiproxy that adds half the round trip on each direction and, in capped cells, lets at most the cap through each direction, over all connections together. Connections to B, the brokers' own traffic and the harness's preload and offset reads are direct. Steady throughput is MB/s of payload from the first record on B to the complete copy, median [min–max] of the runs; ratios are of the medians. *MM2 tuned* is `mm2`, with the file of the tables above and bench/README.md's *How MM2 is tuned*; *MM2 at defaults* is `mm2-default`, whose file holds only the clusters, the topics and the replication factors; *Strait at defaults* (`strait-default`) reads that same file, and *Strait, tuned file* (`strait`) MM2 tuned's, whose 4 MiB max.partition.fetch.bytes is then every fetch's ask, where at its defaults Strait's asks grow with the link. *Link limit* is one franz-go consumer alone (4 MiB per partition, 64 MiB per fetch) reading the same backlog across the same proxy, right after the preload.")
	w("")
	w("| # | link | workload | Strait at defaults MB/s | Strait, tuned file MB/s | MM2 tuned MB/s | MM2 at defaults MB/s | link limit MB/s | Strait at defaults / link limit | Strait at defaults / MM2 at defaults | Strait at defaults / MM2 tuned | Strait / MM2, tuned file | notes |")
	w("|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, c := range cells {
		sd, s, m, d := c.Summary[toolStraitDefault], c.Summary[toolStrait], c.Summary[toolMM2], c.Summary[toolMM2Default]
		f := c.Link
		if f == nil {
			f = linkFiguresOf(c.Summary, c.Limits)
		}
		num := func(v float64, format string) string {
			if v == 0 {
				return "–"
			}
			return fmt.Sprintf(format, v)
		}
		notes := strings.TrimPrefix(failedText(c)+shortWindowsText(c), "; ")
		w("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", c.Index, c.Workload.Link.text(), c.Workload.data(),
			runsText(sd, sd.SteadyMBps, "%.1f"), runsText(s, s.SteadyMBps, "%.1f"), runsText(m, m.SteadyMBps, "%.1f"), runsText(d, d.SteadyMBps, "%.1f"),
			num(f.LimitMBps, "%.1f"), num(100*f.DefaultOfLimit, "%.0f%%"), num(f.DefaultOverMM2Default, "%.2f×"), num(f.DefaultOverMM2, "%.2f×"),
			num(f.StraitOverMM2, "%.2f×"), notes)
	}
	w("")
	w("Bytes from A across the link per byte of payload (median of the runs; record batch headers, and each tool's other reads of A): %s.", linkBytesText(cells))
}

// minSteadyWindow is the shortest steady window (first record to the last) a distance
// figure is shown without a warning: the first fetch's records (33 MB for 8 partitions)
// count in it without the time they took, so a backlog of a few fetches, as in a trial
// with a small -matrix-scale, gives figures far above the link's.
const minSteadyWindow = 1.0 // seconds

// shortWindowsText names, for the notes of a distance cell, the tools (median of their
// runs) and the link-limit probe whose steady window was shorter than minSteadyWindow.
func shortWindowsText(c cellResult) string {
	var short []string
	for _, l := range c.Limits {
		if l.Name == limitLink && l.FirstRecordSeconds > 0 {
			if d := l.Seconds - l.FirstRecordSeconds; d < minSteadyWindow {
				short = append(short, fmt.Sprintf("link limit %.2f s", d))
			}
		}
	}
	for _, t := range allTools {
		var xs []float64
		for _, cp := range c.Copies {
			if cp.Tool == t && cp.Error == "" {
				xs = append(xs, cp.WallSeconds-cp.FirstRecordSeconds)
			}
		}
		if len(xs) > 0 {
			if d := statOf(xs).Median; d < minSteadyWindow {
				short = append(short, fmt.Sprintf("%s %.2f s", t, d))
			}
		}
	}
	if len(short) == 0 {
		return ""
	}
	return fmt.Sprintf("; **steady window under %.0f s (%s): the backlog is a few fetches, too small for a figure; raise -matrix-scale**", minSteadyWindow, strings.Join(short, ", "))
}

// linkBytesText is, per tool, the median bytes that crossed the link from A per byte of
// payload over the distance cells' good runs.
func linkBytesText(cells []cellResult) string {
	var out []string
	for _, t := range allTools {
		var xs []float64
		for _, c := range cells {
			for _, cp := range c.Copies {
				if cp.Tool == t && cp.Error == "" && cp.PayloadBytes > 0 && cp.LinkBytesDown > 0 {
					xs = append(xs, float64(cp.LinkBytesDown)/float64(cp.PayloadBytes))
				}
			}
		}
		if len(xs) > 0 {
			out = append(out, fmt.Sprintf("%s %.3f", toolLabel(t), statOf(xs).Median))
		}
	}
	if len(out) == 0 {
		return "–"
	}
	return strings.Join(out, ", ")
}
