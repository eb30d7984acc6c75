// Package kafkatest is the test bed for tests that claim Kafka behaviour: real Apache Kafka
// clusters started once per test package by scripts/kafka.sh, in-process kfake clusters for
// fast tests, and the helpers both kinds of test share (unique names, polling, reading a
// topic back).
//
// A package with integration tests starts its clusters in TestMain:
//
//	var env *kafkatest.Env
//
//	func TestMain(m *testing.M) { os.Exit(kafkatest.Run(m, 2, &env)) }
//
// Tests then share env.Clusters and keep out of each other's way with Name.
package kafkatest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BootstrapsEnv names the environment variable that points Run at clusters that already
// run ("host:port,host:port", one address per cluster), for fast local iteration.
const BootstrapsEnv = "STRAIT_KAFKA_BOOTSTRAPS"

const (
	dirPrefix    = "strait-kafkatest-"
	ownerFile    = "owner.pid"
	startTimeout = 5 * time.Minute // includes a first fetch of the jars
	stopTimeout  = 2 * time.Minute
	checkTimeout = 30 * time.Second
	// orphanAge is how old a test bed without an owner file must be before it counts as
	// left over: younger ones may belong to a run that is still creating them.
	orphanAge = time.Hour
)

// Env is the set of real Kafka clusters a test package runs against.
type Env struct {
	// Clusters are named a, b, c, ... in order.
	Clusters []*Cluster
	// Dir holds the clusters' data and logs; empty for external clusters.
	Dir string

	script   string // path of scripts/kafka.sh
	external bool   // clusters from BootstrapsEnv: never stopped or restarted
}

// Cluster is one running single-node Kafka cluster.
type Cluster struct {
	// Name is the cluster's letter: a, b, c, ...
	Name string
	// Bootstrap is the broker's host:port.
	Bootstrap string
	// Dir holds the cluster's config, data and server.log; empty for an external cluster.
	Dir string

	env *Env
}

// Run starts n Kafka clusters with scripts/kafka.sh, runs the package's tests against them
// and stops them again. It returns the exit code for os.Exit. The clusters' dir is kept
// when a test failed, so their logs can be read. A test bed that cannot start fails the
// tests: there is no silent skip. With BootstrapsEnv set, Run uses those clusters instead
// and leaves them running.
func Run(m *testing.M, n int, env **Env) int {
	e, err := setUp(n)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kafkatest: %v\n", err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.stop(code != 0); err != nil {
		fmt.Fprintf(os.Stderr, "kafkatest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if code != 0 && !e.external {
		var logs []string
		for _, c := range e.Clusters {
			logs = append(logs, filepath.Join(c.Dir, "server.log"))
		}
		fmt.Fprintf(os.Stderr, "kafkatest: tests failed; broker logs kept: %s\n", strings.Join(logs, " "))
	}
	return code
}

func setUp(n int) (*Env, error) {
	if n < 1 || n > 26 {
		return nil, fmt.Errorf("kafkatest.Run needs 1 to 26 clusters, not %d", n)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("finding the repository root: %w", err)
	}
	root, err := findRoot(wd)
	if err != nil {
		return nil, err
	}
	e := &Env{script: filepath.Join(root, "scripts", "kafka.sh")}
	if s := os.Getenv(BootstrapsEnv); s != "" {
		e.external = true
		e.Clusters, err = parseBootstraps(s, n)
		if err != nil {
			return nil, err
		}
	} else {
		cleanOrphans(e.script, os.TempDir(), time.Now())
		if err := e.start(n); err != nil {
			return nil, err
		}
	}
	for _, c := range e.Clusters {
		c.env = e
		if err := checkCluster(c); err != nil {
			if !e.external {
				_ = e.stop(true)
				err = fmt.Errorf("%w (broker log: %s)", err, filepath.Join(c.Dir, "server.log"))
			}
			return nil, err
		}
	}
	return e, nil
}

// start runs `kafka.sh start` in a new dir that records this process as its owner, so a
// later run can tell a test bed left behind by a crash from one still in use.
func (e *Env) start(n int) error {
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return fmt.Errorf("creating the test bed dir: %w", err)
	}
	pid := strconv.Itoa(os.Getpid())
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(pid+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing the owner file of test bed %s: %w", dir, err)
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	// --owner makes the script's watchdog stop the clusters if this process dies without
	// reaching stop (a panic, `go test -timeout`, Ctrl-C).
	stdout, stderr, err := e.runScript(ctx, "start", "-n", strconv.Itoa(n), "-d", dir, "--owner", pid)
	if err != nil {
		kept := "the test bed dir " + dir + " is kept for the brokers' logs"
		if _, statErr := os.Stat(filepath.Join(dir, "a")); statErr != nil {
			kept = "no broker was started" // nothing to read in dir
			_ = os.RemoveAll(dir)
		}
		return fmt.Errorf("starting %d Kafka cluster(s) with %s failed: %w\n%s%s%s", n, e.script, err, stdout, stderr, kept)
	}
	e.Clusters, e.Dir, err = parseStartOutput(stdout, n)
	if err != nil {
		_, _, _ = e.runScript(context.Background(), "stop", "-d", dir, "--keep")
		return fmt.Errorf("%w\n%s", err, stderr)
	}
	var addrs []string
	for _, c := range e.Clusters {
		addrs = append(addrs, c.Name+"="+c.Bootstrap)
	}
	fmt.Fprintf(os.Stderr, "kafkatest: %d Kafka cluster(s) up in %.1fs: %s (dir %s)\n",
		n, time.Since(began).Seconds(), strings.Join(addrs, " "), e.Dir)
	return nil
}

