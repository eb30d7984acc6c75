package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Target compression modes of a cell: what the file says for the target producer's
// compression.type.
const (
	targetUnset     = "unset"     // nothing written: MM2 writes uncompressed, Strait keeps each batch's codec
	targetSame      = "same"      // the source codec
	targetDifferent = "different" // another codec than the source's (differentCodec)
)

// Matrix sizes (-matrix).
const (
	matrixNone    = ""
	matrixReduced = "reduced"
	matrixFull    = "full"
	// matrixDistance is cluster A behind a latency proxy (link.go): the tools run near
	// the target and reach the source across a long link.
	matrixDistance = "distance"
)

// mm2TasksCap bounds tasks.max when -mm2-tasks is 0: one task per partition up to this
// many. Every task has its own consumer and producer; past a few per core they only add
// threads and startup time on this 2-core machine (512 tasks would start 1,024 clients).
const mm2TasksCap = 16

// codecs are the five compression.type values of Kafka.
var codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// differentCodec is the target codec of a "different" cell: a common codec other than src.
func differentCodec(src string) string {
	switch src {
	case "snappy", "lz4":
		return "zstd"
	default:
		return "lz4"
	}
}

// workload is one cell of the matrix: the source data and the target's compression.type.
type workload struct {
	// Cell is the cell's number in its matrix, from 1 (-matrix-cells picks by it).
	Cell       int `json:"cell"`
	RecordSize int `json:"record_size_bytes"`
	// Partitions is per topic; Topics topics of Partitions each make the source.
	Partitions int    `json:"partitions"`
	Topics     int    `json:"topics"`
	Codec      string `json:"codec"`
	// Mixed makes every partition's batches alternate between uncompressed and Codec, as
	// franz-go and librdkafka producers write when compression does not shrink a batch.
	Mixed bool `json:"mixed_codecs"`
	// Target is unset, same or different; TargetCodec is the compression.type written
	// ("" for unset).
	Target      string `json:"target"`
	TargetCodec string `json:"target_codec"`
	Records     int    `json:"records"`
	// Limits runs the franz-go client limits after this cell's preload.
	Limits bool `json:"client_limits"`
	// EOS are exactly-once variants (strait-eos, mm2-eos) the cell runs besides the
	// tools of -tools, each right after its replicator in default mode: the
	// matrix's exactly-once row, on the same backlog.
	EOS []string `json:"exactly_once_variants,omitempty"`
	// Link puts cluster A behind the latency proxy for the tools and the link-limit
	// probe (a distance cell); nil: loopback.
	Link *linkSpec `json:"link,omitempty"`
}

// tools are the tools the cell runs in each round, in order: those of -tools, each
// followed by its exactly-once variant when the cell has one (and -tools does not
// already name it).
func (w workload) tools(base []string) []string {
	var out []string
	for _, t := range base {
		out = append(out, t)
		if v := eosVariant(t); slices.Contains(w.EOS, v) && !slices.Contains(base, v) {
			out = append(out, v)
		}
	}
	return out
}

// newWorkload builds a cell, resolving the target codec from the mode.
func newWorkload(size, partitions, topics int, codec string, mixed bool, target string, records int) workload {
	w := workload{RecordSize: size, Partitions: partitions, Topics: topics, Codec: codec, Mixed: mixed, Target: target, Records: records}
	switch target {
	case targetSame:
		w.TargetCodec = codec
	case targetDifferent:
		w.TargetCodec = differentCodec(codec)
	}
	return w
}

// data is the cell's records and codecs, e.g. "1 KiB × 8p, lz4 → zstd (different)".
func (w workload) data() string {
	parts := fmt.Sprintf("%dp", w.Partitions)
	if w.Topics > 1 {
		parts = fmt.Sprintf("%d topics × %dp", w.Topics, w.Partitions)
	}
	src := w.Codec
	if w.Mixed {
		src = "none+" + w.Codec + " mixed"
	}
	dst := "unset"
	if w.Target != targetUnset {
		dst = w.TargetCodec + " (" + w.Target + ")"
	}
	return fmt.Sprintf("%s × %s, %s → %s", sizeText(w.RecordSize), parts, src, dst)
}

