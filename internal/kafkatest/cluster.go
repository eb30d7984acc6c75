package kafkatest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicReadyTimeout bounds the wait for a new topic's partitions to have leaders.
const topicReadyTimeout = 30 * time.Second

// Cluster is one running Kafka cluster: one broker, or several (Options.Brokers).
type Cluster struct {
	// Name is the cluster's letter: a, b, c, ...
	Name string
	// Bootstrap is every broker's host:port, comma-separated (one for a one-broker cluster).
	// Clients of these addresses reach the brokers directly, never through a Proxy.
	Bootstrap string
	// Dir holds the cluster's config, data and server.log (for several brokers, each in a
	// dir of its own: Broker.Dir); empty for an external cluster.
	Dir string
	// Brokers are the cluster's brokers, by id (1, 2, ...).
	Brokers []*Broker
	// Listeners maps each client listener of a secure test bed (Options.Security;
	// ListenerSSL and the others) to every broker's address on it, comma-separated like
	// Bootstrap; nil without Options.Security.
	Listeners map[string]string

	env *Env
}

// Broker is one broker (a combined KRaft broker and controller) of a Cluster.
type Broker struct {
	// ID is the broker's node.id.
	ID int32
	// Addr is the broker's own listener, never proxied: the address the brokers replicate
	// on and test tools should use.
	Addr string
	// Dir holds the broker's server.properties, server.log and its log dir (Dir/data).
	Dir string
	// Proxy is the fault proxy in front of the broker's EXTERNAL listener; nil unless the
	// env was started with Options.Proxies.
	Proxy *Proxy

	external string // the EXTERNAL listener the proxy forwards to
	cluster  *Cluster
}

// Seeds returns Bootstrap as a list, for kgo.SeedBrokers.
func (c *Cluster) Seeds() []string { return strings.Split(c.Bootstrap, ",") }

// ListenerSeeds returns the brokers' addresses on listener name (ListenerSSL, ...), for
// kgo.SeedBrokers, failing the test if the cluster has no such listener.
func (c *Cluster) ListenerSeeds(t testing.TB, name string) []string {
	t.Helper()
	addrs, ok := c.Listeners[name]
	if !ok {
		t.Fatalf("cluster %s has no %s listener (its listeners: %v): start the env with Options.Security", c.Name, name, c.Listeners)
		return nil
	}
	return strings.Split(addrs, ",")
}

// ProxyBootstrap returns the addresses of the brokers' proxies, comma-separated: clients
// that bootstrap from them learn the proxies' addresses from metadata, so every connection
// they make goes through a Proxy. It is empty without Options.Proxies.
func (c *Cluster) ProxyBootstrap() string {
	var addrs []string
	for _, b := range c.Brokers {
		if b.Proxy != nil {
			addrs = append(addrs, b.Proxy.Addr())
		}
	}
	return strings.Join(addrs, ",")
}

func (c *Cluster) proxied() bool { return len(c.Brokers) > 0 && c.Brokers[0].Proxy != nil }

// Proxies returns the proxies of every broker, in broker order; nil without Options.Proxies.
func (c *Cluster) Proxies() []*Proxy {
	var out []*Proxy
	for _, b := range c.Brokers {
		if b.Proxy != nil {
			out = append(out, b.Proxy)
		}
	}
	return out
}

// Broker returns the broker with the given node id, failing the test if there is none.
func (c *Cluster) Broker(t testing.TB, id int32) *Broker {
	t.Helper()
	for _, b := range c.Brokers {
		if b.ID == id {
			return b
		}
	}
	t.Fatalf("cluster %s has no broker %d", c.Name, id)
	return nil
}

// Leader returns the broker that leads partition of topic now, failing the test if it has
// no leader within topicReadyTimeout.
func (c *Cluster) Leader(t testing.TB, topic string, partition int32) *Broker {
	t.Helper()
	adm := c.Admin(t)
	var leader int32 = -1
	Eventually(t, topicReadyTimeout, func() error {
		md, err := adm.Metadata(t.Context(), topic)
		if err != nil {
			return err
		}
		p, ok := md.Topics[topic].Partitions[partition]
		if !ok || p.Err != nil || p.Leader < 0 {
			return fmt.Errorf("partition %d of %q on cluster %s has no leader (%v)", partition, topic, c.Name, p.Err)
		}
		leader = p.Leader
		return nil
	})
	return c.Broker(t, leader)
}

// Client returns a client of the cluster with opts added, closed when the test ends.
func (c *Cluster) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Seeds()...)}, opts...)...)
	if err != nil {
		t.Fatalf("creating a client of cluster %s (%s): %v", c.Name, c.Bootstrap, err)
		return nil
	}
	t.Cleanup(cl.Close)
	return cl
}

// Admin returns an admin client of the cluster, closed when the test ends.
func (c *Cluster) Admin(t testing.TB) *kadm.Client {
	t.Helper()
	return kadm.NewClient(c.Client(t))
}

