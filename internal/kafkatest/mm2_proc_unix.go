//go:build unix && !linux

package kafkatest

import "syscall"

// mm2ProcAttr puts MM2 in a process group of its own, so a terminal's Ctrl-C reaches the
// test binary only. Without Linux's Pdeathsig, a test binary that dies without stopping
// MM2 leaves it running.
func mm2ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
