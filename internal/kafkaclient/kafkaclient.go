// Package kafkaclient builds franz-go clients from the Java client settings
// of an MM2 configuration (`<alias>.producer.*`, `<alias>.consumer.*`,
// `<alias>.admin.*` and the cluster's connection keys). Every Java key either
// maps to a franz-go option, is consumed by Strait itself (returned in
// Settings), or produces a warning that names it. NewPlan maps every client
// of every flow once; run, check and offsets translate all use that plan.
package kafkaclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"strait/internal/batch"
	"strait/internal/config"
	"strait/internal/saslconf"
	"strait/internal/tlsconf"
)

// Role is what a client is used for; it decides which Java keys apply.
type Role string

// Client roles.
const (
	Consumer Role = "consumer"
	Producer Role = "producer"
	Admin    Role = "admin"
)

// Settings are Java client settings that Strait applies itself rather than
// through a franz-go option.
type Settings struct {
	// AutoOffsetReset is where a partition without stored progress starts:
	// "earliest" (MM2's default), "latest" or "none".
	AutoOffsetReset string
	// ReadCommitted is true unless the file sets isolation.level=read_uncommitted.
	// Strait's default is read_committed so aborted data is never copied.
	ReadCommitted bool
	// Acks is "all" (for "all" or "-1", and by default), "1" or "0". The
	// config allows only "all" for the producer of replicated data.
	Acks string
	// Idempotent is false only when enable.idempotence=false or acks != all.
	// Without it the data producer keeps one request in flight and a retry
	// may duplicate a record (never lose one).
	Idempotent bool
	// Compression is compression.type ("" when unset: Strait then uses none
	// on the record path, as the Java producer does).
	Compression string
	// CompressionLevel is the level of Compression's codec, Kafka's number
	// (compression.gzip.level, compression.lz4.level or
	// compression.zstd.level); 0 when that key is unset, which is the
	// codec's default (batch.Compression). The record path's producer
	// compresses at it, and the fast path recompresses at it.
	CompressionLevel int
	// BufferBytes is buffer.memory (producer), 32 MiB when unset as in Java;
	// BufferBytesSet says the user set it (the fast path then holds no
	// more over a long link).
	BufferBytes    int64
	BufferBytesSet bool
	// PartitionFetchBytes is max.partition.fetch.bytes (consumer), 0 when
	// unset (the fast path then grows its asks with the link).
	// FetchMaxBytes is fetch.max.bytes (consumer), 50 MiB when unset as in
	// Java.
	PartitionFetchBytes int32
	FetchMaxBytes       int32
}

// DefaultBufferMemory is buffer.memory when the file leaves it unset (Java's
// producer default). Settings carry it resolved; this is its one home.
const DefaultBufferMemory = 32 << 20

// DefaultFetchMaxBytes is fetch.max.bytes when the file leaves it unset
// (Java's consumer default, and franz-go's).
const DefaultFetchMaxBytes = 50 << 20

// Mapped is the outcome of mapping one role's Java settings.
type Mapped struct {
	Opts     []kgo.Opt
	Settings Settings
	Warnings []config.Warning
	sasl     bool // Build adds a SASL mechanism of the client's own
}

// Map translates the Java client settings of c for role. It fails on values
// that cannot be honoured safely (a bad number, an unsupported security
// protocol); keys without an equivalent only produce warnings.
func Map(role Role, c config.Client) (Mapped, error) {
	m, problems := mapClient(role, c, false)
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return m, errors.Join(errs...)
}

// Problem is a client setting that cannot be honoured (config.Problem).
type Problem = config.Problem

