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
// Tests then share env.Clusters and keep out of each other's way with Name. RunWith starts
// clusters of several brokers, with a fault proxy in front of every broker, or with TLS,
// SASL and OAuth client listeners, and with a Kerberos KDC and a GSSAPI listener (Options;
// Env.Security, Env.Kerberos, Cluster.Listeners).
// Both check that the package's tests left no goroutine running.
package kafkatest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"
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
	// Security holds the certificates, users and OAuth key the brokers' client listeners
	// check (Cluster.Listeners); nil without Options.Security.
	Security *Security
	// Kerberos is the realm of the KDC the brokers' GSSAPI listener trusts; nil without
	// Options.Kerberos.
	Kerberos *Kerberos

	script    string // path of scripts/kafka.sh
	version   string // KAFKA_VERSION for every kafka.sh command; "" leaves the caller's
	kdcScript string // path of scripts/kdc.sh
	external  bool   // clusters from BootstrapsEnv: never stopped or restarted
	proxies   []*Proxy
}

// Options says what RunWith starts.
type Options struct {
	// Clusters is the number of clusters, named a, b, c, ...
	Clusters int
	// Brokers holds the number of brokers of each cluster, in order; a missing entry or 0
	// means one broker. Every broker is a combined KRaft broker and controller, so a cluster
	// of 3 keeps its controller quorum with one broker down; its internal topics have
	// replication factor 3 and min.insync.replicas 2.
	Brokers []int
	// Proxies puts a Proxy in front of every broker, on an EXTERNAL listener the broker
	// advertises at the proxy's address (Broker.Proxy, Cluster.ProxyBootstrap).
	Proxies bool
	// Heap is every broker's maximum heap, such as "384m"; empty means kafka.sh's default.
	Heap string
	// BrokerConfig holds settings added to every broker's server.properties.
	BrokerConfig map[string]string
	// Security gives every broker the client listeners SSL, SASL_SSL, SASL_PLAINTEXT,
	// OAUTH and EXPIRED (see ListenerSSL and the others; Cluster.Listeners) besides its
	// PLAINTEXT one, with what they check in Env.Security.
	Security bool
	// Kerberos (with Security) also starts an MIT Kerberos KDC on loopback, installing MIT
	// Kerberos with apt-get first if it is missing (scripts/kdc.sh), and gives every broker
	// the client listener GSSAPI (ListenerGSSAPI), with the realm in Env.Kerberos. The KDC
	// starts before the brokers and stops with them, or, if the test process dies first,
	// with its own watchdog.
	Kerberos bool
	// NoLeakCheck turns off the check that the tests left no goroutine behind.
	NoLeakCheck bool
	// KafkaVersion is the Apache Kafka version the brokers run, such as "3.9.1"; empty
	// means kafka.sh's own (KAFKA_VERSION, or its default). kafka.sh fetches it on first use.
	KafkaVersion string
}

// Run starts n single-broker Kafka clusters with scripts/kafka.sh, runs the package's tests
// against them and stops them again; see RunWith.
func Run(m *testing.M, n int, env **Env) int {
	return RunWith(m, Options{Clusters: n}, env)
}

// ignoreToxicChains leaves out of the leak check the goroutines of a broken toxiproxy
// toxic chain. When a toxic is removed while its connection closes, toxiproxy can leave a
// stub blocked for good sending a chunk to the stub it just unlinked, and the link's reader
// then blocks sending into the chain (seen after 15- and 30-minute soaks: NoopToxic.Pipe
// and LatencyToxic.Pipe in "chan send", and ToxicLink.read with ChanWriter.Write on top, 52
// minutes old). They are the test proxy's own. A connection the code under test leaks
// still shows in its client's goroutines, and the link's reader of such a connection waits
// on the socket, not on ChanWriter.Write.
var ignoreToxicChains = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2/toxics.(*ToxicStub).Run"),
	goleak.IgnoreTopFunction("github.com/Shopify/toxiproxy/v2/stream.(*ChanWriter).Write"),
}

// Authorized returns the options of n secure clusters that run KRaft's
// StandardAuthorizer. Clients of the PLAINTEXT listener (the brokers and
// controllers among themselves, and the tests' admin clients) are
// ANONYMOUS, the super user; the SASL users of the security listeners get
// only what ACLs grant them.
func Authorized(n int) Options {
	return Options{
		Clusters: n,
		Security: true,
		BrokerConfig: map[string]string{
			"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			"super.users":           "User:ANONYMOUS",
		},
	}
}