// CreateTopic creates a topic with replication factor 1 and waits until every partition has
// a leader, so the test can produce to it at once. It fails the test on any error.
func (c *Cluster) CreateTopic(t testing.TB, name string, partitions int32, configs map[string]*string) {
	t.Helper()
	c.CreateReplicatedTopic(t, name, partitions, 1, configs)
}

// CreateReplicatedTopic is CreateTopic with replication factor rf.
func (c *Cluster) CreateReplicatedTopic(t testing.TB, name string, partitions int32, rf int16, configs map[string]*string) {
	t.Helper()
	adm := c.Admin(t)
	ctx, cancel := context.WithTimeout(t.Context(), topicReadyTimeout)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, partitions, rf, configs, name); err != nil {
		t.Fatalf("creating topic %q with %d partitions on cluster %s: %v", name, partitions, c.Name, err)
		return
	}
	Eventually(t, topicReadyTimeout, func() error {
		md, err := adm.Metadata(ctx, name)
		if err != nil {
			return err
		}
		td, ok := md.Topics[name]
		switch {
		case !ok:
			return fmt.Errorf("topic %q not in the metadata of cluster %s yet", name, c.Name)
		case td.Err != nil:
			return fmt.Errorf("topic %q on cluster %s: %w", name, c.Name, td.Err)
		case int32(len(td.Partitions)) != partitions:
			return fmt.Errorf("topic %q on cluster %s has %d of %d partitions", name, c.Name, len(td.Partitions), partitions)
		}
		for _, p := range td.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return fmt.Errorf("partition %d of topic %q on cluster %s has no leader yet (%v)", p.Partition, name, c.Name, p.Err)
			}
		}
		return nil
	})
}

// ReadAll reads the topic from its start to its end offsets as of the call; see ReadAll.
func (c *Cluster) ReadAll(t testing.TB, topic string, isolation kgo.IsolationLevel) [][]*kgo.Record {
	t.Helper()
	return ReadAll(t, c.Seeds(), topic, isolation)
}

// StopBroker stops the cluster's brokers (all of them): a clean shutdown (SIGTERM), or with
// kill a SIGKILL to each process group. Data and ports are kept for StartBroker. The test is
// skipped for external clusters, which are not the test bed's to stop.
func (c *Cluster) StopBroker(t testing.TB, kill bool) {
	t.Helper()
	args := []string{"stop-broker", "-d", c.env.Dir, c.Name}
	if kill {
		args = append(args, "--kill")
	}
	c.script(t, args...)
}

// StartBroker starts the cluster's stopped brokers again, on the same ports and data, and
// returns once they serve requests.
func (c *Cluster) StartBroker(t testing.TB) {
	t.Helper()
	c.script(t, "start-broker", "-d", c.env.Dir, c.Name)
}

// RestartBroker is StopBroker then StartBroker.
func (c *Cluster) RestartBroker(t testing.TB, kill bool) {
	t.Helper()
	args := []string{"restart-broker", "-d", c.env.Dir, c.Name}
	if kill {
		args = append(args, "--kill")
	}
	c.script(t, args...)
}

// Stop stops this broker alone, as StopBroker does.
func (b *Broker) Stop(t testing.TB, kill bool) {
	t.Helper()
	args := []string{"stop-broker", "-d", b.cluster.env.Dir, b.cluster.Name, "--node", fmt.Sprint(b.ID)}
	if kill {
		args = append(args, "--kill")
	}
	b.cluster.script(t, args...)
}

// Start starts this stopped broker again and returns once it serves requests.
func (b *Broker) Start(t testing.TB) {
	t.Helper()
	b.cluster.script(t, "start-broker", "-d", b.cluster.env.Dir, b.cluster.Name, "--node", fmt.Sprint(b.ID))
}

// Restart is Stop then Start.
func (b *Broker) Restart(t testing.TB, kill bool) {
	t.Helper()
	args := []string{"restart-broker", "-d", b.cluster.env.Dir, b.cluster.Name, "--node", fmt.Sprint(b.ID)}
	if kill {
		args = append(args, "--kill")
	}
	b.cluster.script(t, args...)
}

func (c *Cluster) script(t testing.TB, args ...string) {
	t.Helper()
	if c.env == nil || c.env.external {
		t.Skipf("cluster %s (%s) comes from %s and cannot be stopped or started: unset %s to run this test", c.Name, c.Bootstrap, BootstrapsEnv, BootstrapsEnv)
		return
	}
	stdout, stderr, err := c.env.runScript(t.Context(), args...)
	if err != nil {
		t.Fatalf("kafka.sh %v: %v\n%s%s", args, err, stdout, stderr)
	}
}

// FenceTransactionalID fences the producers of transactional id on c, as a
// new producer with that id does (InitProducerID): their open transaction
// is aborted and their next request refused.
func (c *Cluster) FenceTransactionalID(t testing.TB, id string) {
	t.Helper()
	cl := c.Client(t)
	Eventually(t, time.Minute, func() error {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = &id, 15000
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		return err
	})
}
