// Command bench measures Strait against Apache MirrorMaker 2 on two local Kafka clusters
// started by scripts/kafka.sh: a backlog copy, steady-state latency, the client limits of
// franz-go alone and Strait's memory versus partitions. See bench/README.md.
//
//	go run ./bench [flags]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code (0 ok, 1 failed, 2 bad flags).
func run(args []string, stdout, stderr io.Writer) int {
	p, err := parseParams(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	if p.Docs {
		wd, err := os.Getwd()
		if err == nil {
			wd, err = findRoot(wd)
		}
		if err != nil {
			fmt.Fprintf(stderr, "bench: -docs: %v\n", err)
			return 1
		}
		out := p.OutDir
		if !filepath.IsAbs(out) {
			out = filepath.Join(wd, out)
		}
		return writeDocs(wd, out, stdout, stderr)
	}
	if p.Rerender != "" {
		return rerender(p.Rerender, p.OutDir, stdout, stderr)
	}
	// Ctrl-C cancels the run; the runner then stops the replicators and the clusters.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, nil))
	r, err := newRunner(p, log)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	res, runErr := r.run(ctx)
	if runErr != nil && (errors.Is(runErr, context.Canceled) || len(res.Cells) == 0 && len(res.Memory) == 0 && res.Nodes == nil && len(res.Scale) == 0) {
		fmt.Fprintf(stderr, "bench: %v\n", runErr) // interrupted or nothing measured: no result files
		return 1
	}
	md, files, err := res.write(r.p.OutDir)
	fmt.Fprint(stdout, md)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	log.Info("results written", "files", files)
	if res.Params.Matrix != matrixNone {
		log.Info("the README and docs/performance.md cite the latest matrix reports: go run ./bench -docs rewrites their tables")
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "bench: %v\n", runErr)
		return 1
	}
	return 0
}

// rerender rewrites a stored report from its JSON: each cell's path and targets are
// derived again from the stored runs by the current rules (a rule changed after the run,
// e.g. when Strait began recompressing on the fast path); no figure is measured anew.
func rerender(path, outDir string, stdout, stderr io.Writer) int {
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "bench: -rerender: %v\n", err)
		return 2
	}
	var res results
	if err := json.Unmarshal(b, &res); err != nil {
		fmt.Fprintf(stderr, "bench: -rerender %s: not a bench result: %v\n", path, err)
		return 2
	}
	for i := range res.Cells {
		c := &res.Cells[i]
		c.StraitPath = c.Workload.straitPath(res.Params.StraitProps)
		c.summarizeCell()
	}
	if res.Nodes != nil {
		res.Nodes.summarize()
	}
	md, files, err := res.write(outDir)
	fmt.Fprint(stdout, md)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "bench: rewrote %v\n", files)
	return 0
}
