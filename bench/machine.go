package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// machineInfo describes where the figures were taken.
type machineInfo struct {
	CPUModel      string `json:"cpu_model"`
	Cores         int    `json:"cores"`
	MemoryBytes   int64  `json:"memory_bytes"`
	Kernel        string `json:"kernel"`
	OSArch        string `json:"os_arch"`
	GoVersion     string `json:"go_version"`
	JavaVersion   string `json:"java_version"`
	KafkaVersion  string `json:"kafka_version"`
	StraitVersion string `json:"strait_version"`
	StraitCommit  string `json:"strait_commit"`
	// StraitDirty is true when the working tree had uncommitted changes.
	StraitDirty bool `json:"strait_dirty"`
}

// machine collects the machine's details; a detail that cannot be read says "unknown".
func machine(ctx context.Context, root, bin string) machineInfo {
	m := machineInfo{
		CPUModel:     "unknown",
		Cores:        runtime.NumCPU(),
		Kernel:       strings.TrimSpace(readString("/proc/sys/kernel/osrelease")),
		OSArch:       runtime.GOOS + "/" + runtime.GOARCH,
		GoVersion:    runtime.Version(),
		KafkaVersion: "unknown",
	}
	for line := range strings.Lines(readString("/proc/cpuinfo")) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			m.CPUModel = strings.TrimSpace(v)
			break
		}
	}
	for line := range strings.Lines(readString("/proc/meminfo")) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			m.MemoryBytes = kb * 1024
		}
	}
	m.JavaVersion = firstLine(output(ctx, "", "java", "-version"))
	// `strait version` prints "strait VERSION (commit ..., go..., os/arch)"; the commit
	// comes from git below.
	if f := strings.Fields(output(ctx, "", bin, "version")); len(f) >= 2 && f[0] == "strait" {
		m.StraitVersion = f[1]
	} else {
		m.StraitVersion = "unknown"
	}
	m.StraitCommit = strings.TrimSpace(output(ctx, root, "git", "rev-parse", "HEAD"))
	m.StraitDirty = strings.TrimSpace(output(ctx, root, "git", "status", "--porcelain", "--untracked-files=no")) != ""
	return m
}

func readString(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	return string(b)
}

// output runs a read-only command and returns its combined output ("unknown" on failure).
func output(ctx context.Context, dir, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Run(); err != nil {
		return "unknown"
	}
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
