package coord

import (
	"slices"
	"time"
)

// State is where a member is in the group protocol.
type State string

// The states of a member.
const (
	// StateStopped: Run has not started or has returned; the member owns nothing.
	StateStopped State = "stopped"
	// StateJoining: the member is joining (JoinGroup, SyncGroup, or a backoff between
	// attempts). A member that holds a generation keeps its work while it rejoins.
	StateJoining State = "joining"
	// StateStable: the member holds a generation and works on its assignment.
	StateStable State = "stable"
	// StateRevoking: Release runs for what the member must give up.
	StateRevoking State = "revoking"
	// StateLost: the member learned it lost its membership and owns nothing; it joins
	// again as a new member.
	StateLost State = "lost"
)

// Assignment is what OnAssign receives after each successful SyncGroup.
type Assignment struct {
	Generation int32
	MemberID   string
	// Leader says the broker chose this member to assign the generation.
	Leader bool
	// Units is everything the member owns in this generation, sorted: the units it
	// keeps and the ones it gains.
	Units []Unit
	// Control says the member holds the control duty.
	Control bool
	// Slot is the member's slot (Plan.Slot), negative for none.
	Slot int
	// Revoke lists the units the member held and must give up now, sorted; Release is
	// called with them (and RevokeControl) once OnAssign returns.
	Revoke []Unit
	// RevokeControl says the member held the control duty and must give it up.
	RevokeControl bool
}

// Status is a snapshot of one member.
type Status struct {
	Group string `json:"group"`
	Node  string `json:"node,omitempty"`
	// MemberID is the id the broker gave the member; empty before it joined.
	MemberID string `json:"member_id,omitempty"`
	// Generation is the generation of the member's last assignment.
	Generation int32 `json:"generation"`
	Leader     bool  `json:"leader"`
	State      State `json:"state"`
	// Lease is Member.Lease at the time of the snapshot.
	Lease bool `json:"lease"`
	// Units and Control are what the member owns.
	Units   []Unit `json:"units,omitempty"`
	Control bool   `json:"control"`
	// Slot is the member's slot in its generation (Plan.Slot), -1 for none.
	Slot int `json:"slot"`
	// Heartbeat is when the last heartbeat the broker accepted was sent.
	Heartbeat time.Time `json:"heartbeat,omitzero"`
	// Error is the last error of the group protocol or of Work or Release, cleared by
	// the next successful SyncGroup.
	Error string `json:"error,omitempty"`
}

// Status returns a snapshot of the member.
func (m *Member) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.s
	return Status{
		Group:      m.cfg.Group,
		Node:       m.cfg.NodeID,
		MemberID:   s.memberID,
		Generation: s.generation,
		Leader:     s.leader,
		State:      s.state,
		Lease:      m.leaseLocked(),
		Units:      slices.Clone(s.units),
		Control:    s.control,
		Slot:       s.slot,
		Heartbeat:  s.heartbeat,
		Error:      s.err,
	}
}