// mapClient is Map with each problem kept apart. transactional is true for
// the producer of an exactly-once flow's data (config.Flow.ExactlyOnce),
// whose transaction.timeout.ms the config reads as Flow.TransactionTimeout.
func mapClient(role Role, c config.Client, transactional bool) (Mapped, []Problem) {
	x := &mapper{transactional: transactional, m: Mapped{Settings: Settings{AutoOffsetReset: "earliest", ReadCommitted: true, Acks: "all", Idempotent: true}}}
	for _, p := range c.Props {
		v := strings.TrimSpace(p.Value.Reveal())
		if x.common(p, v) {
			continue
		}
		switch role {
		case Producer:
			x.producer(p, v)
		case Consumer:
			x.consumer(p, v)
		default:
			x.admin(p)
		}
	}
	x.security(c)
	if role == Producer {
		x.compression()
	}
	s := &x.m.Settings
	if role == Producer && s.Acks != "all" {
		// Kafka's idempotent producer needs acks=all. The config refuses
		// any other acks for replicated data; only the producers of
		// heartbeats and source offset syncs, which are not idempotent
		// anyway, can get here.
		s.Idempotent = false
	}
	if role == Consumer && s.FetchMaxBytes == 0 {
		s.FetchMaxBytes = DefaultFetchMaxBytes // franz-go's default too: no option needed
	}
	if role == Producer && s.BufferBytes == 0 {
		// Java's buffer.memory default: it bounds what the producer holds,
		// and with it the fetched data the records still reference.
		s.BufferBytes = DefaultBufferMemory
		x.add(kgo.MaxBufferedBytes(int(s.BufferBytes)), kgo.MaxBufferedRecords(1<<20))
	}
	switch {
	case role != Producer:
	case !s.Idempotent:
		// Without idempotence, one request in flight keeps order on retries.
		x.add(kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(1))
		if x.inflight > 1 {
			x.warn(x.inflightProp, "max.in.flight.requests.per.connection=%d is lowered to 1: without idempotence more would reorder records on retries", x.inflight)
		}
	case x.inflight > 5:
		x.bad(x.inflightProp, "max.in.flight.requests.per.connection must be at most 5 with the idempotent producer; got %d", x.inflight)
	case x.inflight > 0:
		x.warn(x.inflightProp, "max.in.flight.requests.per.connection is managed by franz-go's idempotent producer (up to 5 per broker) and is ignored")
	}
	return x.m, x.errs
}

// mapper accumulates options, warnings and errors while mapping keys.
type mapper struct {
	m    Mapped
	errs []Problem
	// transactional: the producer writes an exactly-once flow's data.
	transactional bool
	// max.in.flight.requests.per.connection, applied once idempotence is
	// known: franz-go's idempotent producer manages it itself.
	inflight     int
	inflightProp config.ClientProp
	// security.protocol, upper case ("" when unset: PLAINTEXT).
	protocol     string
	protocolProp config.ClientProp
	// compression.type and the level keys, applied together once all are
	// read (compression).
	compressionProp config.ClientProp
	levelProp       [batch.Zstd + 1]*config.ClientProp // a valid level key, by codec; nil when unset
	level           [batch.Zstd + 1]int                // its value
}

func (x *mapper) add(o ...kgo.Opt) { x.m.Opts = append(x.m.Opts, o...) }

func (x *mapper) bad(p config.ClientProp, format string, args ...any) {
	x.errs = append(x.errs, Problem{Origin: p.Origin, Message: fmt.Sprintf(format, args...)})
}

func (x *mapper) warn(p config.ClientProp, format string, args ...any) {
	x.m.Warnings = append(x.m.Warnings, config.Warning{Origin: p.Origin, Message: fmt.Sprintf(format, args...)})
}

func (x *mapper) int(p config.ClientProp) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(p.Value.Reveal()), 10, 64)
	if err != nil || n < 0 {
		x.bad(p, "%s must be a non-negative integer, got %q", p.Key, p.Display())
		return 0, false
	}
	return n, true
}

func (x *mapper) int32(p config.ClientProp) (int32, bool) {
	n, ok := x.int(p)
	return int32(min(n, 1<<30)), ok
}

func (x *mapper) ms(p config.ClientProp) (time.Duration, bool) {
	n, ok := x.int(p)
	return time.Duration(n) * time.Millisecond, ok
}

