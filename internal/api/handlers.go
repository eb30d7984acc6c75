package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/mirror"
)

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "alive"})
}

// readyz is 200 once the node runs its flows and every assigned partition
// is flowing or caught up, 503 otherwise, with the reasons.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	st := s.opts.Node.Status()
	var reasons []string
	if len(st.Flows) == 0 {
		reasons = append(reasons, "no flow is running yet")
	}
	for _, f := range st.Flows {
		for _, p := range f.Mirror.Partitions {
			switch p.State {
			case mirror.StateStopped:
				reasons = append(reasons, fmt.Sprintf("%s %s[%d] stopped: %s", f.Name, p.Topic, p.Partition, p.Error))
			case mirror.StateStarting:
				reasons = append(reasons, fmt.Sprintf("%s %s[%d] is starting", f.Name, p.Topic, p.Partition))
			}
		}
	}
	if len(reasons) > 0 {
		const most = 20
		if len(reasons) > most {
			reasons = append(reasons[:most], fmt.Sprintf("and %d more", len(reasons)-most))
		}
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false, "reasons": reasons})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ready": true})
}

func (s *Server) index(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"endpoints": []string{"/api/v1/flows", "/api/v1/partitions", "/api/v1/history", "/api/v1/groups?flow=A->B", "/api/v1/offsets/translate?flow=A->B&group=G", "/api/v1/offsets/translate?flow=A->B&topic=T&partition=P&offset=O", "/api/v1/config", "/connectors", "/metrics", "/healthz", "/readyz"}})
}

func (s *Server) flows(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.flowsView(time.Now()))
}

func (s *Server) flowsView(now time.Time) FlowsView {
	st := s.opts.Node.Status()
	v := FlowsView{Flows: []FlowView{}}
	for _, f := range st.Flows {
		v.Flows = append(v.Flows, s.flowView(f, now))
	}
	return v
}

func (s *Server) flowView(f daemon.FlowStatus, now time.Time) FlowView {
	v := FlowView{Name: f.Name, Source: f.Source, Target: f.Target, Records: f.Mirror.Records, Bytes: f.Mirror.Bytes, Partitions: len(f.Mirror.Partitions), Problems: f.Problems, Share: f.Share}
	if f.Mirror.ExactlyOnce {
		v.Transactions = &TransactionsView{ID: f.Mirror.TransactionalID, Committed: f.Mirror.Transactions, Aborted: f.Mirror.AbortedTransactions}
	}
	v.LagRecords, v.LagSeconds = lagOf(f.Mirror.Partitions)
	for _, p := range f.Mirror.Partitions {
		if p.Path == "fast" {
			v.FastPath++
		} else {
			v.RecordPath++
		}
		if p.State == mirror.StateStopped {
			v.StoppedPartitions++
		}
	}
	if v.LagRecords > 0 && v.LagSeconds > 0 {
		oldest := now.Add(-time.Duration(v.LagSeconds * float64(time.Second))).UTC().Truncate(time.Millisecond)
		v.OldestNotCopied = &oldest
	}
	v.FailoverNow = failoverNow(v)
	switch {
	case v.Partitions == 0:
		v.State = "starting"
	case v.StoppedPartitions == v.Partitions:
		v.State = "failed"
	case v.StoppedPartitions > 0:
		v.State = "degraded"
	default:
		v.State = "running"
	}
	if cp := f.Checkpoints; cp != nil {
		v.CheckpointsEmitted, v.GroupOffsetsSynced = cp.Emitted, cp.Synced
		if !cp.Current.IsZero() {
			age := now.Sub(cp.Current).Seconds()
			v.CheckpointAge = &age
		}
	}
	if h := s.opts.History; h != nil {
		r := h.rate(f.Name, f.Mirror.Records, f.Mirror.Bytes, now)
		v.RecordsPerSecond, v.BytesPerSecond = r.RecordsPerSecond, r.BytesPerSecond
		v.Backlog = h.backlogOf(f, r.RecordsPerSecond)
	}
	return v
}

func (s *Server) partitions(w http.ResponseWriter, r *http.Request) {
	flow := r.URL.Query().Get("flow")
	st := s.opts.Node.Status()
	if flow != "" && !slices.ContainsFunc(st.Flows, func(f daemon.FlowStatus) bool { return f.Name == flow }) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no flow %q runs here; flows: %s", flow, flowNames(st)))
		return
	}
	v := PartitionsView{Partitions: []PartitionView{}}
	for _, f := range st.Flows {
		if flow != "" && f.Name != flow {
			continue
		}
		var owner string
		if f.Share != nil {
			owner = f.Share.Node
		}
		for _, p := range f.Mirror.Partitions {
			v.Partitions = append(v.Partitions, PartitionView{Flow: f.Name, Topic: p.Topic, Remote: p.Remote, Partition: p.Partition,
				State: p.State, Path: p.Path, Next: p.Next, End: p.End, LagRecords: p.Lag, LagSeconds: p.LagSeconds,
				Records: p.Records, Bytes: p.Bytes, LastError: p.Error, Owner: owner,
				KeepsOffsets: p.KeepsOffsets, Gaps: p.Gaps, FilledOffsets: p.FilledOffsets})
		}
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) history(w http.ResponseWriter, _ *http.Request) {
	if s.opts.History == nil {
		writeJSON(w, http.StatusOK, HistoryView{Points: []HistoryPoint{}})
		return
	}
	writeJSON(w, http.StatusOK, s.opts.History.View())
}

