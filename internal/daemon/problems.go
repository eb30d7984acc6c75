package daemon

import (
	"strait/internal/acls"
	"strait/internal/topics"
)

// ControlProblem is one item the control plane could not sync: a topic it
// could not create, grow or read, a config the target refused or that
// Strait leaves alone, or an ACL binding it could not create.
type ControlProblem struct {
	Kind  string `json:"kind"` // "topic", "config" or "acl"
	Item  string `json:"item"` // the remote topic, "topic key", or the binding
	Error string `json:"error"`
}

// controlProblems lists the per-item errors of the reconciler's last
// results and of the ACL syncer's last sync (nil when ACL sync is off).
func controlProblems(results []topics.Result, syncer *acls.Syncer) []ControlProblem {
	var out []ControlProblem
	for _, r := range results {
		if r.Err != nil {
			out = append(out, ControlProblem{Kind: "topic", Item: r.Remote, Error: r.Err.Error()})
		}
		for _, p := range r.Problems {
			item := p.Topic
			if p.Key != "" {
				item += " " + p.Key
			}
			out = append(out, ControlProblem{Kind: "config", Item: item, Error: p.Err})
		}
	}
	if syncer == nil {
		return out
	}
	st := syncer.Status()
	if st.Error != "" {
		out = append(out, ControlProblem{Kind: "acl", Error: st.Error})
	}
	for _, p := range st.Problems {
		out = append(out, ControlProblem{Kind: "acl", Item: p.Binding.String(), Error: p.Error})
	}
	return out
}
