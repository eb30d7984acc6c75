package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the unit of utime and stime in /proc/<pid>/stat: USER_HZ, which Linux fixes at
// 100 for user space on every architecture Go runs on.
const userHZ = 100

// procStats is what the kernel accounts for one process (all its threads).
type procStats struct {
	Comm        string  `json:"comm"`
	UserSeconds float64 `json:"user_s"`
	SysSeconds  float64 `json:"sys_s"`
	// PeakRSSBytes is VmHWM: the highest resident set size the process reached.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	RSSBytes     int64 `json:"rss_bytes"`
}

// CPUSeconds is user plus system time.
func (s procStats) CPUSeconds() float64 { return s.UserSeconds + s.SysSeconds }

// readProcStats reads /proc/<pid>/stat and /proc/<pid>/status.
func readProcStats(pid int) (procStats, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStats{}, fmt.Errorf("reading the CPU time of pid %d: %w", pid, err)
	}
	st, err := parseStat(stat)
	if err != nil {
		return procStats{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procStats{}, fmt.Errorf("reading the memory of pid %d: %w", pid, err)
	}
	st.PeakRSSBytes, st.RSSBytes = parseStatus(status)
	return st, nil
}

// parseStat reads comm, utime and stime from the text of /proc/<pid>/stat. comm is in
// parentheses and may itself hold spaces and parentheses, so fields count from the last ')'.
func parseStat(b []byte) (procStats, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStats{}, fmt.Errorf("unexpected /proc stat line %q", b)
	}
	f := strings.Fields(string(b[end+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return procStats{}, fmt.Errorf("/proc stat line has %d fields after comm, want at least 13", len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	stt, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return procStats{}, fmt.Errorf("/proc stat utime %q or stime %q is not a number", f[11], f[12])
	}
	return procStats{
		Comm:        string(b[open+1 : end]),
		UserSeconds: float64(ut) / userHZ,
		SysSeconds:  float64(stt) / userHZ,
	}, nil
}

// parseStatus returns VmHWM and VmRSS in bytes from the text of /proc/<pid>/status.
func parseStatus(b []byte) (hwm, rss int64) {
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmHWM" && k != "VmRSS") {
			continue
		}
		f := strings.Fields(v) // "123456 kB"
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if k == "VmHWM" {
			hwm = n * 1024
		} else {
			rss = n * 1024
		}
	}
	return hwm, rss
}

// selfCPU returns this process's user+system CPU seconds, for the client-limit runs.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return time.Duration(t.Nano()).Seconds() }
	return tv(ru.Utime) + tv(ru.Stime)
}

// loadAvg returns the first three fields of /proc/loadavg ("0.54 0.59 1.13").
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