// common handles keys shared by every Java client and reports whether it
// consumed the key.
func (x *mapper) common(p config.ClientProp, v string) bool {
	switch p.Key {
	case "bootstrap.servers", "client.id":
		// Applied by New (seed brokers, client id prefix).
	case "security.protocol":
		x.protocol, x.protocolProp = strings.ToUpper(v), p
	case "request.timeout.ms":
		if d, ok := x.ms(p); ok {
			x.add(kgo.RequestTimeoutOverhead(d))
		}
	case "metadata.max.age.ms":
		if d, ok := x.ms(p); ok {
			x.add(kgo.MetadataMaxAge(d))
		}
	case "connections.max.idle.ms":
		if d, ok := x.ms(p); ok {
			x.add(kgo.ConnIdleTimeout(d))
		}
	case "socket.connection.setup.timeout.ms":
		if d, ok := x.ms(p); ok {
			x.add(kgo.DialTimeout(d))
		}
	case "retry.backoff.ms":
		if d, ok := x.ms(p); ok {
			x.add(kgo.RetryBackoffFn(func(int) time.Duration { return d }))
		}
	case "client.rack":
		x.add(kgo.Rack(v))
	case "key.serializer", "value.serializer", "key.deserializer", "value.deserializer":
		// Strait copies bytes; Java serializers do not apply.
	case "metric.reporters", "auto.include.jmx.reporter", "metrics.num.samples", "metrics.sample.window.ms", "metrics.recording.level",
		"interceptor.classes", "reconnect.backoff.ms", "reconnect.backoff.max.ms", "retry.backoff.max.ms", "socket.connection.setup.timeout.max.ms",
		"send.buffer.bytes", "receive.buffer.bytes", "client.dns.lookup", "enable.metrics.push":
		x.warn(p, "%s has no franz-go equivalent and is ignored", p.Key)
	default:
		// ssl.* and sasl.* are read by security, once the protocol is known.
		return strings.HasPrefix(p.Key, "ssl.") || strings.HasPrefix(p.Key, "sasl.")
	}
	return true
}

// security adds TLS and SASL as security.protocol asks (tlsconf and
// saslconf read the ssl.* and sasl.* keys). Java ignores the keys of a
// layer the protocol does not use; Strait warns about each, so that a
// forgotten security.protocol does not go unnoticed.
func (x *mapper) security(c config.Client) {
	protocol := cmp.Or(x.protocol, "PLAINTEXT")
	useTLS := protocol == "SSL" || protocol == "SASL_SSL"
	useSASL := protocol == "SASL_PLAINTEXT" || protocol == "SASL_SSL"
	for _, p := range c.Props {
		switch {
		case strings.HasPrefix(p.Key, "ssl.") && !useTLS:
			x.warn(p, "%s has no effect with security.protocol=%s: set security.protocol to SSL or SASL_SSL to use TLS", p.Key, protocol)
		case strings.HasPrefix(p.Key, "sasl.") && !useSASL:
			x.warn(p, "%s has no effect with security.protocol=%s: set security.protocol to SASL_PLAINTEXT or SASL_SSL to use SASL", p.Key, protocol)
		}
	}
	if useTLS {
		cfg, warnings, err := tlsconf.Build(c, tlsconf.Options{})
		x.adopt(warnings, err)
		if cfg != nil {
			x.add(kgo.DialTLSConfig(cfg))
		}
	}
	if useSASL {
		// Checked here, built again for each client by Build: a mechanism
		// belongs to one client, which closes it (a Kerberos login's
		// renewal, a token endpoint's connections) when it closes.
		mech, warnings, err := saslconf.Build(c, saslconf.Options{})
		x.adopt(warnings, err)
		if mech != nil {
			closeMechanism(mech)
			x.m.sasl = true
		}
	}
}

func closeMechanism(m sasl.Mechanism) {
	if c, ok := m.(sasl.ClosingMechanism); ok {
		c.Close()
	}
}

// adopt takes the warnings and problems of tlsconf or saslconf: their
// errors are config.Problem values, joined.
func (x *mapper) adopt(warnings []config.Warning, err error) {
	x.m.Warnings = append(x.m.Warnings, warnings...)
	if err == nil {
		return
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var p config.Problem
		if errors.As(e, &p) {
			x.errs = append(x.errs, p)
			continue
		}
		x.errs = append(x.errs, Problem{Origin: x.protocolProp.Origin, Message: e.Error()})
	}
}

