//go:build linux

package kafkatest

import "syscall"

// mm2ProcAttr puts MM2 in a process group of its own, so a terminal's Ctrl-C reaches the
// test binary only, and has the kernel SIGKILL it when the test binary dies without
// stopping it (a panic, `go test -timeout`). Pdeathsig follows the thread that started
// the JVM; Go ends such threads only for goroutines that locked them, which tests do not.
func mm2ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
