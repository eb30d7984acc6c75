package config

import (
	"slices"
	"strings"

	"strait/internal/policy"
)

// This file holds the names MM2, Connect and the Kafka clients understand,
// so that Parse can tell a typo from a setting and say where a key belongs.
// The lists follow Kafka 4.x (spec §1.2, §1.6) plus the 3.x names that 4.0
// removed, which get their own warnings.

// set builds a lookup table from names.
func set(names ...[]string) map[string]bool {
	m := map[string]bool{}
	for _, l := range names {
		for _, n := range l {
			m[n] = true
		}
	}
	return m
}

// sslClientKeys is SslConfigs.addClientSslSupport.
var sslClientKeys = []string{
	"ssl.protocol", "ssl.provider", "ssl.cipher.suites", "ssl.enabled.protocols",
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.certificates",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
	"ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
	"ssl.endpoint.identification.algorithm", "ssl.secure.random.implementation",
	"ssl.engine.factory.class",
}

// saslClientKeys is SaslConfigs.addClientSaslSupport (with the KIP-1139
// OAuth keys of Kafka 4.1).
var saslClientKeys = []string{
	"sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd",
	"sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter",
	"sasl.kerberos.min.time.before.relogin", "sasl.login.refresh.window.factor",
	"sasl.login.refresh.window.jitter", "sasl.login.refresh.min.period.seconds",
	"sasl.login.refresh.buffer.seconds", "sasl.mechanism", "sasl.jaas.config",
	"sasl.client.callback.handler.class", "sasl.login.callback.handler.class", "sasl.login.class",
	"sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms",
	"sasl.login.retry.backoff.max.ms", "sasl.login.retry.backoff.ms",
	"sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.sub.claim.name",
	"sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.jwks.endpoint.url",
	"sasl.oauthbearer.jwks.endpoint.refresh.ms", "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", "sasl.oauthbearer.clock.skew.seconds",
	"sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer",
	"sasl.oauthbearer.header.urlencode", "sasl.oauthbearer.jwt.retriever.class",
	"sasl.oauthbearer.jwt.validator.class", "sasl.oauthbearer.scope",
	"sasl.oauthbearer.client.credentials.client.id", "sasl.oauthbearer.client.credentials.client.secret",
	"sasl.oauthbearer.assertion.algorithm", "sasl.oauthbearer.assertion.claim.aud",
	"sasl.oauthbearer.assertion.claim.exp.seconds", "sasl.oauthbearer.assertion.claim.iss",
	"sasl.oauthbearer.assertion.claim.jti.include", "sasl.oauthbearer.assertion.claim.nbf.seconds",
	"sasl.oauthbearer.assertion.claim.sub", "sasl.oauthbearer.assertion.file",
	"sasl.oauthbearer.assertion.private.key.file", "sasl.oauthbearer.assertion.private.key.passphrase",
	"sasl.oauthbearer.assertion.template.file",
}

// connectionKeyList is MirrorClientConfig.CLIENT_CONFIG_DEF: the keys MM2
// copies from a cluster (and from the top level) into every client role.
var connectionKeyList = slices.Concat([]string{"bootstrap.servers", "security.protocol"}, sslClientKeys, saslClientKeys)

var connectionKeys = set(connectionKeyList)

// commonClientKeys are accepted by the consumer, producer and admin clients.
var commonClientKeys = []string{
	"bootstrap.servers", "security.protocol", "client.id", "client.dns.lookup", "client.rack",
	"metadata.max.age.ms", "send.buffer.bytes", "receive.buffer.bytes", "reconnect.backoff.ms",
	"reconnect.backoff.max.ms", "retry.backoff.ms", "retry.backoff.max.ms", "request.timeout.ms",
	"socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms",
	"connections.max.idle.ms", "metrics.sample.window.ms", "metrics.num.samples",
	"metrics.recording.level", "metric.reporters", "auto.include.jmx.reporter", "security.providers",
	"enable.metrics.push", "metadata.recovery.strategy", "metadata.recovery.rebootstrap.trigger.ms",
	"config.providers",
}

var consumerOnlyKeys = []string{
	"group.id", "group.instance.id", "group.protocol", "group.remote.assignor", "session.timeout.ms",
	"heartbeat.interval.ms", "partition.assignment.strategy", "max.poll.records", "max.poll.interval.ms",
	"enable.auto.commit", "auto.commit.interval.ms", "auto.offset.reset", "fetch.min.bytes",
	"fetch.max.bytes", "fetch.max.wait.ms", "max.partition.fetch.bytes", "check.crcs",
	"key.deserializer", "value.deserializer", "interceptor.classes", "exclude.internal.topics",
	"isolation.level", "allow.auto.create.topics", "default.api.timeout.ms",
	"share.acknowledgement.mode",
}

