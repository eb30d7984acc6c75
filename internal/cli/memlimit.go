package cli

import (
	"os"
	"runtime/debug"

	"strait/internal/kafkaclient"
	"strait/internal/mirror"
)

// Terms of the soft memory limit (memoryLimit). The data plane of a flow
// holds at most buffer.memory of fetched, unacknowledged batches (with
// buffer.memory unset, mirror.LongLinkBuffer more over a long link); a batch
// copied out of its response (a partition whose target does not answer)
// can hold that much again beside the responses it came from; and one fetch
// response and one produce request are up to 16 MiB each while they are
// read or written. The base covers the runtime, the clients' metadata and
// the per-partition state.
const (
	memoryBase        = 64 << 20
	memoryPerRequest  = 16 << 20 // a fetch response or a produce request
	defaultBufferSize = 32 << 20 // buffer.memory when unset
)

// memoryLimit is the soft memory limit for the Go runtime that the flows
// of plan need: the base plus, per replicating flow, twice buffer.memory (and
// a long link's 32 MiB when it is unset) and one fetch response and one
// produce request. It is a target for the garbage
// collector, not a cap: past it Go collects more often instead of growing
// the heap (and spends at most about half the CPU doing so), so a process
// whose live data exceeds it slows down rather than failing.
func memoryLimit(plan *kafkaclient.Plan) int64 {
	limit := int64(memoryBase)
	for _, fp := range plan.Flows {
		if !fp.Replicates {
			continue // heartbeats only
		}
		buf, link := int64(defaultBufferSize), int64(mirror.LongLinkBuffer)
		if fp.TargetProducer != nil && fp.TargetProducer.Mapped.Settings.BufferBytesSet {
			buf, link = fp.TargetProducer.Mapped.Settings.BufferBytes, 0
		}
		limit += 2*buf + link + 2*memoryPerRequest
	}
	return limit
}

// setMemoryLimit gives the runtime memoryLimit(plan) unless GOMEMLIMIT is
// set, and returns the limit in force (0 when the environment set one).
// Garbage between two collections otherwise lets the heap grow to 1.5
// times the live data (GOGC=50, see cmd/strait) before it is collected.
func setMemoryLimit(plan *kafkaclient.Plan) int64 {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return 0
	}
	limit := memoryLimit(plan)
	debug.SetMemoryLimit(limit)
	return limit
}
