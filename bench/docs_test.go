package main

import (
	"strings"
	"testing"
)

// TestDocsMatchLatestReports fails when a generated section of the README or
// docs/performance.md differs from what the reports matrix-latest.md and
// distance-latest.md point at give: a new report, or a hand edit of a figure, without
// `go run ./bench -docs`.
func TestDocsMatchLatestReports(t *testing.T) {
	files, l, err := renderDocs("..", "results")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.want != f.have {
			t.Errorf("%s is not what the latest reports (%s, %s) give: run go run ./bench -docs", f.path, l.MatrixName, l.DistanceName)
		}
		if !strings.Contains(f.have, "<!-- bench:") {
			t.Errorf("%s has no generated section", f.path)
		}
	}
	for name, body := range l.docSections() {
		if strings.Contains(body, "NaN") || strings.Contains(body, "Inf") || strings.TrimSpace(body) == "" {
			t.Errorf("section %s renders a missing figure:\n%s", name, body)
		}
	}
}

func TestSpliceSections(t *testing.T) {
	sections := map[string]string{"a": "new\n"}
	got, err := spliceSections("x\n<!-- bench:a -->\nold\n<!-- /bench:a -->\ny\n", sections)
	if err != nil || got != "x\n<!-- bench:a -->\nnew\n<!-- /bench:a -->\ny\n" {
		t.Errorf("got %q, %v", got, err)
	}
	for doc, want := range map[string]string{
		"<!-- bench:b -->\n<!-- /bench:b -->": `no generated section is called "b"`,
		"<!-- bench:a -->\nold\n":             "has no <!-- /bench:a -->",
		"<!-- bench:a":                        "without its closing -->",
	} {
		if _, err := spliceSections(doc, sections); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one with %q", doc, err, want)
		}
	}
}

func TestPlainWorkload(t *testing.T) {
	for _, c := range []struct {
		w    workload
		want string
	}{
		{workload{RecordSize: 1024, Partitions: 8, Topics: 1, Codec: "none", Target: targetUnset}, "1 KiB × 8 partitions, uncompressed"},
		{workload{RecordSize: 100, Partitions: 64, Topics: 1, Codec: "lz4", Target: "same", TargetCodec: "lz4"}, "100 B × 64 partitions, lz4"},
		{workload{RecordSize: 16384, Partitions: 8, Topics: 1, Codec: "zstd", Target: "different", TargetCodec: "lz4"}, "16 KiB × 8 partitions, zstd → lz4"},
		{workload{RecordSize: 1024, Partitions: 64, Topics: 1, Codec: "snappy", Mixed: true, Target: "same", TargetCodec: "snappy"}, "1 KiB × 64 partitions, uncompressed and snappy → snappy"},
		{workload{RecordSize: 1024, Partitions: 1, Topics: 2000, Codec: "lz4", Target: targetUnset}, "1 KiB × 2,000 topics of 1 partition, lz4"},
	} {
		if got := plainWorkload(c.w); got != c.want {
			t.Errorf("plainWorkload(%+v) = %q, want %q", c.w, got, c.want)
		}
	}
}
