package main

import (
	"fmt"
	"strings"
)

// nodesTable renders the nodes mode: a row per node count (median [min–max] of its
// runs), then every run with each node's share.
func (res *results) nodesTable(w func(string, ...any)) {
	nr := res.Nodes
	if nr == nil || len(nr.Runs) == 0 {
		return
	}
	p, wl := res.Params, nr.Workload
	var records, payload int64
	for _, run := range nr.Runs {
		records, payload = max(records, run.Records), max(payload, run.PayloadBytes)
	}
	w("")
	w("## Several nodes sharing one flow (Strait only), %d runs per node count", p.Runs)
	w("")
	w("The same backlog, %d records of %d B values (%.0f MB payload), %s, source codec %s, target compression.type %s, copied by 1, 2, 3... `strait run` processes started with one file: they are the members of the flow's group on B and split its partitions. Each run writes the backlog anew into a fresh topic inside one open transaction on A: Strait reads read_committed and sees none of it while the nodes start and the group settles. Once every node's API shows it stable in one generation, every partition owned by exactly one node and running in its data plane, every node ready and the remote topic on B, the harness commits and the whole backlog becomes visible to all nodes at once. So the figures leave out the nodes' start and the rebalances, for every node count alike; *steady* counts from the first record on B to the complete copy, as in the other tables. Runs alternate the node counts, each on a new flow.",
		records, wl.RecordSize, float64(payload)/1e6, partitionsText(wl), wl.Codec, targetCodecText(wl))
	w("")
	w("**This machine has %d cores**, shared by both brokers, every node and the harness: more nodes add processes, not cores. *Cores busy* is the CPU of all nodes and both brokers per second of the steady window (nodes / broker A / broker B): near %d, the machine is the bound, and a second or third node cannot copy faster here; it can only show what sharing costs. On separate machines each node brings its own cores and network.", res.Machine.Cores, res.Machine.Cores)
	w("")
	base := 0
	for _, s := range nr.Summary {
		if s.Runs > 0 {
			base = s.Nodes
			break
		}
	}
	unit := "nodes"
	if base == 1 {
		unit = "node"
	}
	w("| nodes | runs | steady MB/s | vs %d %s | MB/s from the commit | CPU s/GB, all nodes | peak RSS per node (MiB) | partitions per node | busiest node's share of the records | cores busy (nodes / A / B) | share settled after start (s) |", base, unit)
	w("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, s := range nr.Summary {
		note := ""
		if s.Failed > 0 {
			note = fmt.Sprintf(" **(%d failed)**", s.Failed)
		}
		if s.ShareMoved > 0 {
			note += fmt.Sprintf(" **(share moved during %d)**", s.ShareMoved)
		}
		if s.Runs == 0 {
			w("| %d | 0%s | – | – | – | – | – | – | – | – | – |", s.Nodes, note)
			continue
		}
		w("| %d | %d%s | %s | %.2f× | %s | %s | %s | %s | %s | %s (%.2f / %.2f / %.2f) | %s |", s.Nodes, s.Runs, note,
			statText(s.SteadyMBps, "%.1f"), s.Scaling, statText(s.MBps, "%.1f"), statText(s.SteadyCPUPerGB, "%.2f"),
			statText(s.PeakRSSMiB, "%.0f"), statText(s.PartitionsPerNode, "%.0f"), statText(pct(s.LargestShare), "%.0f%%"),
			statText(s.CoresBusy, "%.2f"), s.CoresNodes.Median, s.CoresA.Median, s.CoresB.Median, statText(s.ShareS, "%.1f"))
	}
	w("")
	w("Every run, in the order they ran (share: the backlog's partitions per node when the gate opened, * the node with the control duty):")
	w("")
	w("| run | nodes | flow | steady MB/s | MB/s from the commit | first record after the commit (s) | CPU s/GB | cores busy | share | records per node | peak RSS per node (MiB) | records on B | load average |")
	w("|--:|--:|---|--:|--:|--:|--:|--:|---|---|---|--:|---|")
	for _, run := range nr.Runs {
		if run.Error != "" {
			w("| %d | %d | %s | **failed:** %s |||||||||", run.Run, run.Nodes, run.Flow, mdCell(firstLine(run.Error)))
			continue
		}
		var share, recs, rss []string
		for _, m := range run.Members {
			mark := ""
			if m.Control {
				mark = "*"
			}
			share = append(share, fmt.Sprintf("%s=%d%s", m.Node, len(m.Partitions), mark))
			recs = append(recs, fmt.Sprint(m.Records))
			rss = append(rss, fmt.Sprintf("%.0f", float64(m.Process.PeakRSSBytes)/(1<<20)))
		}
		moved := ""
		if run.ShareChanged {
			moved = " **(moved during the copy)**"
		}
		w("| %d | %d | %s | %.1f | %.1f | %.2f | %.2f | %.2f | %s%s | %s | %s | %d | %s |", run.Run, run.Nodes, run.Flow, run.SteadyMBPerSec, run.MBPerSec,
			run.FirstRecordSeconds, run.SteadyCPUPerGB, run.CoresBusy, strings.Join(share, " "), moved, strings.Join(recs, " / "),
			strings.Join(rss, " / "), run.TargetRecords, run.LoadAvg)
	}
}

// pct turns a stat of fractions into percentages.
func pct(s stat) stat { return stat{Median: 100 * s.Median, Min: 100 * s.Min, Max: 100 * s.Max} }

// mdCell keeps text from breaking a markdown table row.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