// name is the cell's label in tables and charts, e.g. "1 KiB × 8p, lz4 → zstd (different)",
// with the link of a distance cell: "1 KiB × 8p, none → unset, RTT 150 ms, uncapped".
func (w workload) name() string {
	if w.Link != nil {
		return w.data() + ", " + w.Link.text()
	}
	return w.data()
}

// totalPartitions is the partitions of every source topic together.
func (w workload) totalPartitions() int { return w.Partitions * w.Topics }

// withLimits makes every single-topic cell measure what a client alone writes into B: on
// 2 cores shared by both brokers, that ceiling, not the replicator, often bounds a cell
// (ceilingsTable).
func withLimits(cells []workload) {
	for i := range cells {
		cells[i].Limits = cells[i].Topics == 1
	}
}

// hasLimitTarget reports whether the cell carries the target of 90% of the
// produce-only limit: 1 KiB uncompressed records into 8 partitions, compression.type unset.
func (w workload) hasLimitTarget() bool {
	return w.Link == nil && w.RecordSize == 1024 && w.Partitions == 8 && w.Topics == 1 && w.Codec == "none" && !w.Mixed && w.Target == targetUnset
}

// landingCodec is the codec Strait writes to B: the target's compression.type, or each
// batch's own when it is unset (the source codec; a mixed source's is none or Codec).
func (w workload) landingCodec() string {
	if w.TargetCodec != "" {
		return w.TargetCodec
	}
	return w.Codec
}

// payloadMB is about what the cell's backlog weighs (values plus keys of about 8 bytes).
func (w workload) payloadMB() float64 { return float64(w.Records) * float64(w.RecordSize+8) / 1e6 }

// straitPath is the path Strait takes for the cell by its documented rules: the fast path,
// which recompresses a batch whose codec is not the compression.type, unless
// strait.fast.path=false (no cell has a compacted or LogAppendTime source). A Strait log
// that shows partitions continuing on the record path turns it into "record" (cells.go).
func (w workload) straitPath(straitProps string) string {
	if strings.Contains(strings.ReplaceAll(straitProps, " ", ""), "strait.fast.path=false") {
		return "record"
	}
	return "fast"
}