// stop stops the clusters Run started and removes their dir, unless keep.
func (e *Env) stop(keep bool) error {
	if e.external || e.Dir == "" {
		return nil
	}
	args := []string{"stop", "-d", e.Dir}
	if keep {
		args = append(args, "--keep")
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	stdout, stderr, err := e.runScript(ctx, args...)
	if err != nil {
		return fmt.Errorf("stopping the Kafka clusters in %s failed: %w\n%s%s", e.Dir, err, stdout, stderr)
	}
	return nil
}

// runScript runs kafka.sh with args and returns its stdout and stderr.
func (e *Env) runScript(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	return runScript(ctx, e.script, args...)
}

func runScript(ctx context.Context, script string, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, script, args...)
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	// On a timeout, end the script and give up on its pipes: a JVM it started keeps them
	// closed, but a stuck one must not hang the tests.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// ClassPath returns the Java classpath of the Kafka jars the clusters run, for tests and
// benchmarks that run Apache Kafka tools or MirrorMaker 2 themselves. It also returns the
// classpath for external clusters (of the version in KAFKA_VERSION).
func (e *Env) ClassPath() (string, error) {
	stdout, stderr, err := e.runScript(context.Background(), "classpath")
	if err != nil {
		return "", fmt.Errorf("getting the Kafka classpath from %s: %w\n%s", e.script, err, stderr)
	}
	return strings.TrimSpace(stdout), nil
}

// Script returns the path of scripts/kafka.sh, e.g. to run its mm2 command with os/exec.
func (e *Env) Script() string { return e.script }

// External reports whether the clusters came from BootstrapsEnv and are not Run's to stop.
func (e *Env) External() bool { return e.external }

// findRoot returns the nearest dir at or above dir that holds a go.mod.
func findRoot(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod in %s or above: run the tests inside the repository", dir)
		}
		d = parent
	}
}

// parseStartOutput reads the "<name> <bootstrap> <dir>" lines and the final DIR line that
// `kafka.sh start` prints.
func parseStartOutput(out string, n int) ([]*Cluster, string, error) {
	var clusters []*Cluster
	var dir string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch len(f) {
		case 0:
		case 1:
			dir = f[0]
		case 3:
			clusters = append(clusters, &Cluster{Name: f[0], Bootstrap: f[1], Dir: f[2]})
		default:
			return nil, "", fmt.Errorf("unexpected line %q in the output of kafka.sh start: want \"<name> <bootstrap> <dir>\" or the test bed dir", sc.Text())
		}
	}
	if len(clusters) != n || dir == "" {
		return nil, "", fmt.Errorf("kafka.sh start printed %d cluster(s) and dir %q, want %d cluster(s) and a dir:\n%s", len(clusters), dir, n, out)
	}
	return clusters, dir, nil
}

// parseBootstraps turns BootstrapsEnv's value into the first n clusters.
func parseBootstraps(s string, n int) ([]*Cluster, error) {
	var clusters []*Cluster
	for i, addr := range strings.Split(s, ",") {
		addr = strings.TrimSpace(addr)
		if !strings.Contains(addr, ":") {
			return nil, fmt.Errorf("%s=%q: entry %d (%q) is not host:port", BootstrapsEnv, s, i+1, addr)
		}
		if i < n {
			clusters = append(clusters, &Cluster{Name: string(rune('a' + i)), Bootstrap: addr})
		}
	}
	if len(clusters) < n {
		return nil, fmt.Errorf("%s=%q lists %d cluster(s), but this package needs %d: add more host:port entries or unset it", BootstrapsEnv, s, len(clusters), n)
	}
	return clusters, nil
}

// checkCluster makes sure the cluster answers a metadata request.
func checkCluster(c *Cluster) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap))
	if err != nil {
		return fmt.Errorf("cluster %s (%s): creating a client: %w", c.Name, c.Bootstrap, err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("cluster %s (%s) does not answer a metadata request: %w", c.Name, c.Bootstrap, err)
	}
	if len(md.Brokers) == 0 {
		return fmt.Errorf("cluster %s (%s) reports no brokers", c.Name, c.Bootstrap)
	}
	return nil
}

// cleanOrphans stops and removes the test beds under tmp whose owning test process has
// died, e.g. killed by `go test -timeout` before it could stop its clusters.
func cleanOrphans(script, tmp string, now time.Time) {
	for _, dir := range orphans(tmp, now, processAlive) {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		_, stderr, err := runScript(ctx, script, "stop", "-d", dir)
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "kafkatest: cleaning up the left-over test bed %s: %v\n%s", dir, err, stderr)
			continue
		}
		_ = os.RemoveAll(dir) // what stop left: a dir that never got as far as testbed.env
		fmt.Fprintf(os.Stderr, "kafkatest: cleaned up the test bed %s of an earlier run that did not stop it\n", dir)
	}
}

// orphans lists the test bed dirs under tmp whose owner is not alive. A dir without an
// owner file counts only once older than orphanAge, as its run may be creating it now.
func orphans(tmp string, now time.Time, alive func(pid int) bool) []string {
	dirs, _ := filepath.Glob(filepath.Join(tmp, dirPrefix+"*"))
	var out []string
	for _, dir := range dirs {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if errors.Is(err, os.ErrNotExist) {
			if now.Sub(fi.ModTime()) > orphanAge {
				out = append(out, dir)
			}
			continue
		}
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || !alive(pid) {
			out = append(out, dir)
		}
	}
	return out
}

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