var producerOnlyKeys = []string{
	"key.serializer", "value.serializer", "acks", "batch.size", "linger.ms", "delivery.timeout.ms",
	"buffer.memory", "compression.type", "compression.gzip.level", "compression.lz4.level",
	"compression.zstd.level", "max.block.ms", "max.request.size",
	"max.in.flight.requests.per.connection", "enable.idempotence", "transactional.id",
	"transaction.timeout.ms", "transaction.two.phase.commit.enable", "partitioner.class",
	"partitioner.ignore.keys", "partitioner.adaptive.partitioning.enable",
	"partitioner.availability.timeout.ms", "interceptor.classes", "metadata.max.idle.ms", "retries",
}

var adminOnlyKeys = []string{"default.api.timeout.ms", "retries", "bootstrap.controllers"}

// clientKeys holds the keys each Java client accepts, by role prefix.
var clientKeys = map[string]map[string]bool{
	"consumer": set(commonClientKeys, sslClientKeys, saslClientKeys, consumerOnlyKeys),
	"producer": set(commonClientKeys, sslClientKeys, saslClientKeys, producerOnlyKeys),
	"admin":    set(commonClientKeys, sslClientKeys, saslClientKeys, adminOnlyKeys),
}

// anyClientKeys is the union of clientKeys.
var anyClientKeys = set(commonClientKeys, sslClientKeys, saslClientKeys, consumerOnlyKeys, producerOnlyKeys, adminOnlyKeys)

// connectorKeys are the names of the three MM2 connector ConfigDefs,
// including Connect's ConnectorConfig and the client ssl/sasl keys: the
// top-level keys MM2 copies into every flow (spec §1.5 step 1).
var connectorKeys = set(connectionKeyList, []string{
	// MirrorConnectorConfig.BASE_CONNECTOR_CONFIG_DEF
	"enabled", "source.cluster.alias", "target.cluster.alias", "admin.timeout.ms",
	"replication.policy.class", "replication.policy.separator",
	"replication.policy.internal.topic.separator.enabled", "forwarding.admin.class",
	"metric.reporters", "auto.include.jmx.reporter",
	// Connect ConnectorConfig
	"name", "connector.class", "connector.plugin.version", "tasks.max", "tasks.max.enforce",
	"key.converter", "key.converter.plugin.version", "value.converter", "value.converter.plugin.version",
	"header.converter", "header.converter.plugin.version", "transforms", "predicates",
	"config.action.reload", "errors.retry.timeout", "errors.retry.delay.max.ms", "errors.tolerance",
	"errors.log.enable", "errors.log.include.messages",
	// MirrorSourceConfig
	"topics", "topics.exclude", "topics.blacklist", "config.properties.exclude",
	"config.properties.blacklist", "topic.filter.class", "config.property.filter.class",
	"consumer.poll.timeout.ms", "refresh.topics.enabled", "refresh.topics.interval.seconds",
	"sync.topic.configs.enabled", "sync.topic.configs.interval.seconds", "sync.topic.acls.enabled",
	"sync.topic.acls.interval.seconds", "replication.factor", "offset-syncs.topic.replication.factor",
	"offset.lag.max", "offset-syncs.topic.location", "emit.offset-syncs.enabled",
	"heartbeats.replication.enabled", "use.incremental.alter.configs", "add.source.alias.to.metrics",
	// MirrorCheckpointConfig
	"groups", "groups.exclude", "groups.blacklist", "group.filter.class", "refresh.groups.enabled",
	"refresh.groups.interval.seconds", "emit.checkpoints.enabled", "emit.checkpoints.interval.seconds",
	"sync.group.offsets.enabled", "sync.group.offsets.interval.seconds",
	"checkpoints.topic.replication.factor",
	// MirrorHeartbeatConfig
	"emit.heartbeats.enabled", "emit.heartbeats.interval.seconds", "heartbeats.topic.replication.factor",
})

// flowOnlyKeys are connector settings outside MM2's ConfigDefs (Connect's
// SourceConnectorConfig, and use.defaults.from, read by the config-property
// filter): MM2 does not copy them from the top level, so they work only per
// flow (spec §1.2).
var flowOnlyKeys = set([]string{
	"exactly.once.support", "transaction.boundary", "transaction.boundary.interval.ms",
	"offsets.storage.topic", "topic.creation.groups", "use.defaults.from",
})

