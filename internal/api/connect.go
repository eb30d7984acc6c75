package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"strait/internal/config"
	"strait/internal/daemon"
	"strait/internal/mirror"
)

// Kafka Connect's REST endpoints with MM2's connector names, so that
// scripts written for MM2 (GET /connectors/MirrorSourceConnector/status)
// keep working. A flow is one task of each of its connectors: MM2 runs a
// set of connectors per flow, and Strait runs each flow whole.

// MM2's connectors.
const (
	sourceConnector     = "MirrorSourceConnector"
	checkpointConnector = "MirrorCheckpointConnector"
	heartbeatConnector  = "MirrorHeartbeatConnector"
)

var connectorClass = map[string]string{
	sourceConnector:     "org.apache.kafka.connect.mirror.MirrorSourceConnector",
	checkpointConnector: "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
	heartbeatConnector:  "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
}

// connectorFlows returns the configured flows that run connector: the
// source connector on every enabled flow, checkpoints where they are
// emitted, heartbeats on every pair that emits them.
func (s *Server) connectorFlows(name string) []*config.Flow {
	var out []*config.Flow
	for _, f := range s.enabledFlows() {
		switch name {
		case sourceConnector:
			if f.Enabled {
				out = append(out, f)
			}
		case checkpointConnector:
			if f.Enabled && f.EmitCheckpointsEnabled {
				out = append(out, f)
			}
		case heartbeatConnector:
			if f.EmitHeartbeatsEnabled {
				out = append(out, f)
			}
		}
	}
	return out
}

func (s *Server) connectorNames() []string {
	var names []string
	for _, n := range []string{checkpointConnector, heartbeatConnector, sourceConnector} {
		if len(s.connectorFlows(n)) > 0 {
			names = append(names, n)
		}
	}
	return names
}

// connectorFromPath returns the connector a path names, or answers 404.
func (s *Server) connectorFromPath(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("name")
	if !slices.Contains(s.connectorNames(), name) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Connector %s not found; this node runs %s", name, strings.Join(s.connectorNames(), ", ")))
		return "", false
	}
	return name, true
}

func (s *Server) connectors(w http.ResponseWriter, r *http.Request) {
	names := s.connectorNames()
	expand := r.URL.Query()["expand"]
	if len(expand) == 0 {
		writeJSON(w, http.StatusOK, append([]string{}, names...))
		return
	}
	out := map[string]map[string]any{}
	for _, n := range names {
		m := map[string]any{}
		for _, e := range expand {
			switch e {
			case "status":
				m["status"] = s.statusOf(n)
			case "info":
				m["info"] = s.infoOf(n)
			default:
				writeError(w, http.StatusBadRequest, fmt.Sprintf("expand=%s: use status or info", e))
				return
			}
		}
		out[n] = m
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) connector(w http.ResponseWriter, r *http.Request) {
	if name, ok := s.connectorFromPath(w, r); ok {
		writeJSON(w, http.StatusOK, s.infoOf(name))
	}
}

func (s *Server) connectorStatus(w http.ResponseWriter, r *http.Request) {
	if name, ok := s.connectorFromPath(w, r); ok {
		writeJSON(w, http.StatusOK, s.statusOf(name))
	}
}

func (s *Server) connectorConfig(w http.ResponseWriter, r *http.Request) {
	name, ok := s.connectorFromPath(w, r)
	if !ok {
		return
	}
	flows := s.connectorFlows(name)
	if want := r.URL.Query().Get("flow"); want != "" {
		flows = slices.DeleteFunc(slices.Clone(flows), func(f *config.Flow) bool { return f.Name() != want })
		if len(flows) == 0 {
			writeError(w, http.StatusNotFound, fmt.Sprintf("%s does not run on flow %q", name, want))
			return
		}
	}
	if len(flows) > 1 {
		var names []string
		for _, f := range flows {
			names = append(names, f.Name())
		}
		writeError(w, http.StatusConflict, fmt.Sprintf("%s runs on %d flows (%s), each with its own configuration: name one with ?flow=SOURCE->TARGET", name, len(flows), strings.Join(names, ", ")))
		return
	}
	writeJSON(w, http.StatusOK, s.connectorConfigOf(name, flows[0]))
}

func (s *Server) connectorTasks(w http.ResponseWriter, r *http.Request) {
	name, ok := s.connectorFromPath(w, r)
	if !ok {
		return
	}
	tasks := []map[string]any{}
	for i, f := range s.connectorFlows(name) {
		tasks = append(tasks, map[string]any{"id": map[string]any{"connector": name, "task": i}, "config": s.connectorConfigOf(name, f)})
	}
	writeJSON(w, http.StatusOK, tasks)
}

// infoOf is Connect's GET /connectors/{name}: its tasks, one per flow; its
// config is the first flow's.
func (s *Server) infoOf(name string) map[string]any {
	flows := s.connectorFlows(name)
	tasks := []map[string]any{}
	for i := range flows {
		tasks = append(tasks, map[string]any{"connector": name, "task": i})
	}
	info := map[string]any{"name": name, "type": "source", "tasks": tasks}
	if len(flows) > 0 {
		info["config"] = s.connectorConfigOf(name, flows[0])
	}
	return info
}

// connectorConfigOf is a connector's configuration on one flow, as MM2
// gives it to its connectors: the flow's effective settings (secrets
// redacted) with the class and the two aliases.
func (s *Server) connectorConfigOf(name string, f *config.Flow) map[string]string {
	cfg := map[string]string{
		"name":                 name,
		"connector.class":      connectorClass[name],
		"source.cluster.alias": f.Source,
		"target.cluster.alias": f.Target,
	}
	for _, fv := range s.opts.Config.View().Flows {
		if fv.Name != f.Name() {
			continue
		}
		for _, st := range fv.Settings {
			cfg[st.Key] = st.MM2Value()
		}
	}
	return cfg
}

// statusOf is Connect's GET /connectors/{name}/status: a task per flow,
// FAILED with the reasons when partitions of the flow stopped (the others
// go on, as a Connect worker's other tasks do); the connector itself runs
// as long as the node does.
func (s *Server) statusOf(name string) map[string]any {
	running := map[string]daemon.FlowStatus{}
	for _, f := range s.opts.Node.Status().Flows {
		running[f.Name] = f
	}
	tasks := []map[string]any{}
	for i, f := range s.connectorFlows(name) {
		t := map[string]any{"id": i, "state": "RUNNING", "worker_id": s.opts.WorkerID, "flow": f.Name()}
		fs, ok := running[f.Name()]
		switch {
		case name == sourceConnector && !ok:
			t["state"] = "UNASSIGNED" // still starting
		case name == sourceConnector:
			var reasons []string
			for _, p := range fs.Mirror.Partitions {
				if p.State == mirror.StateStopped {
					reasons = append(reasons, fmt.Sprintf("%s[%d]: %s", p.Topic, p.Partition, p.Error))
				}
			}
			if len(reasons) > 0 {
				t["state"] = "FAILED"
				t["trace"] = fmt.Sprintf("%d of %d partitions stopped:\n%s", len(reasons), len(fs.Mirror.Partitions), strings.Join(reasons, "\n"))
			}
		}
		tasks = append(tasks, t)
	}
	return map[string]any{
		"name":      name,
		"connector": map[string]any{"state": "RUNNING", "worker_id": s.opts.WorkerID},
		"tasks":     tasks,
		"type":      "source",
	}
}