// RunWith starts the clusters opts asks for with scripts/kafka.sh, runs the package's tests
// against them and stops them again. It returns the exit code for os.Exit. The clusters' dir
// is kept when a test failed, so their logs can be read. A test bed that cannot start fails
// the tests: there is no silent skip. With BootstrapsEnv set, RunWith uses those clusters
// instead and leaves them running (and refuses options that need its own clusters).
//
// After the tests, and before the clusters stop, RunWith fails the package if a goroutine
// the tests started still runs (goleak), unless opts.NoLeakCheck: every client, proxy
// connection and helper goroutine must end with its test.
func RunWith(m *testing.M, opts Options, env **Env) int {
	return runEnvs(m, []Options{opts}, func(es []*Env) { *env = es[0] })
}

// RunVersions is RunWith once per Apache Kafka version: the clusters opts asks for, for
// each version, all up while the package's tests run, for tests that pin down what every
// broker version Strait supports does. envs gets each version's Env.
func RunVersions(m *testing.M, opts Options, versions []string, envs map[string]*Env) int {
	var all []Options
	for _, v := range versions {
		o := opts
		o.KafkaVersion = v
		all = append(all, o)
	}
	return runEnvs(m, all, func(es []*Env) {
		for i, e := range es {
			envs[versions[i]] = e
		}
	})
}

