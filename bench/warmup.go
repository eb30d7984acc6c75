package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// warmupRecords is the backlog of the warm-up copy: 300 MB of 1 KiB records.
const warmupRecords = 300_000

// warmupResult is the brokers' warm-up.
type warmupResult struct {
	Bytes   int64   `json:"payload_bytes"`
	Seconds float64 `json:"seconds"`
}

// warmBrokers runs one unmeasured Strait copy of a 1 KiB × 8 partition
// backlog before the first cell. A broker's JVM compiles its produce and
// fetch paths under the load it serves, so the first copy of the first
// cell, always a Strait run, met brokers that were still compiling: in
// cell 1 broker B spent 1.4 s of CPU on that run against 0.5 s on the next
// Strait run, which copied at 2.4 times the rate (and writes and reads by
// a franz-go client alone did not warm them enough). MM2's first run
// already comes after a Strait run; with this, Strait's does too.
func (r *runner) warmBrokers(ctx context.Context) (*warmupResult, error) {
	straitRuns := slices.ContainsFunc(r.p.Tools, func(t string) bool { return baseTool(t) == toolStrait })
	if !straitRuns && r.p.Mode != modeNodes {
		return nil, nil
	}
	began := time.Now()
	ts := singleTopic("bench-warmup", 8)
	g := newGenerator(1024, 0, 8)
	load, ends, err := r.preload(ctx, g, ts, warmupRecords, "none", false, 0)
	if err != nil {
		return nil, fmt.Errorf("preloading the warm-up topic: %w", err)
	}
	defer r.deleteTopics(ctx, r.src, ts.names)
	cp, err := r.copyRun(ctx, toolStrait, ts, "", ends, ends, load.PayloadBytes) // compression.type unset
	if err != nil {
		return nil, fmt.Errorf("the warm-up copy: %w", err)
	}
	r.deleteTopics(ctx, r.dst, []string{cp.RemoteTopic})
	return &warmupResult{Bytes: load.PayloadBytes, Seconds: time.Since(began).Seconds()}, nil
}

// warmUp warms the brokers up (warmBrokers) and records it in the results.
func (r *runner) warmUp(ctx context.Context) error {
	wu, err := r.warmBrokers(ctx)
	if err != nil {
		return fmt.Errorf("warming the brokers up: %w", err)
	}
	if wu != nil {
		r.res.Warmup = wu
		r.log.Info("brokers warmed up", "payload_mb", wu.Bytes/1e6, "seconds", wu.Seconds)
	}
	return nil
}