func (x *mapper) producer(p config.ClientProp, v string) {
	s := &x.m.Settings
	switch p.Key {
	case "compression.type":
		if _, ok := Codec(v); !ok {
			x.bad(p, "compression.type must be one of none, gzip, snappy, lz4, zstd; got %q", v)
			return
		}
		s.Compression = strings.ToLower(v)
		x.compressionProp = p
	case "compression.gzip.level", "compression.lz4.level", "compression.zstd.level":
		codec := batch.CodecNamed(strings.TrimSuffix(strings.TrimPrefix(p.Key, "compression."), ".level"))
		n, err := strconv.Atoi(v)
		if err != nil {
			x.bad(p, "%s must be an integer; got %q", p.Key, p.Display())
			return
		}
		if err := batch.CheckLevel(codec, n); err != nil {
			x.bad(p, "%s %v; got %s", p.Key, err, p.Display())
			return
		}
		x.levelProp[codec], x.level[codec] = &p, n
	case "linger.ms":
		if d, ok := x.ms(p); ok {
			x.add(kgo.ProducerLinger(d))
		}
	case "acks":
		switch strings.ToLower(v) {
		case "all", "-1":
			s.Acks = "all"
			x.add(kgo.RequiredAcks(kgo.AllISRAcks()))
		case "1":
			s.Acks = "1"
			x.add(kgo.RequiredAcks(kgo.LeaderAck()))
		case "0":
			s.Acks = "0"
			x.add(kgo.RequiredAcks(kgo.NoAck()))
		default:
			x.bad(p, "acks must be all, -1, 1 or 0; got %q", v)
		}
	case "enable.idempotence":
		switch strings.ToLower(v) {
		case "true":
		case "false":
			s.Idempotent = false
			x.warn(p, "enable.idempotence=false: retries may duplicate records; Strait then keeps one request in flight")
		default:
			x.bad(p, "enable.idempotence must be true or false; got %q", v)
		}
	case "max.request.size":
		if n, ok := x.int(p); ok {
			if n < 1024 || n > 1<<30 {
				x.bad(p, "max.request.size must be between 1024 and 1073741824; got %d", n)
				return
			}
			x.add(kgo.ProducerBatchMaxBytes(int32(n)))
		}
	case "batch.size":
		x.warn(p, "batch.size has no franz-go equivalent: franz-go fills each partition batch up to max.request.size while a request is in flight; tune linger.ms instead")
	case "buffer.memory":
		if n, ok := x.int(p); ok {
			s.BufferBytes, s.BufferBytesSet = n, true
			x.add(kgo.MaxBufferedBytes(int(n)), kgo.MaxBufferedRecords(1<<20)) // bytes govern, as in Java
		}
	case "max.in.flight.requests.per.connection":
		if n, ok := x.int(p); ok {
			if n < 1 {
				x.bad(p, "max.in.flight.requests.per.connection must be at least 1; got %d", n)
				return
			}
			x.inflight, x.inflightProp = int(n), p
		}
	case "delivery.timeout.ms":
		if d, ok := x.ms(p); ok {
			x.add(kgo.RecordDeliveryTimeout(d))
		}
	case "retries":
		if n, ok := x.int32(p); ok {
			x.add(kgo.RecordRetries(int(n)))
		}
	case "max.block.ms", "partitioner.class", "partitioner.ignore.keys", "partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms":
		x.warn(p, "%s does not apply: Strait writes each record to the same partition number as its source", p.Key)
	case "transactional.id":
		x.warn(p, "transactional.id is ignored: Strait names its transactional ids itself (the progress group and the node), so that restarts fence their predecessors")
	case "transaction.timeout.ms":
		// The config reads and checks it (config.Flow.TransactionTimeout)
		// for the producer of an exactly-once flow's data.
		if !x.transactional {
			x.warn(p, "transaction.timeout.ms applies only in exactly-once mode, to the producer of an exactly-once flow's data; it is ignored here")
		}
	default:
		x.warn(p, "%s is not a Java producer setting Strait knows; it is ignored", p.Key)
	}
}