// runEnvs sets up an Env per opts, hands them to set, runs the tests, checks for leaked
// goroutines and stops every Env.
func runEnvs(m *testing.M, opts []Options, set func([]*Env)) int {
	var envs []*Env
	for _, o := range opts {
		e, err := setUp(o)
		if err != nil {
			fmt.Fprintf(os.Stderr, "kafkatest: %v\n", err)
			for _, e := range envs {
				_ = e.stop(false)
			}
			return 1
		}
		envs = append(envs, e)
	}
	set(envs)
	ignore := goleak.IgnoreCurrent()
	code := m.Run()
	for _, e := range envs {
		e.closeProxies()
	}
	if code == 0 && !slices.ContainsFunc(opts, func(o Options) bool { return o.NoLeakCheck }) {
		if err := goleak.Find(append(ignoreToxicChains, ignore)...); err != nil {
			fmt.Fprintf(os.Stderr, "kafkatest: the tests passed but left goroutines running: %v\n", err)
			code = 1
		}
	}
	failed := code != 0
	for _, e := range envs {
		if err := e.stop(failed); err != nil {
			fmt.Fprintf(os.Stderr, "kafkatest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	if code != 0 {
		var logs []string
		for _, e := range envs {
			if e.external {
				continue
			}
			for _, c := range e.Clusters {
				logs = append(logs, filepath.Join(c.Dir, "server.log"))
			}
		}
		if len(logs) > 0 {
			fmt.Fprintf(os.Stderr, "kafkatest: tests failed; broker logs kept: %s\n", strings.Join(logs, " "))
		}
	}
	return code
}

func setUp(opts Options) (*Env, error) {
	n := opts.Clusters
	if n < 1 || n > 26 {
		return nil, fmt.Errorf("kafkatest.Run needs 1 to 26 clusters, not %d", n)
	}
	if len(opts.Brokers) > n {
		return nil, fmt.Errorf("kafkatest.Options: %d broker counts for %d clusters", len(opts.Brokers), n)
	}
	for i, b := range opts.Brokers {
		if b < 0 || b > 9 {
			return nil, fmt.Errorf("kafkatest.Options: cluster %c has 1 to 9 brokers, not %d", 'a'+i, b)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("finding the repository root: %w", err)
	}
	root, err := findRoot(wd)
	if err != nil {
		return nil, err
	}
	if opts.Kerberos && !opts.Security {
		return nil, fmt.Errorf("kafkatest.Options: Kerberos needs Security: the GSSAPI listener is one of the security listeners")
	}
	e := &Env{script: filepath.Join(root, "scripts", "kafka.sh"), kdcScript: filepath.Join(root, "scripts", "kdc.sh"), version: opts.KafkaVersion}
	if s := os.Getenv(BootstrapsEnv); s != "" {
		if opts.KafkaVersion != "" {
			return nil, fmt.Errorf("this package runs Apache Kafka %s on clusters of its own: unset %s", opts.KafkaVersion, BootstrapsEnv)
		}
		if opts.Proxies || opts.Security || opts.Kerberos || slices.ContainsFunc(opts.Brokers, func(b int) bool { return b > 1 }) {
			return nil, fmt.Errorf("this package needs clusters of its own (several brokers, proxies or security listeners): unset %s", BootstrapsEnv)
		}
		e.external = true
		e.Clusters, err = parseBootstraps(s, n)
		if err != nil {
			return nil, err
		}
	} else {
		cleanOrphans(e.script, os.TempDir(), time.Now())
		if err := e.start(opts); err != nil {
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
func (e *Env) start(opts Options) error {
	n := opts.Clusters
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return fmt.Errorf("creating the test bed dir: %w", err)
	}
	args, proxies, err := e.startArgs(opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return err
	}
	pid := strconv.Itoa(os.Getpid())
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(pid+"\n"), 0o644); err != nil {
		closeAll(proxies)
		return fmt.Errorf("writing the owner file of test bed %s: %w", dir, err)
	}
	if opts.Security {
		// The security dir lives in the test bed dir, so stop removes it with the rest.
		sec, err := NewSecurity()
		if err == nil {
			err = sec.WriteDir(filepath.Join(dir, "security"))
		}
		if err != nil {
			closeAll(proxies)
			_ = os.RemoveAll(dir)
			return fmt.Errorf("preparing the security listeners: %w", err)
		}
		e.Security = sec
		args = append(args, "--security", sec.Dir)
	}
	if opts.Kerberos {
		// The brokers log in to the KDC as they start: it must run first.
		if err := e.startKDC(dir, pid); err != nil {
			closeAll(proxies)
			_ = os.RemoveAll(dir)
			return fmt.Errorf("preparing the GSSAPI listener: %w", err)
		}
		args = append(args, "--kerberos", e.Kerberos.Dir)
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	// --owner makes the script's watchdog stop the clusters if this process dies without
	// reaching stop (a panic, `go test -timeout`, Ctrl-C).
	args = append([]string{"start", "-n", strconv.Itoa(n), "-d", dir, "--owner", pid}, args...)
	stdout, stderr, err := e.runScript(ctx, args...)
	if err != nil {
		closeAll(proxies)
		if kdcErr := e.stopKDC(); kdcErr != nil {
			stderr += kdcErr.Error() + "\n"
		}
		kept := "the test bed dir " + dir + " is kept for the brokers' logs"
		if _, statErr := os.Stat(filepath.Join(dir, "a")); statErr != nil {
			kept = "no broker was started" // nothing to read in dir
			_ = os.RemoveAll(dir)
		}
		return fmt.Errorf("starting %d Kafka cluster(s) with %s failed: %w\n%s%s%s", n, e.script, err, stdout, stderr, kept)
	}
	e.Clusters, e.Dir, err = parseStartOutput(stdout, n)
	if err == nil {
		err = e.connectProxies(proxies)
	}
	if err != nil {
		closeAll(proxies)
		_ = e.stopKDC()
		_, _, _ = e.runScript(context.Background(), "stop", "-d", dir, "--keep")
		return fmt.Errorf("%w\n%s", err, stderr)
	}
	var addrs []string
	for _, c := range e.Clusters {
		a := c.Name + "=" + c.Bootstrap
		if c.proxied() {
			a += " (proxies " + c.ProxyBootstrap() + ")"
		}
		addrs = append(addrs, a)
	}
	fmt.Fprintf(os.Stderr, "kafkatest: %d Kafka cluster(s) up in %.1fs: %s (dir %s)\n",
		n, time.Since(began).Seconds(), strings.Join(addrs, " "), e.Dir)
	return nil
}

// startArgs turns opts into arguments of `kafka.sh start`. With opts.Proxies it starts a
// proxy per broker first, so each broker can advertise its proxy's port: the proxies hold
// their ports from now on, and forward once connectProxies knows the brokers' listeners.
func (e *Env) startArgs(opts Options) ([]string, map[string]*Proxy, error) {
	var args []string
	counts := make([]int, opts.Clusters)
	var spec []string
	for i := range counts {
		counts[i] = 1
		if i < len(opts.Brokers) && opts.Brokers[i] > 0 {
			counts[i] = opts.Brokers[i]
		}
		spec = append(spec, strconv.Itoa(counts[i]))
	}
	if slices.ContainsFunc(counts, func(c int) bool { return c > 1 }) {
		args = append(args, "--brokers", strings.Join(spec, ","))
	}
	if opts.Heap != "" {
		args = append(args, "--heap", opts.Heap)
	}
	for _, k := range slices.Sorted(maps.Keys(opts.BrokerConfig)) {
		args = append(args, "--set", k+"="+opts.BrokerConfig[k])
	}
	if !opts.Proxies {
		return args, nil, nil
	}
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	proxies := map[string]*Proxy{}
	for i, c := range counts {
		for id := 1; id <= c; id++ {
			node := fmt.Sprintf("%c:%d", 'a'+i, id)
			p, err := newProxy(server, node)
			if err != nil {
				closeAll(proxies)
				return nil, nil, err
			}
			proxies[node] = p
			args = append(args, "--external", fmt.Sprintf("%s=%s", node, portOf(p.Addr())))
		}
	}
	return args, proxies, nil
}

// connectProxies points every proxy at the external listener of its broker.
func (e *Env) connectProxies(proxies map[string]*Proxy) error {
	for _, c := range e.Clusters {
		for _, b := range c.Brokers {
			p := proxies[fmt.Sprintf("%s:%d", c.Name, b.ID)]
			if p == nil {
				continue
			}
			if b.external == "" {
				return fmt.Errorf("kafka.sh start printed no external listener for broker %d of cluster %s", b.ID, c.Name)
			}
			if err := p.setUpstream(b.external); err != nil {
				return err
			}
			b.Proxy = p
			e.proxies = append(e.proxies, p)
		}
	}
	return nil
}

// closeProxies stops every proxy: the tests are over.
func (e *Env) closeProxies() {
	for _, p := range e.proxies {
		p.close()
	}
}

func closeAll(proxies map[string]*Proxy) {
	for _, p := range proxies {
		p.close()
	}
}

func portOf(addr string) string {
	return addr[strings.LastIndexByte(addr, ':')+1:]
}

// stop stops the clusters Run started and removes their dir, unless keep. The KDC stops
// first: kafka.sh stop removes the dir that holds its pid file.
func (e *Env) stop(keep bool) error {
	if e.external || e.Dir == "" {
		return nil
	}
	kdcErr := e.stopKDC()
	args := []string{"stop", "-d", e.Dir}
	if keep {
		args = append(args, "--keep")
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	stdout, stderr, err := e.runScript(ctx, args...)
	if err != nil {
		return errors.Join(kdcErr, fmt.Errorf("stopping the Kafka clusters in %s failed: %w\n%s%s", e.Dir, err, stdout, stderr))
	}
	return kdcErr
}

// runScript runs kafka.sh with args and returns its stdout and stderr.
func (e *Env) runScript(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	var env []string
	if e.version != "" {
		env = []string{"KAFKA_VERSION=" + e.version}
	}
	return runScriptEnv(ctx, e.script, env, args...)
}

func runScript(ctx context.Context, script string, args ...string) (stdout, stderr string, err error) {
	return runScriptEnv(ctx, script, nil, args...)
}

// runScriptEnv runs script with args, with env added to this process's environment.
func runScriptEnv(ctx context.Context, script string, env []string, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, script, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
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

// parseStartOutput reads the "<name> <bootstrap> <dir>" lines, the "node <name>:<id>
// <address> <external listener|-> <advertised|-> <dir>" lines, the "listener <name>
// <LISTENER> <bootstrap>" lines (start --security) and the final DIR line that `kafka.sh
// start` prints. A cluster without node lines has one broker, id 1.
func parseStartOutput(out string, n int) ([]*Cluster, string, error) {
	var clusters []*Cluster
	var dir string
	byName := map[string]*Cluster{}
	var nodes, listeners [][]string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 0:
		case len(f) == 1:
			dir = f[0]
		case len(f) == 3:
			c := &Cluster{Name: f[0], Bootstrap: f[1], Dir: f[2]}
			clusters = append(clusters, c)
			byName[c.Name] = c
		case len(f) == 6 && f[0] == "node":
			nodes = append(nodes, f)
		case len(f) == 4 && f[0] == "listener":
			listeners = append(listeners, f)
		default:
			return nil, "", fmt.Errorf("unexpected line %q in the output of kafka.sh start: want \"<name> <bootstrap> <dir>\", a node or listener line or the test bed dir", sc.Text())
		}
	}
	if len(clusters) != n || dir == "" {
		return nil, "", fmt.Errorf("kafka.sh start printed %d cluster(s) and dir %q, want %d cluster(s) and a dir:\n%s", len(clusters), dir, n, out)
	}
	for _, f := range nodes {
		name, idText, ok := strings.Cut(f[1], ":")
		id, err := strconv.Atoi(idText)
		c := byName[name]
		if !ok || err != nil || c == nil {
			return nil, "", fmt.Errorf("node line %q of kafka.sh start names no cluster:id it printed", strings.Join(f, " "))
		}
		b := &Broker{ID: int32(id), Addr: f[2], Dir: f[5], cluster: c}
		if f[3] != "-" {
			b.external = f[3]
		}
		c.Brokers = append(c.Brokers, b)
	}
	for _, f := range listeners {
		c := byName[f[1]]
		if c == nil {
			return nil, "", fmt.Errorf("listener line %q of kafka.sh start names no cluster it printed", strings.Join(f, " "))
		}
		if c.Listeners == nil {
			c.Listeners = map[string]string{}
		}
		c.Listeners[f[2]] = f[3]
	}
	for _, c := range clusters {
		if len(c.Brokers) == 0 {
			c.Brokers = []*Broker{{ID: 1, Addr: c.Bootstrap, Dir: c.Dir, cluster: c}}
		}
		if got, want := len(c.Brokers), len(strings.Split(c.Bootstrap, ",")); got != want {
			return nil, "", fmt.Errorf("kafka.sh start printed %d node line(s) for cluster %s of %d brokers", got, c.Name, want)
		}
		for name, addrs := range c.Listeners {
			if got, want := len(strings.Split(addrs, ",")), len(c.Brokers); got != want {
				return nil, "", fmt.Errorf("kafka.sh start printed %d address(es) of listener %s for cluster %s of %d brokers", got, name, c.Name, want)
			}
		}
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
			c := &Cluster{Name: string(rune('a' + i)), Bootstrap: addr}
			c.Brokers = []*Broker{{ID: 1, Addr: addr, cluster: c}}
			clusters = append(clusters, c)
		}
	}
	if len(clusters) < n {
		return nil, fmt.Errorf("%s=%q lists %d cluster(s), but this package needs %d: add more host:port entries or unset it", BootstrapsEnv, s, len(clusters), n)
	}
	return clusters, nil
}

// checkCluster makes sure the cluster answers a metadata request with all its brokers, and
// through its proxies that it advertises them on its external listener.
func checkCluster(c *Cluster) error {
	if err := checkMetadata(c, c.Bootstrap, func(string) bool { return true }); err != nil {
		return err
	}
	if !c.proxied() {
		return nil
	}
	proxies := map[string]bool{}
	for _, p := range c.Proxies() {
		proxies[p.Addr()] = true
	}
	return checkMetadata(c, c.ProxyBootstrap(), func(addr string) bool { return proxies[addr] })
}

func checkMetadata(c *Cluster, bootstrap string, advertised func(addr string) bool) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...))
	if err != nil {
		return fmt.Errorf("cluster %s (%s): creating a client: %w", c.Name, bootstrap, err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("cluster %s (%s) does not answer a metadata request: %w", c.Name, bootstrap, err)
	}
	if len(md.Brokers) < len(c.Brokers) {
		return fmt.Errorf("cluster %s (%s) reports %d of its %d brokers", c.Name, bootstrap, len(md.Brokers), len(c.Brokers))
	}
	for _, b := range md.Brokers {
		if addr := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))); !advertised(addr) {
			return fmt.Errorf("cluster %s: broker %d advertises %s to clients of %s, not its proxy", c.Name, b.NodeID, addr, bootstrap)
		}
	}
	return nil
}

// cleanOrphans stops and removes the test beds under tmp whose owning test process has
// died, e.g. killed by `go test -timeout` before it could stop its clusters.
func cleanOrphans(script, tmp string, now time.Time) {
	for _, dir := range orphans(tmp, now, processAlive) {
		// Its KDC's watchdog should have stopped the KDC already; make sure.
		if kdc := filepath.Join(dir, kdcDirName); fileExists(kdc) {
			if err := stopKerberos(filepath.Join(filepath.Dir(script), "kdc.sh"), kdc); err != nil {
				fmt.Fprintf(os.Stderr, "kafkatest: cleaning up the left-over test bed %s: %v\n", dir, err)
				continue
			}
		}
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
