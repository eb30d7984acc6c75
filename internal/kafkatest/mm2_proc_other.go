//go:build !unix

package kafkatest

import "syscall"

// mm2ProcAttr has no process groups to set up outside Unix.
func mm2ProcAttr() *syscall.SysProcAttr { return nil }