// compression adds the producer's codec at its level, once every key is
// read (Props are sorted, and compression.type comes between the level
// keys). Kafka's levels become franz-go's in batch.Compression.Kgo. A
// level key of a codec compression.type does not name is accepted, as
// Kafka accepts it (its range is still checked), and has no effect: it gets
// a warning, as other keys without effect do.
func (x *mapper) compression() {
	s := &x.m.Settings
	codec := batch.None
	if s.Compression != "" {
		codec = batch.CodecNamed(s.Compression)
	}
	for c, p := range x.levelProp {
		if p == nil || batch.Codec(c) == codec {
			continue
		}
		inUse := "compression.type=" + codec.String()
		if s.Compression == "" {
			inUse = "compression.type unset (none)"
		}
		x.warn(*p, "%s has no effect with %s: it sets the level of %s only; set compression.type=%s to use it", p.Key, inUse, batch.Codec(c), batch.Codec(c))
	}
	if s.Compression == "" {
		return
	}
	c := batch.Compression{Codec: codec, Level: x.level[codec]} // 0 unless its key is set
	kc, err := c.Kgo()
	if err != nil { // not reached: both keys were checked when read
		x.bad(x.compressionProp, "compression.type=%s: %v", s.Compression, err)
		return
	}
	s.CompressionLevel = c.Level
	x.add(kgo.ProducerBatchCompression(kc))
}

func (x *mapper) consumer(p config.ClientProp, v string) {
	s := &x.m.Settings
	switch p.Key {
	case "auto.offset.reset":
		switch strings.ToLower(v) {
		case "earliest", "latest", "none":
			s.AutoOffsetReset = strings.ToLower(v)
		default:
			x.bad(p, "auto.offset.reset must be earliest, latest or none; got %q", v)
		}
	case "isolation.level":
		switch strings.ToLower(v) {
		case "read_committed":
			s.ReadCommitted = true
		case "read_uncommitted":
			s.ReadCommitted = false
			x.warn(p, "isolation.level=read_uncommitted copies records of aborted transactions")
		default:
			x.bad(p, "isolation.level must be read_committed or read_uncommitted; got %q", v)
		}
	case "fetch.max.bytes":
		if n, ok := x.int32(p); ok {
			s.FetchMaxBytes = n
			x.add(kgo.FetchMaxBytes(n))
		}
	case "max.partition.fetch.bytes":
		if n, ok := x.int32(p); ok {
			s.PartitionFetchBytes = n
			x.add(kgo.FetchMaxPartitionBytes(n))
		}
	case "fetch.min.bytes":
		if n, ok := x.int32(p); ok {
			x.add(kgo.FetchMinBytes(n))
		}
	case "fetch.max.wait.ms":
		if d, ok := x.ms(p); ok {
			x.add(kgo.FetchMaxWait(d))
		}
	case "max.poll.records":
		if _, ok := x.int(p); ok {
			x.warn(p, "max.poll.records does not apply: Strait hands whole fetches to the producer; fetch sizes bound them")
		}
	case "check.crcs":
		if strings.EqualFold(v, "false") {
			x.add(kgo.DisableFetchCRCValidation())
		}
	case "enable.auto.commit", "auto.commit.interval.ms":
		x.warn(p, "%s is ignored: Strait commits progress itself, only after the target acknowledged the data", p.Key)
	case "group.id", "group.instance.id", "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "partition.assignment.strategy", "group.protocol", "group.remote.assignor":
		x.warn(p, "%s does not apply: Strait reads source partitions directly, without a consumer group", p.Key)
	case "exclude.internal.topics", "allow.auto.create.topics":
		x.warn(p, "%s does not apply to Strait's replication consumer", p.Key)
	default:
		x.warn(p, "%s is not a Java consumer setting Strait knows; it is ignored", p.Key)
	}
}