func sizeText(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// recordsFor returns the records of about mb megabytes of payload of size-byte records.
func recordsFor(mb float64, size int) int { return max(1, int(mb*1e6/float64(size+8))) }

// reducedMatrix is the default -matrix: every axis at least once, sized to finish in 15
// minutes on 2 cores with 3 runs per tool (see estimate). scale multiplies every backlog.
func reducedMatrix(scale float64) []workload {
	n := func(mb float64, size int) int { return recordsFor(mb*scale, size) }
	cells := []workload{
		newWorkload(1024, 8, 1, "none", false, targetUnset, n(300, 1024)),
		newWorkload(100, 64, 1, "lz4", false, targetSame, n(40, 100)),
		newWorkload(16384, 8, 1, "zstd", false, targetDifferent, n(300, 16384)),
		newWorkload(1024, 512, 1, "snappy", false, targetDifferent, n(150, 1024)),
		newWorkload(100, 8, 1, "gzip", false, targetUnset, n(30, 100)),
		newWorkload(1024, 64, 1, "snappy", true, targetSame, n(150, 1024)),
		newWorkload(1024, 1, 2000, "lz4", false, targetUnset, n(100, 1024)),
	}
	withLimits(cells)
	return cells
}

// fullMatrix is -matrix full: every record size × partition count × codec × target mode,
// a mixed-codec source and 2,000 topics of one partition.
func fullMatrix(scale float64) []workload {
	var cells []workload
	mb := map[int]float64{100: 40, 1024: 200, 16384: 300}
	for _, size := range []int{100, 1024, 16384} {
		for _, parts := range []int{8, 64, 512} {
			for _, c := range codecs {
				for _, t := range []string{targetUnset, targetSame, targetDifferent} {
					cells = append(cells, newWorkload(size, parts, 1, c, false, t, recordsFor(mb[size]*scale, size)))
				}
			}
		}
	}
	cells = append(cells,
		newWorkload(1024, 64, 1, "snappy", true, targetSame, recordsFor(150*scale, 1024)),
		newWorkload(1024, 1, 2000, "lz4", false, targetUnset, recordsFor(100*scale, 1024)))
	withLimits(cells)
	return cells
}

// distanceMatrix is -matrix distance: 1 KiB uncompressed records into 8 partitions, 500 MB
// (times scale), behind a link of each round trip of rtts, uncapped and then capped at
// mbps (no capped cells when 0), and one cell of 64 partitions at the longest round trip,
// uncapped: how the tools' fetch concurrency grows with partitions across the link.
func distanceMatrix(scale float64, rtts []duration, mbps float64) []workload {
	var cells []workload
	cell := func(partitions int, link linkSpec) workload {
		w := newWorkload(1024, partitions, 1, "none", false, targetUnset, recordsFor(distanceMB*scale, 1024))
		w.Link, w.Limits = &link, true
		return w
	}
	var longest duration
	for _, rtt := range rtts {
		cells = append(cells, cell(8, linkSpec{RTT: rtt}))
		if mbps > 0 {
			cells = append(cells, cell(8, linkSpec{RTT: rtt, MBps: mbps}))
		}
		longest.Duration = max(longest.Duration, rtt.Duration)
	}
	if len(rtts) > 0 {
		cells = append(cells, cell(64, linkSpec{RTT: longest}))
	}
	return cells
}

// distanceMB is a distance cell's backlog: enough for a steady figure at 100 MB/s.
const distanceMB = 500

// Rough rates of this 2-core machine behind estimate, from the runs in bench/results.
const (
	estClusters       = 25 * time.Second // two brokers start
	estWarmup         = 12 * time.Second // warmBrokers
	estPreloadMBps    = 120
	estStraitStart    = 2 * time.Second
	estStraitMBps     = 120
	estMM2Start       = 10 * time.Second // JVM, Connect herder, connector and tasks: 6-8 s to the first record in the matrix of 20261202-002458
	estMM2MBps        = 60
	estMM2Stop        = 4 * time.Second
	estManyTopicsMM2  = 30 * time.Second // MM2 creating and assigning 2,000 remote topics
	estSmallRecFactor = 3                // 100 B records move this many times fewer MB/s
	// Exactly-once variants: Strait commits a transaction every second and the
	// harness then counts the records a read_committed reader sees (complete.go);
	// MM2 commits one per task poll (KIP-618's default boundary) after a fencing round.
	estStraitEOSMBps = 90
	estCountMBps     = 300
	estMM2EOSStart   = 20 * time.Second
	estMM2EOSMBps    = 25
	// The nodes mode: a fresh transactional preload per run, the nodes' start until
	// they share the flow, and the copy.
	estNodesShare = 12 * time.Second
	estNodesMBps  = 120
	// Distance cells: MM2 without its tuning (one task, 1 MiB per partition fetches,
	// 16 KiB batches), a consumer alone, and what a reader has in flight per round
	// trip (linkRate): 4 MiB per partition, at most fetch.max.bytes (50 MiB; the
	// probe's 64 MiB is capped by the broker's own fetch.max.bytes, 55 MiB).
	estMM2DefaultMBps   = 40
	estConsumeMBps      = 300
	estPartitionFetchMB = 4.19
	estFetchMaxMB       = 52.4
	estProbeFetchMB     = 57.7
	// Round trips to A before the first record reaches B: 3.3 s for Strait and 14.4 s
	// for MM2 at 150 ms, against 1.4 s and 8 s on loopback.
	estStraitStartRTTs = 13
	estMM2StartRTTs    = 40
)

// linkRate is a rough steady rate across link of a reader that copies at mbps on loopback
// and has window MB in flight per round trip: one window per round trip plus the time to
// move it, at most the link's cap. Without a link it is mbps.
func linkRate(mbps, window float64, link *linkSpec) float64 {
	if link == nil {
		return mbps
	}
	if link.MBps > 0 {
		mbps = min(mbps, link.MBps)
	}
	return min(mbps, window/(link.RTT.Seconds()+window/mbps))
}

// linkStart is the start of a tool that needs rtts round trips to A before its first
// record reaches B (metadata, offsets, group and topic set-up).
func linkStart(rtts int, link *linkSpec) time.Duration {
	if link == nil {
		return 0
	}
	return time.Duration(rtts) * link.RTT.Duration
}

// estimate is how long the cells take with runs runs per tool, plus the clusters and the
// latency cell: a forecast printed at the start, compared with the real duration at the end.
func estimate(cells []workload, runs int, tools []string, latency time.Duration) time.Duration {
	total := estClusters + latency
	if len(cells) > 0 {
		total += estWarmup
	}
	for _, w := range cells {
		mb := w.payloadMB()
		slow := 1.0
		if w.RecordSize < 1024 {
			slow = estSmallRecFactor
		}
		secs := func(mbps float64) time.Duration { return time.Duration(mb * slow / mbps * float64(time.Second)) }
		// across: the rate across the cell's link of a reader with window MB in flight.
		across := func(mbps, window float64) float64 { return linkRate(mbps, window, w.Link) }
		fetchAll := float64(w.totalPartitions()) * estPartitionFetchMB
		total += 2*time.Second + secs(estPreloadMBps)
		switch {
		case w.Limits && w.Link != nil:
			total += secs(across(estConsumeMBps, min(fetchAll, estProbeFetchMB)))
		case w.Limits:
			total += 2 * secs(estPreloadMBps)
		}
		for _, t := range w.tools(tools) {
			var one time.Duration
			switch t {
			case toolStrait, toolStraitDefault:
				one = estStraitStart + linkStart(estStraitStartRTTs, w.Link) + secs(across(estStraitMBps, min(fetchAll, estFetchMaxMB))) + time.Second
			case toolStraitEOS:
				one = estStraitStart + secs(estStraitEOSMBps) + secs(estCountMBps) + time.Second
			case toolMM2:
				one = estMM2Start + linkStart(estMM2StartRTTs, w.Link) + secs(across(estMM2MBps, fetchAll)) + estMM2Stop
			case toolMM2EOS:
				one = estMM2EOSStart + secs(estMM2EOSMBps) + secs(estCountMBps) + estMM2Stop
			case toolMM2Default:
				one = estMM2Start + linkStart(estMM2StartRTTs, w.Link) + secs(across(estMM2DefaultMBps, min(fetchAll/4, estFetchMaxMB))) + estMM2Stop
			}
			if baseTool(t) == toolMM2 && w.Topics > 1 {
				one += estManyTopicsMM2
			}
			total += time.Duration(runs) * one
		}
	}
	return total
}

// latencyEstimate is -runs latency runs per tool: start, warm-up, window, the last records.
func latencyEstimate(p params) time.Duration {
	if !p.has(phaseLatency) {
		return 0
	}
	var d time.Duration
	for _, t := range p.Tools {
		start := estStraitStart
		if baseTool(t) == toolMM2 {
			start = estMM2Start + estMM2Stop
		}
		d += start + p.LatencyWarmup.Duration + p.LatencyDuration.Duration + 3*time.Second
	}
	return time.Duration(p.Runs) * d
}

// nodesEstimate is how long the nodes mode takes: the clusters, the warm-up, and per
// run a preload, the nodes' start until they share the flow, and the copy.
func nodesEstimate(p params) time.Duration {
	mb := float64(p.Records) * float64(p.RecordSize+8) / 1e6
	secs := func(mbps float64) time.Duration { return time.Duration(mb / mbps * float64(time.Second)) }
	one := 2*time.Second + secs(estPreloadMBps) + estNodesShare + secs(estNodesMBps) + 2*time.Second
	return estClusters + estWarmup + time.Duration(p.Runs*len(p.Nodes))*one
}
