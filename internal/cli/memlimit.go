package cli

import (
	"os"
	"runtime/debug"

	"strait/internal/kafkaclient"
	"strait/internal/mirror"
)

// memoryBase covers the runtime, the clients' metadata and the
// per-partition state; each replicating flow adds mirror.FlowMemory.
const memoryBase = 64 << 20

// memoryLimit is the soft memory limit for the Go runtime that the flows
// of plan need: the base plus, per replicating flow, what its data plane may
// hold (mirror.Budget, mirror.FlowMemory). It is a target for the garbage
// collector, not a cap: past it Go collects more often instead of growing
// the heap (and spends at most about half the CPU doing so), so a process
// whose live data exceeds it slows down rather than failing.
func memoryLimit(plan *kafkaclient.Plan) int64 {
	limit := int64(memoryBase)
	for _, fp := range plan.Flows {
		if !fp.Replicates {
			continue // heartbeats only
		}
		buffer, set := int64(kafkaclient.DefaultBufferMemory), false
		if fp.TargetProducer != nil {
			s := fp.TargetProducer.Mapped.Settings
			buffer, set = s.BufferBytes, s.BufferBytesSet
		}
		limit += mirror.FlowMemory(mirror.Budget(buffer, set))
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
