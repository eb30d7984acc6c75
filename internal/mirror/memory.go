package mirror

// The memory model of a flow's data plane, in one place: the daemon sizes
// each mirror with Budget, and the soft memory limit of the process (cli)
// adds FlowMemory per flow.

// requestMemory is one fetch response or one produce request, as read or
// written.
const requestMemory = 16 << 20

// Budget is what a flow's data plane may hold, from buffer.memory as the
// client settings resolved it (kafkaclient.Settings.BufferBytes, its
// default filled in) and whether the user set it: MaxBuffered, and
// LinkBuffer, what the fast path adds when the source is a long link away,
// which only an unset buffer.memory allows (a value the user set is the
// bound).
func Budget(bufferMemory int64, set bool) (maxBuffered, linkBuffer int64) {
	if set {
		return bufferMemory, 0
	}
	return bufferMemory, LongLinkBuffer
}

// FlowMemory is what one replicating flow may keep live at once: fetched,
// unacknowledged batches (MaxBuffered, plus LinkBuffer over a long link);
// as much again for batches copied out of their responses (a partition
// whose target does not answer); and one fetch response and one produce
// request while they are read or written.
func FlowMemory(maxBuffered, linkBuffer int64) int64 {
	return 2*maxBuffered + linkBuffer + 2*requestMemory
}
