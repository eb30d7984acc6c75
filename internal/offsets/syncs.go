package offsets

// Sync is an MM2 offset sync: upstream (source) offset and downstream
// (target) offset of one replicated record.
type Sync struct {
	Up, Down int64
}

// SyncEmitter decides which acknowledged records become MM2 offset syncs,
// following MirrorSourceTask/OffsetSyncWriter (spec mm2-compat.md §6.1), so
// that MM2's own OffsetSyncStore can translate with them. It keeps MM2's
// split between syncs that must go out (Pending) and the latest position
// that goes out at the next flush (Delayed).
type SyncEmitter struct {
	lagMax       int64
	prevUp       int64
	prevDown     int64
	lastSyncDown int64
	pending      *Sync
	delayed      *Sync
}

// NewSyncEmitter returns an emitter for one partition; lagMax is
// offset.lag.max (100 by default).
func NewSyncEmitter(lagMax int64) *SyncEmitter {
	return &SyncEmitter{lagMax: lagMax, prevUp: -1, prevDown: -1, lastSyncDown: -1}
}

// Ack applies MM2's rules to one acknowledged record.
func (e *SyncEmitter) Ack(up, down int64) {
	trigger := e.lastSyncDown == -1 ||
		down-(e.lastSyncDown+1) >= e.lagMax ||
		up-e.prevUp != 1 ||
		down < e.prevDown
	if trigger {
		e.lastSyncDown = down
	}
	e.prevUp, e.prevDown = up, down
	s := Sync{Up: up, Down: down}
	if trigger {
		e.pending, e.delayed = &s, nil
	} else {
		e.delayed = &s
	}
}

// AckRange applies the rules to n consecutive records starting at (up,
// down), as if Ack were called for each, in constant time.
func (e *SyncEmitter) AckRange(up, down, n int64) {
	if n <= 0 {
		return
	}
	e.Ack(up, down)
	if n == 1 {
		return
	}
	// The remaining records are contiguous on both sides, so only the
	// offset.lag.max rule can fire: at every down where
	// down-(lastSyncDown+1) >= lagMax, i.e. every lagMax+1 records.
	lastDown := down + n - 1
	step := max(e.lagMax, 0) + 1
	if first := e.lastSyncDown + step; first <= lastDown {
		k := (lastDown - first) / step
		trig := first + k*step
		e.lastSyncDown = trig
		e.pending = &Sync{Up: up + (trig - down), Down: trig}
		e.delayed = nil
	}
	e.prevUp, e.prevDown = up+n-1, lastDown
	if e.lastSyncDown != lastDown {
		e.delayed = &Sync{Up: e.prevUp, Down: lastDown}
	}
}

// Flush returns the syncs to write now, oldest first: the pending one and
// the delayed latest position, as MM2 does on every offset commit.
func (e *SyncEmitter) Flush() []Sync {
	var out []Sync
	if e.pending != nil {
		out = append(out, *e.pending)
	}
	if e.delayed != nil {
		out = append(out, *e.delayed)
	}
	e.pending, e.delayed = nil, nil
	return out
}