// driverKeys are read by the MM2 driver from the top level only (spec §1.2).
var driverKeys = set([]string{
	"clusters", "dedicated.mode.enable.internal.rest", "config.providers", "listeners",
	"rest.advertised.host.name", "rest.advertised.port", "rest.advertised.listener", "admin.listeners",
	"access.control.allow.origin", "access.control.allow.methods", "response.http.headers.config",
	"ssl.client.auth", "plugin.path", "plugin.discovery",
})

// workerPrefixes are the top-level key prefixes MM2 copies into every
// herder's worker config (MirrorMakerConfig.workerConfig).
var workerPrefixes = []string{
	"offset.storage", "config.storage", "status.storage", "key.converter", "value.converter",
	"header.converter", "task", "worker", "replication.policy",
}

// workerKeys are Connect worker settings: they belong at the cluster scope of
// a flow's target (`<target>.offset.flush.interval.ms`).
var workerKeys = set([]string{
	"group.id", "client.id", "offset.storage.topic", "offset.storage.partitions",
	"offset.storage.replication.factor", "config.storage.topic", "config.storage.replication.factor",
	"status.storage.topic", "status.storage.partitions", "status.storage.replication.factor",
	"offset.flush.interval.ms", "offset.flush.timeout.ms", "exactly.once.source.support",
	"key.converter", "value.converter", "header.converter", "task.shutdown.graceful.timeout.ms",
	"session.timeout.ms", "heartbeat.interval.ms", "rebalance.timeout.ms", "worker.sync.timeout.ms",
	"worker.unsync.backoff.ms", "scheduled.rebalance.max.delay.ms", "connect.protocol",
	"inter.worker.key.generation.algorithm", "inter.worker.key.size", "inter.worker.key.ttl.ms",
	"inter.worker.signature.algorithm", "inter.worker.verification.algorithms",
	"topic.creation.enable", "topic.tracking.enable", "topic.tracking.allow.reset",
	"connector.client.config.override.policy", "plugin.path", "plugin.discovery", "listeners",
	"rest.advertised.host.name", "rest.advertised.port", "rest.advertised.listener", "admin.listeners",
	"access.control.allow.origin", "access.control.allow.methods", "response.http.headers.config",
	"ssl.client.auth", "config.providers", "metric.reporters", "auto.include.jmx.reporter",
	"metadata.max.age.ms", "request.timeout.ms", "retry.backoff.ms", "reconnect.backoff.ms",
	"reconnect.backoff.max.ms", "send.buffer.bytes", "receive.buffer.bytes", "connections.max.idle.ms",
	"metrics.sample.window.ms", "metrics.num.samples", "metrics.recording.level", "client.dns.lookup",
})

// workerKeyPrefixes are worker settings that take sub-keys.
var workerKeyPrefixes = []string{"key.converter.", "value.converter.", "header.converter.", "config.providers."}

// Strait's own keys (not read by MM2, which ignores them).
const (
	keyThrottle         = "strait.throttle.bytes.per.second"
	keyFastPath         = "strait.fast.path"
	keyIndexMaxSegments = "strait.index.max.segments"
	keyTopicDeletion    = "strait.sync.topic.deletion"
	keyGroupACLs        = "strait.sync.group.acls.enabled"
	keyRenameRules      = "strait.rename.rules"
	keyCluster          = "strait.cluster.enabled"
	keyExactlyOnce      = "strait.exactly.once"
	keyPreserve         = "strait.offsets.preserve"
	keyPreserveTopics   = "strait.offsets.preserve.topics"
	keyRefuseGaps       = "strait.offsets.preserve.refuse.gaps"
)

var straitKeys = set([]string{keyThrottle, keyFastPath, keyIndexMaxSegments, keyTopicDeletion, keyGroupACLs, keyRenameRules, keyCluster, keyExactlyOnce,
	keyPreserve, keyPreserveTopics, keyRefuseGaps})

// deprecatedAliases maps MM2's pre-2.8 names to the names that replaced them
// (KIP-629); MM2 3.x still reads them, 4.0 does not.
var deprecatedAliases = map[string]string{
	"topics.blacklist":            "topics.exclude",
	"groups.blacklist":            "groups.exclude",
	"config.properties.blacklist": "config.properties.exclude",
}

// whitelistAliases are include lists MM2 never had (MirrorMaker 1's
// --whitelist and look-alikes). Strait applies them as the include list when
// the real key is not set, because ignoring them, as MM2 does, would
// replicate every topic.
var whitelistAliases = map[string]string{
	"topics.whitelist": "topics",
	"topic.whitelist":  "topics",
	"whitelist":        "topics",
	"groups.whitelist": "groups",
	"group.whitelist":  "groups",
}