func (x *mapper) admin(p config.ClientProp) {
	switch p.Key {
	case "default.api.timeout.ms":
		if d, ok := x.ms(p); ok {
			x.add(kgo.RetryTimeout(d))
		}
	case "retries":
		// franz-go retries admin requests until RetryTimeout.
	default:
		x.warn(p, "%s is not a Java admin setting Strait knows; it is ignored", p.Key)
	}
}

// Codec returns the franz-go codec, at its default level, for a Java
// compression.type name.
func Codec(name string) (kgo.CompressionCodec, bool) {
	c := batch.None
	if name = strings.ToLower(strings.TrimSpace(name)); name != "" {
		c = batch.CodecNamed(name)
	}
	kc, err := batch.Compression{Codec: c}.Kgo()
	return kc, err == nil
}

// Identity names a client for logs and broker-side quotas.
type Identity struct {
	Flow string // "A->B"
	Role string // e.g. "replication-consumer"
}

// New builds a client for one role of a flow. The client id follows MM2's
// form `[<user client.id>|]<flow>|strait|<role>` so broker-side tooling can
// tell the clients apart. extra options are applied last.
func New(role Role, c config.Client, id Identity, logger *slog.Logger, extra ...kgo.Opt) (*kgo.Client, Mapped, error) {
	m, err := Map(role, c)
	if err != nil {
		return nil, m, err
	}
	cl, err := Build(m, c, id, logger, extra...)
	return cl, m, err
}

// Build creates a client from settings Map already translated, for callers
// that need the settings to choose extra options.
func Build(m Mapped, c config.Client, id Identity, logger *slog.Logger, extra ...kgo.Opt) (*kgo.Client, error) {
	brokers := seeds(c)
	if len(brokers) == 0 {
		return nil, fmt.Errorf("cluster %q has no bootstrap.servers: set %s.bootstrap.servers", c.Cluster, c.Cluster)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	clientID := id.Flow + "|strait|" + id.Role
	if user, ok := c.Get("client.id"); ok && strings.TrimSpace(user) != "" {
		clientID = strings.TrimSpace(user) + "|" + clientID
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(brokers...),
		kgo.ClientID(clientID),
		kgo.WithLogger(NewLogger(logger.With("cluster", c.Cluster, "client", id.Role))),
		kgo.MetadataMinAge(time.Second),
	}
	opts = append(opts, m.Opts...)
	var mech sasl.Mechanism
	if m.sasl {
		var err error
		if mech, _, err = saslconf.Build(c, saslconf.Options{Log: logger}); err != nil {
			return nil, err // Map checked the same settings: only a file read at start can fail here
		}
		opts = append(opts, kgo.SASL(mech))
	}
	opts = append(opts, extra...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		if mech != nil {
			closeMechanism(mech)
		}
		return nil, fmt.Errorf("creating %s client for cluster %q: %w", id.Role, c.Cluster, err)
	}
	return cl, nil
}

// seeds returns the bootstrap servers of c, skipping empty entries as
// Kafka's ClientUtils does.
func seeds(c config.Client) []string {
	v, _ := c.Get("bootstrap.servers")
	var brokers []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			brokers = append(brokers, s)
		}
	}
	return brokers
}

// Ping checks that a cluster answers within timeout and turns a failure into
// an error that names the alias and the addresses to check.
func Ping(ctx context.Context, cl *kgo.Client, alias string, bootstrap string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if mechs, _ := cl.OptValue(kgo.SASL).([]sasl.Mechanism); len(mechs) > 0 {
		if l, ok := mechs[0].(interface{ Login(context.Context) error }); ok {
			if err := l.Login(ctx); err != nil {
				return err // names the cluster and what to check
			}
		}
	}
	if err := cl.Ping(ctx); err != nil {
		var login *saslconf.LoginError
		if errors.As(err, &login) {
			return login // the brokers answered; logging in failed
		}
		if x := Explain(alias, err); x != err {
			return x // a TLS or SASL failure: the brokers are reachable
		}
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			err = fmt.Errorf("no broker answered within %s", timeout)
		}
		return fmt.Errorf("cluster %q: cannot reach bootstrap servers %s: %w (check %s.bootstrap.servers and that the brokers are up)", alias, bootstrap, err, alias)
	}
	return nil
}
