package kafkatest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// topicReadyTimeout bounds the wait for a new topic's partitions to have leaders.
const topicReadyTimeout = 30 * time.Second

// Client returns a client of the cluster with opts added, closed when the test ends.
func (c *Cluster) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Bootstrap)}, opts...)...)
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
	adm := c.Admin(t)
	ctx, cancel := context.WithTimeout(t.Context(), topicReadyTimeout)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, partitions, 1, configs, name); err != nil {
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
	return ReadAll(t, []string{c.Bootstrap}, topic, isolation)
}

// StopBroker stops the cluster's broker: a clean shutdown (SIGTERM), or with kill a
// SIGKILL to its process group. Data and ports are kept for StartBroker. The test is
// skipped for external clusters, which are not the test bed's to stop.
func (c *Cluster) StopBroker(t testing.TB, kill bool) {
	t.Helper()
	args := []string{"stop-broker", "-d", c.env.Dir, c.Name}
	if kill {
		args = append(args, "--kill")
	}
	c.script(t, args...)
}

// StartBroker starts the cluster's stopped broker again, on the same ports and data, and
// returns once it serves requests.
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