// removedKeys were removed in Kafka 4.0 and are ignored.
var removedKeys = map[string]string{
	"use.incremental.alter.configs": "KAFKA-17435; Strait always uses incremental AlterConfigs, as MM2 4.0 does",
	"add.source.alias.to.metrics":   "KAFKA-16769; Strait always adds the source alias, as MM2 4.0 does",
}

// misnomers are common wrong names that edit distance does not catch.
var misnomers = map[string]string{
	"sync.acls.enabled":                   "sync.topic.acls.enabled",
	"sync.acls.interval.seconds":          "sync.topic.acls.interval.seconds",
	"sync.configs.enabled":                "sync.topic.configs.enabled",
	"sync.configs.interval.seconds":       "sync.topic.configs.interval.seconds",
	"sync.topics.configs.enabled":         "sync.topic.configs.enabled",
	"sync.consumer.offsets.enabled":       "sync.group.offsets.enabled",
	"sync.offsets.enabled":                "sync.group.offsets.enabled",
	"sync.groups.enabled":                 "sync.group.offsets.enabled",
	"sync.group.offsets":                  "sync.group.offsets.enabled",
	"heartbeats.enabled":                  "emit.heartbeats.enabled",
	"checkpoints.enabled":                 "emit.checkpoints.enabled",
	"offset.syncs.enabled":                "emit.offset-syncs.enabled",
	"topics.include":                      "topics",
	"topic.include":                       "topics",
	"topics.regex":                        "topics",
	"topic.regex":                         "topics",
	"groups.include":                      "groups",
	"tasks":                               "tasks.max",
	"max.tasks":                           "tasks.max",
	"replication.policy":                  "replication.policy.class",
	"topics.replication.factor":           "replication.factor",
	"offset.syncs.topic.location":         "offset-syncs.topic.location",
	"emit.offset.syncs.enabled":           "emit.offset-syncs.enabled",
	"offsets.syncs.topic.location":        "offset-syncs.topic.location",
	"checkpoint.topic.replication.factor": "checkpoints.topic.replication.factor",
}

// classKeys are pluggable Java classes. Strait implements the default of
// each; any other class cannot be loaded.
var classKeys = map[string]struct {
	def   string
	fatal bool // a different class changes what is replicated
}{
	"topic.filter.class":           {"org.apache.kafka.connect.mirror.DefaultTopicFilter", true},
	"group.filter.class":           {"org.apache.kafka.connect.mirror.DefaultGroupFilter", true},
	"config.property.filter.class": {"org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter", true},
	"forwarding.admin.class":       {"org.apache.kafka.clients.admin.ForwardingAdmin", false},
}

// Replication policy classes Strait implements (spec §3), as internal/policy
// names them.
const (
	DefaultPolicyClass  = policy.DefaultClass
	IdentityPolicyClass = policy.IdentityClass
)

// isSecretKey reports whether a key holds a credential (Kafka's PASSWORD
// type and the like). It matches the end of a full file key too, so
// "A.ssl.key.password" is secret.
func isSecretKey(k string) bool {
	k = strings.ToLower(k)
	return strings.HasSuffix(k, "password") || strings.HasSuffix(k, "jaas.config") ||
		strings.HasSuffix(k, "keystore.key") || strings.Contains(k, "secret") ||
		strings.HasSuffix(k, "basic.auth.user.info") || strings.HasSuffix(k, "passphrase") ||
		strings.HasSuffix(k, "api.token")
}

// isClientPrefixed is MM2's `^(consumer|producer|admin).*` test that splits
// cluster properties into `source.cluster.*` and `source.*`.
func isClientPrefixed(k string) bool {
	return strings.HasPrefix(k, "consumer") || strings.HasPrefix(k, "producer") || strings.HasPrefix(k, "admin")
}

// hasAnyPrefix reports whether k starts with one of prefixes.
func hasAnyPrefix(k string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// editDistance is the optimal-string-alignment distance (Levenshtein plus
// transposition of neighbours), enough to catch typos.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: i-2, i-1, i.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// closest returns the candidate within edit distance 2 of k (ties broken
// alphabetically), or "".
func closest(k string, candidates ...map[string]bool) string {
	if m, ok := misnomers[k]; ok {
		return m
	}
	if len([]rune(k)) < 4 {
		return ""
	}
	if len(k) > 100 {
		return "" // no key is that long; spare the quadratic distance
	}
	best, bestD := "", 3
	for _, c := range candidates {
		for n := range c {
			if len(n)-len(k) > 2 || len(k)-len(n) > 2 {
				continue // the distance is at least the length difference
			}
			if d := editDistance(k, n); d < bestD || (d == bestD && n < best) {
				best, bestD = n, d
			}
		}
	}
	return best
}
