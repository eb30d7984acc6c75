package kafkatest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	// mirrorClientProbe is the embedded program MirrorClient runs.
	mirrorClientProbe = "MirrorClientProbe"
	// defaultTranslateTimeout is the probe's own default for --timeout-ms.
	defaultTranslateTimeout = 30 * time.Second
	// probeSlack bounds the probe's run beyond its translate timeouts: a JVM start plus
	// Java's admin calls, which give up after their default 60 s each.
	probeSlack = 3 * time.Minute
	// logTailLines is how much of a Java log a failure message shows.
	logTailLines = 40
)

// Translation asks MirrorClient for RemoteClusterUtils.translateOffsets of Group, read from
// the checkpoints topic of the upstream cluster RemoteAlias (e.g. "A.checkpoints.internal").
type Translation struct {
	RemoteAlias, Group string
}

// MirrorClientOpts is what MirrorClient passes to Java's RemoteClusterUtils besides the
// cluster's bootstrap address. Empty fields leave Java's defaults.
type MirrorClientOpts struct {
	// Separator is replication.policy.separator ("." when empty).
	Separator string
	// PolicyClass is replication.policy.class, a fully qualified Java class name
	// (DefaultReplicationPolicy when empty).
	PolicyClass string
	// SourceAlias is source.cluster.alias, which IdentityReplicationPolicy reads.
	SourceAlias string
	// Translate lists the translateOffsets calls to make. Java waits about 60 s and then
	// fails when the checkpoints topic does not exist, so create it first.
	Translate []Translation
	// Hops lists the upstream aliases to ask replicationHops for.
	Hops []string
	// Timeout is translateOffsets' timeout (30 s when zero).
	Timeout time.Duration
}

// MirrorClientView is what Apache Kafka's RemoteClusterUtils reports about one cluster:
// the decoded output of the MirrorClientProbe Java program. Lists are sorted.
type MirrorClientView struct {
	// HeartbeatTopics are the topics RemoteClusterUtils.heartbeatTopics lists, including
	// the local "heartbeats".
	HeartbeatTopics []string `json:"heartbeatTopics"`
	// CheckpointTopics are the topics RemoteClusterUtils.checkpointTopics lists.
	CheckpointTopics []string `json:"checkpointTopics"`
	// UpstreamClusters are the aliases RemoteClusterUtils.upstreamClusters finds.
	UpstreamClusters []string `json:"upstreamClusters"`
	// ReplicationHops maps each alias of MirrorClientOpts.Hops to its replicationHops
	// (1 = direct upstream, -1 = not upstream).
	ReplicationHops map[string]int `json:"replicationHops"`
	// TranslateOffsets maps "REMOTE_ALIAS:GROUP" of each MirrorClientOpts.Translate entry
	// to translateOffsets' answer: "topic-partition" (target-side names) to offset.
	TranslateOffsets map[string]map[string]int64 `json:"translateOffsets"`
}

// Translated returns the translated offsets of group from remoteAlias's checkpoints, keyed
// "topic-partition"; nil when MirrorClient was not asked for them.
func (v MirrorClientView) Translated(remoteAlias, group string) map[string]int64 {
	return v.TranslateOffsets[remoteAlias+":"+group]
}

// MirrorClient runs Apache Kafka's RemoteClusterUtils (connect-mirror-client, in the Java
// program MirrorClientProbe) against cluster c and returns what it reports, proving that
// Java tooling reads the MM2 topics found there. It fails the test, with the program's
// stderr and log, if the program fails.
func (e *Env) MirrorClient(t testing.TB, c *Cluster, opts MirrorClientOpts) MirrorClientView {
	t.Helper()
	prog := e.JavaProgram(t, mirrorClientProbe)
	if prog == nil {
		return MirrorClientView{} // t.Fatalf was called; for TBs whose Fatalf returns
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = defaultTranslateTimeout
	}
	logFile := filepath.Join(t.TempDir(), "mirror-client-probe.log")
	ctx, cancel := context.WithTimeout(t.Context(), time.Duration(len(opts.Translate))*timeout+probeSlack)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := prog.Command(ctx, logFile, opts.args(c.Bootstrap)...)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("running Java's RemoteClusterUtils (%s) against cluster %s (%s): %v\nstderr:\n%s\nlast lines of %s:\n%s",
			mirrorClientProbe, c.Name, c.Bootstrap, err, stderr.String(), logFile, readTail(logFile, logTailLines))
		return MirrorClientView{}
	}
	view, err := decodeMirrorClientView(stdout.Bytes())
	if err != nil {
		t.Fatalf("reading the output of %s against cluster %s: %v\nstdout:\n%s", mirrorClientProbe, c.Name, err, stdout.String())
		return MirrorClientView{}
	}
	return view
}

// args builds the probe's command line.
func (o MirrorClientOpts) args(bootstrap string) []string {
	args := []string{"--bootstrap", bootstrap}
	if o.Separator != "" {
		args = append(args, "--separator", o.Separator)
	}
	if o.PolicyClass != "" {
		args = append(args, "--policy-class", o.PolicyClass)
	}
	if o.SourceAlias != "" {
		args = append(args, "--source-alias", o.SourceAlias)
	}
	for _, tr := range o.Translate {
		args = append(args, "--translate", tr.RemoteAlias+":"+tr.Group)
	}
	for _, h := range o.Hops {
		args = append(args, "--hops", h)
	}
	if o.Timeout > 0 {
		args = append(args, "--timeout-ms", strconv.FormatInt(o.Timeout.Milliseconds(), 10))
	}
	return args
}

// decodeMirrorClientView decodes the probe's one JSON object strictly, so a probe and a
// view that drift apart fail loudly rather than read as empty.
func decodeMirrorClientView(b []byte) (MirrorClientView, error) {
	var v MirrorClientView
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return MirrorClientView{}, fmt.Errorf("decoding the JSON object: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return MirrorClientView{}, fmt.Errorf("want one JSON object, found more output after it")
	}
	var missing []string
	if v.HeartbeatTopics == nil {
		missing = append(missing, "heartbeatTopics")
	}
	if v.CheckpointTopics == nil {
		missing = append(missing, "checkpointTopics")
	}
	if v.UpstreamClusters == nil {
		missing = append(missing, "upstreamClusters")
	}
	if v.ReplicationHops == nil {
		missing = append(missing, "replicationHops")
	}
	if v.TranslateOffsets == nil {
		missing = append(missing, "translateOffsets")
	}
	if len(missing) > 0 {
		return MirrorClientView{}, fmt.Errorf("the JSON object lacks %s", strings.Join(missing, ", "))
	}
	return v, nil
}