// flowParam returns the flow a request names with ?flow=, or the only flow
// when it names none.
func (s *Server) flowParam(r *http.Request) (string, error) {
	st := s.opts.Node.Status()
	flow := r.URL.Query().Get("flow")
	if flow == "" && len(st.Flows) == 1 {
		return st.Flows[0].Name, nil
	}
	if flow == "" {
		return "", fmt.Errorf("name the flow with ?flow=SOURCE->TARGET; flows: %s", flowNames(st))
	}
	return flow, nil
}

func flowNames(st daemon.Status) string {
	var names []string
	for _, f := range st.Flows {
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		return "(none running yet)"
	}
	return strings.Join(names, ", ")
}

// nodeError answers an error from the node: a flow it does not run is
// 404, the rest 400 (bad parameters) or 502 (a cluster did not answer).
func nodeError(w http.ResponseWriter, err error) {
	code := http.StatusBadGateway
	switch {
	case errors.Is(err, daemon.ErrNoFlow):
		code = http.StatusNotFound
	case errors.Is(err, context.DeadlineExceeded):
		code = http.StatusGatewayTimeout
	}
	writeError(w, code, err.Error())
}

func (s *Server) groups(w http.ResponseWriter, r *http.Request) {
	flow, err := s.flowParam(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	gs, err := s.opts.Node.Groups(ctx, flow, r.URL.Query().Get("group"))
	if err != nil {
		nodeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"flow": flow, "groups": gs})
}

func (s *Server) translate(w http.ResponseWriter, r *http.Request) {
	flow, err := s.flowParam(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	q := r.URL.Query()
	group := q.Get("group")
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if topic := q.Get("topic"); topic != "" && group == "" {
		partition, perr := strconv.ParseInt(q.Get("partition"), 10, 32)
		offset, oerr := strconv.ParseInt(q.Get("offset"), 10, 64)
		if perr != nil || oerr != nil || partition < 0 || offset < 0 {
			writeError(w, http.StatusBadRequest, "with ?topic=T give ?partition=P&offset=O, both whole numbers from 0")
			return
		}
		t, err := s.opts.Node.TranslateOffset(ctx, flow, topic, int32(partition), offset)
		if err != nil {
			nodeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"flow": flow, "offset": t})
		return
	}
	if group == "" {
		writeError(w, http.StatusBadRequest, "name the consumer group with ?group=NAME, or a stored offset with ?topic=T&partition=P&offset=O")
		return
	}
	ts, err := s.opts.Node.Translate(ctx, flow, group)
	if err != nil {
		nodeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"flow": flow, "group": group, "offsets": ts})
}

func (s *Server) config(w http.ResponseWriter, _ *http.Request) {
	if s.opts.Config == nil {
		writeError(w, http.StatusNotFound, "this node serves no configuration")
		return
	}
	writeJSON(w, http.StatusOK, s.opts.Config.View())
}

// enabledFlows are the configured flows this node runs.
func (s *Server) enabledFlows() []*config.Flow {
	if s.opts.Config == nil {
		return nil
	}
	return s.opts.Config.Flows
}

// failoverNow is the one-line answer to "would a failover now lose data?"
// for what this node copies.
func failoverNow(v FlowView) string {
	scope := ""
	if v.Share != nil {
		scope = fmt.Sprintf(" (the %d partitions this node copies; ask each node)", v.Partitions)
	}
	switch {
	case v.Partitions == 0:
		return "unknown: no partition is assigned yet" + scope
	case v.StoppedPartitions > 0:
		return fmt.Sprintf("would lose at least %d records%s, and %d stopped partitions copy nothing until Strait restarts", v.LagRecords, scope, v.StoppedPartitions)
	case v.LagRecords == 0:
		return "would lose nothing: every record on the source is copied" + scope
	case v.OldestNotCopied != nil:
		return fmt.Sprintf("would lose %d records written since %s (%.1f s)%s", v.LagRecords, v.OldestNotCopied.Format(time.RFC3339Nano), v.LagSeconds, scope)
	default:
		return fmt.Sprintf("would lose %d records%s", v.LagRecords, scope)
	}
}
