package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The disk's read-ahead. Kafka preallocates every segment's offset and time
// index as a sparse 10 MiB file and maps it; the first write to a new
// partition's index faults, and Linux reads around the fault as far as the
// disk's read-ahead, zero-filling the holes. At Linux's default of 128 KiB
// that costs nothing; this project's CI machines have disks with 8,192 KiB,
// where each new partition cost its broker up to 16 MiB of zeroed page
// cache and the many-partition cells crawled (cell 4's preload of 512
// partitions took 28-47 s instead of 0.9, and the copies spread 10-fold:
// bench/results/read-ahead/). Every tool writes to new partitions alike,
// so the harness measures at Linux's default: it sets the read-ahead of
// the disk under the brokers' dir for the run (-read-ahead-kb) and puts
// the old value back at the end.

// readAheadInfo is what the run found and used.
type readAheadInfo struct {
	Device string `json:"device,omitempty"` // the sysfs file
	// FoundKB is the read-ahead before the run, UsedKB during it (equal when
	// the harness left it or could not change it), 0 when unknown.
	FoundKB int    `json:"found_kb,omitempty"`
	UsedKB  int    `json:"used_kb,omitempty"`
	Note    string `json:"note,omitempty"` // why it was not changed
}

// readAheadFile is the read_ahead_kb file of the block device dir is on.
func readAheadFile(dir string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return "", err
	}
	dev := filepath.Join("/sys/dev/block", fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
	for _, f := range []string{filepath.Join(dev, "queue", "read_ahead_kb"), filepath.Join(dev, "..", "queue", "read_ahead_kb")} {
		if _, err := os.Stat(f); err == nil {
			return f, nil // a disk, or the disk of a partition
		}
	}
	return "", fmt.Errorf("no read_ahead_kb for the device of %s (%s): not a block device", dir, dev)
}

func readKB(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// setReadAhead sets the read-ahead of the disk under dir to kb (0 leaves
// it) and returns what it found and did, and a func that puts the old
// value back. A disk it cannot change (not root, no block device) is
// measured as it is, and the report says so.
func setReadAhead(dir string, kb int) (readAheadInfo, func()) {
	file, err := readAheadFile(dir)
	if err != nil {
		return readAheadInfo{Note: err.Error()}, func() {}
	}
	return setReadAheadFile(file, kb)
}

// setReadAheadFile is setReadAhead on the disk's read_ahead_kb file.
func setReadAheadFile(file string, kb int) (readAheadInfo, func()) {
	noop := func() {}
	found, err := readKB(file)
	if err != nil {
		return readAheadInfo{Device: file, Note: err.Error()}, noop
	}
	info := readAheadInfo{Device: file, FoundKB: found, UsedKB: found}
	switch {
	case kb == 0:
		info.Note = "left as found (-read-ahead-kb 0)"
		return info, noop
	case kb == found:
		return info, noop
	}
	if err := os.WriteFile(file, []byte(strconv.Itoa(kb)), 0o644); err != nil {
		info.Note = fmt.Sprintf("could not set %d KiB: %v", kb, err)
		return info, noop
	}
	info.UsedKB = kb
	return info, func() { _ = os.WriteFile(file, []byte(strconv.Itoa(found)), 0o644) }
}

// text is the report's line on the read-ahead.
func (i readAheadInfo) text() string {
	switch {
	case i.FoundKB == 0:
		return "unknown (" + i.Note + ")"
	case i.UsedKB != i.FoundKB:
		return fmt.Sprintf("%d KiB for the run (the disk's own is %d KiB, put back after it; bench/readahead.go says why)", i.UsedKB, i.FoundKB)
	case i.Note != "":
		return fmt.Sprintf("%d KiB, the disk's own: %s", i.UsedKB, i.Note)
	}
	return fmt.Sprintf("%d KiB, the disk's own", i.UsedKB)
}
