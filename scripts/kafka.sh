#!/usr/bin/env bash
# kafka.sh: a disposable real Apache Kafka test bed for Strait.
#
# It fetches the Kafka jars with Maven (no tarball, nothing installed system-wide), starts
# single-node KRaft clusters on loopback, stops and restarts them for fault tests, and runs
# Apache MirrorMaker 2 from the same jars for interop tests and benchmarks.
# Run `scripts/kafka.sh help` for the commands. Progress goes to stderr; results to stdout.
set -euo pipefail

PROG=${0##*/}
# shellcheck source=scripts/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
SELF=$(cd "$(dirname "$0")" && pwd)/${0##*/}

KAFKA_VERSION=${KAFKA_VERSION:-4.1.1}
STRAIT_CACHE=${STRAIT_CACHE:-$HOME/.cache/strait}
KAFKA_HEAP=${KAFKA_HEAP:-512m}
KAFKA_HEAP_MIN=${KAFKA_HEAP_MIN:-}
KAFKA_START_TIMEOUT=${KAFKA_START_TIMEOUT:-60}

readonly LOG4J2_VERSION=2.24.3
readonly STOP_TIMEOUT=20
readonly PORT_MIN=20000
# Ports stay below the kernel's ephemeral range: a broker restarted on its old port finds
# it taken when an outgoing connection got it as its local port meanwhile (a fault test
# failed with "port 33586 is in use" so).
ephemeral_low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
[[ $ephemeral_low =~ ^[0-9]+$ ]] && ((ephemeral_low > PORT_MIN + 1000)) || ephemeral_low=32768
PORT_MAX=$((ephemeral_low - 1))
readonly PORT_MAX
unset ephemeral_low
readonly BIND_RETRIES=3
readonly INSTALL_HINT="Debian/Ubuntu: apt-get install openjdk-17-jre-headless maven"
# The client listeners start --security adds to every broker, besides PLAINTEXT.
readonly SECURE_LISTENERS=(SSL SASL_SSL SASL_PLAINTEXT OAUTH EXPIRED)
# The listener --kerberos adds (SASL_PLAINTEXT + GSSAPI), and every client listener besides
# PLAINTEXT in the order the output lists them.
readonly KERBEROS_LISTENER=GSSAPI
readonly CLIENT_LISTENERS=("${SECURE_LISTENERS[@]}" "$KERBEROS_LISTENER")
# The JVM system property that Kafka 4.x requires to list every OAuth URL (the JWKS file).
readonly OAUTH_ALLOWED_URLS=org.apache.kafka.sasl.oauthbearer.allowed.urls

usage() {
	cat <<EOF
Usage: $PROG COMMAND [options]

Commands:
  fetch                         fetch the jars of Apache Kafka \$KAFKA_VERSION with Maven
  classpath                     fetch if needed, print the Java classpath of those jars
  log4j-config                  fetch if needed, print the path of the log config for \$KAFKA_VERSION
                                (a JVM using it must also get -Dstrait.log.file=FILE)
  start [-n N] [-d DIR] [--heap SIZE] [--heap-min SIZE] [--owner PID] [--brokers SPEC]
        [--external NAME[:ID]=PORT ...] [--set KEY=VALUE ...] [--security SDIR
        [--kerberos KDIR]]
                                start N (default 2) KRaft clusters named a, b, ... in DIR/<name>
                                (default: a new temporary dir); prints one line
                                '<name> <bootstrap> <dir>' per cluster, then DIR. With --owner,
                                a watchdog stops the clusters (keeping DIR) once PID has exited.
                                --brokers: brokers per cluster, one number for all or one per
                                cluster (1,1,3); each broker is a combined broker+controller,
                                and a cluster of 3 replicates its internal topics 3 times.
                                --external: broker ID (default 1) of cluster NAME gets a second
                                listener, EXTERNAL, on a port of its own, and advertises it as
                                127.0.0.1:PORT, where the caller runs a proxy to it; brokers
                                talk to each other on their first listener only.
                                --set: add KEY=VALUE to every broker's server.properties.
                                Brokers of a cluster with several brokers or an external
                                listener also get a line 'node <name>:<id> <address>
                                <external listener|-> <advertised external|-> <dir>'.
                                --security: every broker also gets the client listeners
                                below, each on its own 127.0.0.1 port, and the output a line
                                'listener <name> <LISTENER> <bootstrap>' per cluster and
                                listener. PLAINTEXT stays the inter-broker listener.
                                  SSL             TLS, client certificate required
                                  SASL_SSL        TLS + SCRAM-SHA-256 and SCRAM-SHA-512
                                  SASL_PLAINTEXT  PLAIN
                                  OAUTH           SASL_PLAINTEXT + OAUTHBEARER: RS256 JWTs
                                                  checked against SDIR/jwks.json; a session
                                                  ends when its token expires
                                  EXPIRED         TLS with an expired broker certificate
                                SDIR (made by the caller; the brokers read it while they run):
                                  broker.pem          PEM keystore: unencrypted PKCS#8 key,
                                                      then the chain (SAN IP 127.0.0.1 only);
                                                      SSL, SASL_SSL
                                  broker-expired.pem  the same, expired; EXPIRED
                                  ca.pem              CA(s) trusted for client certificates
                                  jwks.json           JWKS of the keys that sign OAuth JWTs
                                  oauth.env           ISSUER=... and AUDIENCE=... that JWTs
                                                      must carry (iss, aud)
                                  users.env           lines scram:NAME=PASSWORD (a user of
                                                      both SCRAM mechanisms, made at format
                                                      time) and plain:NAME=PASSWORD; NAME
                                                      [A-Za-z][A-Za-z0-9_-]*, PASSWORD
                                                      [A-Za-z0-9._-]+
                                The brokers' JVMs run with the system property
                                $OAUTH_ALLOWED_URLS=file://SDIR/jwks.json.
                                --kerberos (with --security): every broker also gets
                                  GSSAPI          SASL_PLAINTEXT + GSSAPI (Kerberos): the
                                                  broker logs in to the KDC of KDIR with
                                                  the keytab of its service principal,
                                                  which must be SERVICE_NAME/127.0.0.1@REALM
                                                  (clients ask for a ticket to
                                                  SERVICE_NAME/<host they dialled>)
                                and its JVM -Djava.security.krb5.conf=KDIR's krb5.conf.
                                KDIR is a realm of scripts/kdc.sh (start it first; it must
                                run while brokers start); read from KDIR/kdc.env:
                                  KRB5_CONFIG       the realm's krb5.conf
                                  SERVICE_NAME      sasl.kerberos.service.name (kafka)
                                  BROKER_PRINCIPAL  the brokers' service principal
                                  BROKER_KEYTAB     its keytab
  stop [-d DIR] [--keep]        stop every cluster of DIR and remove DIR unless --keep
  stop-broker [-d DIR] NAME [--node ID] [--kill]
                                stop a cluster's brokers, or only broker ID (SIGTERM, or
                                SIGKILL with --kill); data is kept
  start-broker [-d DIR] NAME [--node ID]
                                start stopped brokers again, same ports (every listener's)
                                and data
  restart-broker [-d DIR] NAME [--node ID] [--kill]
                                stop-broker then start-broker
  mm2 [-d DIR] [-c FILE] [--heap SIZE] [--log FILE] [-- ARGS...]
                                run Apache MirrorMaker 2 (dedicated mode) in the foreground with
                                FILE (default DIR/mm2.properties), logging to DIR/mm2.log
  help                          print this text

Without -d, DIR is the one the last 'start' without -d created.

Environment:
  KAFKA_VERSION        Kafka version to fetch and run (default 4.1.1; 3.9.x works too)
  STRAIT_CACHE         cache for the jars (default \$HOME/.cache/strait)
  KAFKA_HEAP           broker max heap (default 512m)
  KAFKA_HEAP_MIN       broker initial heap (default 256m, or the max heap if smaller); the
                       benchmark sets it to the max, as Kafka's own kafka-server-start.sh does
  KAFKA_START_TIMEOUT  seconds to wait for each broker to become ready (default 60)
EOF
}

need_tool() {
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "$PROG: '$1' not found in PATH: install Java 17+ and Maven ($INSTALL_HINT)" >&2
		exit 2
	fi
}

check_version() {
	[[ $KAFKA_VERSION =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?([.-][A-Za-z0-9]+)*$ ]] ||
		usage_error "KAFKA_VERSION=$KAFKA_VERSION is not a Kafka version such as 4.1.1 or 3.9.1"
}

check_heap() {
	[[ $1 =~ ^[0-9]+[mMgG]$ ]] || usage_error "heap size '$1' must look like 512m or 1g"
}

# kafka_major prints the major version: 4.x logs with log4j 2, 3.x with reload4j (log4j 1).
kafka_major() {
	echo "${KAFKA_VERSION%%.*}"
}

version_dir() {
	echo "$STRAIT_CACHE/kafka-$KAFKA_VERSION"
}

libs_dir() {
	echo "$(version_dir)/libs"
}

write_pom() {
	local deps="" a
	for a in kafka_2.13 kafka-tools connect-mirror connect-mirror-client connect-runtime; do
		deps+="    <dependency><groupId>org.apache.kafka</groupId><artifactId>$a</artifactId><version>$KAFKA_VERSION</version></dependency>
"
	done
	if (($(kafka_major) >= 4)); then
		# Kafka 4.x declares slf4j-api 1.7 and no backend: bind it to log4j 2.
		for a in log4j-slf4j-impl log4j-core; do
			deps+="    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>$a</artifactId><version>$LOG4J2_VERSION</version></dependency>
"
		done
	fi
	cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by strait scripts/kafka.sh: the jars of Apache Kafka $KAFKA_VERSION. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>strait.testbed</groupId>
  <artifactId>kafka-jars</artifactId>
  <version>$KAFKA_VERSION</version>
  <packaging>pom</packaging>
  <dependencies>
$deps  </dependencies>
</project>
EOF
}

# write_log_configs writes both flavours into $1; a JVM picks its file with -Dstrait.log.file.
# They are rewritten on every use (atomically), so a changed template reaches old caches.
write_log_configs() {
	local vdir=$1 tmp
	tmp=$(mktemp "$vdir/log4j2.xml.XXXXXX")
	cat >"$tmp" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by strait scripts/kafka.sh. Set -Dstrait.log.file=FILE. -->
<Configuration status="error">
  <Appenders>
    <File name="file" fileName="${sys:strait.log.file:-strait-kafka.log}" append="true">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
    </File>
  </Appenders>
  <Loggers>
    <Logger name="kafka.request.logger" level="warn"/>
    <Root level="${sys:strait.log.level:-info}">
      <AppenderRef ref="file"/>
    </Root>
  </Loggers>
</Configuration>
EOF
	chmod 644 "$tmp"
	mv -f "$tmp" "$vdir/log4j2.xml"
	tmp=$(mktemp "$vdir/log4j.properties.XXXXXX")
	cat >"$tmp" <<'EOF'
# Generated by strait scripts/kafka.sh (reload4j, Kafka 3.x). Set -Dstrait.log.file=FILE.
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=${strait.log.file}
log4j.appender.file.Append=true
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
EOF
	chmod 644 "$tmp"
	mv -f "$tmp" "$vdir/log4j.properties"
}

log_config_path() {
	if (($(kafka_major) >= 4)); then
		echo "$(version_dir)/log4j2.xml"
	else
		echo "$(version_dir)/log4j.properties"
	fi
}

# java_log_opts sets LOG_OPTS to the JVM flags that send the log to file $1.
java_log_opts() {
	local cfg
	cfg=$(log_config_path)
	if (($(kafka_major) >= 4)); then
		LOG_OPTS=("-Dlog4j2.configurationFile=$cfg" "-Dstrait.log.file=$1")
	else
		LOG_OPTS=("-Dlog4j.configuration=file:$cfg" "-Dstrait.log.file=$1")
	fi
}

cmd_fetch() {
	check_version
	local vdir libs marker tmp
	vdir=$(version_dir)
	libs=$vdir/libs
	marker=$vdir/.fetched
	if [[ -f $marker && -d $libs ]]; then
		write_log_configs "$vdir"
		return 0
	fi
	need_tool java
	need_tool mvn
	mkdir -p "$vdir"
	# Parallel `go test` packages may fetch at once: serialise them on a lock file.
	exec 9>"$vdir/.lock"
	if command -v flock >/dev/null 2>&1; then
		flock -w 900 9 || die "waited 15 minutes for another fetch of Kafka $KAFKA_VERSION (lock $vdir/.lock); remove the lock if no fetch is running"
	fi
	if [[ -f $marker && -d $libs ]]; then
		exec 9>&-
		write_log_configs "$vdir"
		return 0
	fi
	info "fetching Apache Kafka $KAFKA_VERSION jars with Maven into $libs"
	write_pom >"$vdir/pom.xml"
	tmp=$(mktemp -d "$vdir/libs.tmp.XXXXXX")
	if ! mvn -q -B -Dstyle.color=never -f "$vdir/pom.xml" dependency:copy-dependencies -DoutputDirectory="$tmp" >"$vdir/fetch.log" 2>&1; then
		rm -rf "$tmp"
		tail -n 30 "$vdir/fetch.log" >&2 || true
		die "Maven could not fetch Apache Kafka $KAFKA_VERSION (log: $vdir/fetch.log): check that Maven Central is reachable and that the version exists"
	fi
	if [[ ! -f $tmp/kafka_2.13-$KAFKA_VERSION.jar ]]; then
		rm -rf "$tmp"
		die "Maven finished but kafka_2.13-$KAFKA_VERSION.jar is missing (log: $vdir/fetch.log)"
	fi
	write_log_configs "$vdir"
	rm -rf "$libs"
	mv "$tmp" "$libs"
	touch "$marker"
	exec 9>&-
	info "fetched $(find "$libs" -name '*.jar' | wc -l) jars"
}

cmd_classpath() {
	[[ $# -eq 0 ]] || usage_error "classpath takes no arguments"
	cmd_fetch
	echo "$(libs_dir)/*"
}

cmd_log4j_config() {
	[[ $# -eq 0 ]] || usage_error "log4j-config takes no arguments"
	cmd_fetch
	log_config_path
}

# ---- test bed state -------------------------------------------------------------------

last_dir_file() {
	echo "$STRAIT_CACHE/last-testbed"
}

# resolve_dir prints DIR or, when empty, the dir of the last start without -d.
resolve_dir() {
	local dir=$1
	if [[ -z $dir ]]; then
		[[ -f $(last_dir_file) ]] || usage_error "no -d DIR given and no test bed started without -d to default to"
		dir=$(<"$(last_dir_file)")
		info "using test bed $dir"
	fi
	echo "$dir"
}

# load_testbed reads DIR/testbed.env, so a dir keeps running the Kafka it was started with.
load_testbed() {
	local dir=$1 key value
	[[ -f $dir/testbed.env ]] || die "$dir is not a test bed (no testbed.env): pass the DIR that 'start' printed"
	while IFS='=' read -r key value; do
		case $key in
		KAFKA_VERSION) KAFKA_VERSION=$value ;;
		KAFKA_HEAP) KAFKA_HEAP=$value ;;
		KAFKA_HEAP_MIN) KAFKA_HEAP_MIN=$value ;;
		SECURITY_DIR) SECURITY_DIR=$value ;;
		KERBEROS_DIR) KERBEROS_DIR=$value ;;
		KRB5_CONF) KRB5_CONF=$value ;;
		esac
	done <"$dir/testbed.env"
}

# A cluster of one broker keeps that broker's config, data and logs in its own dir, cdir
# (cluster.env holds its ports). A cluster of several brokers (start --brokers) keeps broker
# ID in cdir/ID, with its ports in cdir/ID/node.env; its cluster.env says BROKERS=N.

# node_dirs prints the dir of every broker of cdir, one a line. It tolerates a cdir that
# start has not written yet (for abort_start).
node_dirs() {
	local cdir=$1 n=1 key value i
	if [[ -f $cdir/cluster.env ]]; then
		while IFS='=' read -r key value; do
			[[ $key == BROKERS ]] && n=$value
		done <"$cdir/cluster.env"
	fi
	if ((n <= 1)); then
		echo "$cdir"
	else
		for ((i = 1; i <= n; i++)); do
			echo "$cdir/$i"
		done
	fi
}

# cluster_dir prints the cluster dir of a broker dir.
cluster_dir() {
	if [[ -f $1/node.env ]]; then dirname "$1"; else echo "$1"; fi
}

# LISTENER_PORTS maps a --security listener name to its port on the broker load_node
# loaded; LISTENER_BOOTSTRAPS maps it to every broker's address of the cluster load_cluster
# loaded, comma-separated. Both are empty without --security.
declare -A LISTENER_PORTS=() LISTENER_BOOTSTRAPS=()

# load_cluster sets BROKERS, NODE_DIRS (the brokers' dirs), BOOTSTRAP (every broker's
# address, comma-separated) and LISTENER_BOOTSTRAPS for cdir.
load_cluster() {
	local cdir=$1 bdir name
	[[ -f $cdir/cluster.env ]] || die "no cluster at $cdir (missing cluster.env): the names are a, b, c, ... as 'start' printed them"
	mapfile -t NODE_DIRS < <(node_dirs "$cdir")
	BROKERS=${#NODE_DIRS[@]}
	BOOTSTRAP=""
	LISTENER_BOOTSTRAPS=()
	for bdir in "${NODE_DIRS[@]}"; do
		load_node "$bdir"
		BOOTSTRAP+="${BOOTSTRAP:+,}127.0.0.1:$PORT"
		for name in "${!LISTENER_PORTS[@]}"; do
			LISTENER_BOOTSTRAPS[$name]+="${LISTENER_BOOTSTRAPS[$name]:+,}127.0.0.1:${LISTENER_PORTS[$name]}"
		done
	done
}

# load_node sets NODE_ID, PORT, CONTROLLER_PORT, LISTENER_PORTS and, for a broker with an
# external listener, EXTERNAL_PORT (where it listens) and ADVERTISED_PORT (what it
# advertises).
load_node() {
	local bdir=$1 f key value
	f=$bdir/node.env
	[[ -f $f ]] || f=$bdir/cluster.env
	[[ -f $f ]] || die "no broker at $bdir (missing node.env)"
	NODE_ID=1 PORT="" CONTROLLER_PORT="" EXTERNAL_PORT="" ADVERTISED_PORT=""
	LISTENER_PORTS=()
	while IFS='=' read -r key value; do
		case $key in
		NODE_ID) NODE_ID=$value ;;
		PORT) PORT=$value ;;
		CONTROLLER_PORT) CONTROLLER_PORT=$value ;;
		EXTERNAL_PORT) EXTERNAL_PORT=$value ;;
		ADVERTISED_PORT) ADVERTISED_PORT=$value ;;
		LISTENER_*) LISTENER_PORTS[${key#LISTENER_}]=$value ;;
		esac
	done <"$f"
	[[ -n $PORT && -n $CONTROLLER_PORT ]] || die "$f lacks PORT or CONTROLLER_PORT"
}

# listener_ports prints the --security and --kerberos listener ports of the broker
# load_node loaded, space-separated, in CLIENT_LISTENERS order.
listener_ports() {
	local name out=""
	for name in "${CLIENT_LISTENERS[@]}"; do
		[[ -n ${LISTENER_PORTS[$name]:-} ]] && out+="${out:+ }${LISTENER_PORTS[$name]}"
	done
	echo "$out"
}

# broker_label names a broker in messages: "cluster a", or "cluster c broker 2".
broker_label() {
	local cdir
	cdir=$(cluster_dir "$1")
	if [[ $cdir == "$1" ]]; then
		echo "cluster ${1##*/}"
	else
		echo "cluster ${cdir##*/} broker ${1##*/}"
	fi
}

# cluster_names lists the clusters of a test bed in name order.
cluster_names() {
	local dir=$1 d
	for d in "$dir"/*/; do
		[[ -f $d/cluster.env ]] && basename "$d"
	done
	return 0
}

# ---- ports ----------------------------------------------------------------------------

# port_answers succeeds if something accepts connections on 127.0.0.1:$1.
port_answers() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

port_bindable() {
	if command -v perl >/dev/null 2>&1; then
		perl -MIO::Socket::INET -e 'IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0], Proto => "tcp", Listen => 1, ReuseAddr => 1) or exit 1' "$1"
	elif command -v python3 >/dev/null 2>&1; then
		python3 -c 'import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
	else
		return 0 # no way to test a bind: the connect test has to do
	fi
}

port_free() {
	! port_answers "$1" && port_bindable "$1"
}

USED_PORTS=" "

# pick_port sets PICKED to a free port in [PORT_MIN, PORT_MAX] that this run has not handed
# out before. It sets a variable rather than printing, as USED_PORTS must survive the call.
pick_port() {
	local p i
	for ((i = 0; i < 200; i++)); do
		p=$((PORT_MIN + (RANDOM * 32768 + RANDOM) % (PORT_MAX - PORT_MIN + 1)))
		[[ $USED_PORTS == *" $p "* ]] && continue
		USED_PORTS+="$p "
		if port_free "$p"; then
			PICKED=$p
			return 0
		fi
	done
	die "found no free port in $PORT_MIN-$PORT_MAX after 200 tries"
}

# EXTERNAL_ADV maps "<cluster>:<broker id>" to the port that broker advertises for its
# external listener (start --external); EXTRA_PROPS are the --set lines for every broker.
declare -A EXTERNAL_ADV=()
EXTRA_PROPS=()

# pick_ports picks new free ports for the $2 brokers of cdir (listener, controller, with
# --security one per SECURE_LISTENERS, with --kerberos one for GSSAPI and, for a broker
# with an advertised external port, its external listener) and writes their configs.
pick_ports() {
	local cdir=$1 n=$2 name=${1##*/} i voters="" bdir l
	local -a ports=() cports=() eports=() sports=()
	for ((i = 1; i <= n; i++)); do
		pick_port
		ports[i]=$PICKED
		pick_port
		cports[i]=$PICKED
		eports[i]=""
		if [[ -n ${EXTERNAL_ADV[$name:$i]:-} ]]; then
			pick_port
			eports[i]=$PICKED
		fi
		sports[i]=""
		if [[ -n $SECURITY_DIR ]]; then
			for l in "${SECURE_LISTENERS[@]}"; do
				pick_port
				sports[i]+="${sports[i]:+ }$l=$PICKED"
			done
		fi
		if [[ -n $KERBEROS_DIR ]]; then
			pick_port
			sports[i]+="${sports[i]:+ }$KERBEROS_LISTENER=$PICKED"
		fi
		voters+="${voters:+,}$i@127.0.0.1:${cports[i]}"
	done
	mkdir -p "$cdir"
	if ((n == 1)); then
		write_server_properties "$cdir" 1 1 "$voters" "${ports[1]}" "${cports[1]}" "${eports[1]}" "${EXTERNAL_ADV[$name:1]:-}" "${sports[1]}"
		write_node_env "$cdir/cluster.env" 1 "${ports[1]}" "${cports[1]}" "${eports[1]}" "${EXTERNAL_ADV[$name:1]:-}" "${sports[1]}"
		return 0
	fi
	echo "BROKERS=$n" >"$cdir/cluster.env"
	for ((i = 1; i <= n; i++)); do
		bdir=$cdir/$i
		mkdir -p "$bdir"
		write_server_properties "$bdir" "$n" "$i" "$voters" "${ports[i]}" "${cports[i]}" "${eports[i]}" "${EXTERNAL_ADV[$name:$i]:-}" "${sports[i]}"
		write_node_env "$bdir/node.env" "$i" "${ports[i]}" "${cports[i]}" "${eports[i]}" "${EXTERNAL_ADV[$name:$i]:-}" "${sports[i]}"
	done
}

# write_node_env FILE ID PORT CONTROLLER_PORT [EXTERNAL_PORT ADVERTISED_PORT [SECURE]]
# writes the ports of one broker; SECURE is "NAME=PORT ..." for the --security listeners.
write_node_env() {
	local f=$1 l
	{
		# A one-broker cluster keeps the layout it always had: no NODE_ID line.
		[[ $f == */node.env ]] && echo "NODE_ID=$2"
		echo "PORT=$3"
		echo "CONTROLLER_PORT=$4"
		if [[ -n $5 ]]; then
			echo "EXTERNAL_PORT=$5"
			echo "ADVERTISED_PORT=$6"
		fi
		for l in ${7:-}; do
			echo "LISTENER_$l"
		done
	} >"$f"
}

# ---- processes ------------------------------------------------------------------------

# proc_args prints the command line of a live process (nothing for a zombie or no process).
proc_args() {
	if [[ -d /proc/$1 ]]; then
		tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null || true
	else
		ps -o args= -p "$1" 2>/dev/null || true
	fi
}

# broker_pid prints the pid of the broker of bdir if it runs, else nothing. The pid file
# alone is not trusted (pids are reused): the process must still run this broker's config.
broker_pid() {
	local bdir=$1 pid
	[[ -f $bdir/pid ]] || return 0
	pid=$(<"$bdir/pid")
	[[ $pid =~ ^[0-9]+$ ]] || return 0
	[[ $(proc_args "$pid") == *"$bdir/server.properties"* ]] && echo "$pid"
	return 0
}

# heap_mb prints a size such as 512m or 1g in MiB.
heap_mb() {
	local mb=${1%[mMgG]}
	[[ $1 == *[gG] ]] && mb=$((mb * 1024))
	echo "$mb"
}

# java_heap_opts sets HEAP_OPTS for max heap $1 and initial heap $2 (default 256m). A heap
# that starts small saves memory in tests; one that starts at its max (Kafka's own default)
# keeps G1 from running a concurrent cycle at every humongous allocation while the heap is
# still small, which shows as replication latency in a benchmark.
java_heap_opts() {
	local heap=$1 min=${2:-256m}
	(($(heap_mb "$min") <= $(heap_mb "$heap"))) || min=$heap
	HEAP_OPTS=("-Xms$min" "-Xmx$heap")
}

# write_server_properties BDIR BROKERS ID VOTERS PORT CONTROLLER_PORT [EXTERNAL_PORT
# ADVERTISED_PORT [SECURE]] writes the config of one combined broker+controller. Clients of
# the PLAINTEXT listener see PLAINTEXT addresses; with an external listener, clients of it
# see the advertised port (a proxy's), while brokers and controllers keep to their own
# listeners. SECURE ("NAME=PORT ...") adds the --security listeners, each advertised as
# itself.
write_server_properties() {
	local bdir=$1 n=$2 id=$3 voters=$4 port=$5 cport=$6 eport=${7:-} adv=${8:-} secure=${9:-}
	local listeners="PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport"
	local advertised="PLAINTEXT://127.0.0.1:$port"
	local protocols="PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
	local rf=1 isr=1 what="one combined broker+controller" line l
	if [[ -n $eport ]]; then
		listeners+=",EXTERNAL://127.0.0.1:$eport"
		advertised+=",EXTERNAL://127.0.0.1:$adv"
		protocols+=",EXTERNAL:PLAINTEXT"
	fi
	for l in $secure; do
		listeners+=",${l%%=*}://127.0.0.1:${l#*=}"
		advertised+=",${l%%=*}://127.0.0.1:${l#*=}"
	done
	[[ -z $secure ]] || protocols+=",SSL:SSL,SASL_SSL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,OAUTH:SASL_PLAINTEXT,EXPIRED:SSL"
	[[ " $secure" != *" $KERBEROS_LISTENER="* ]] || protocols+=",$KERBEROS_LISTENER:SASL_PLAINTEXT"
	if ((n > 1)); then
		rf=$((n < 3 ? n : 3))
		isr=$((rf - 1))
		what="combined broker+controller $id of $n"
	fi
	cat >"$bdir/server.properties" <<EOF
# Generated by strait scripts/kafka.sh: $what, loopback only.
process.roles=broker,controller
node.id=$id
controller.quorum.voters=$voters
listeners=$listeners
advertised.listeners=$advertised
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=$protocols
log.dirs=$bdir/data
num.partitions=1
default.replication.factor=$rf
min.insync.replicas=$isr
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
transaction.state.log.num.partitions=3
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$isr
group.initial.rebalance.delay.ms=0
# After a SIGKILL the restarted broker waits until the controller fences its old
# registration: a short session makes kill-and-restart tests take ~4 s instead of ~10 s.
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500
auto.create.topics.enable=false
log.retention.check.interval.ms=1000
# The cleaner's dedupe map is one heap buffer, 128 MiB by default: in a 512 MiB heap a
# cleaner restarted by a dynamic config change can fail to find room for a second one
# (the broker died with OutOfMemoryError so). 32 MiB maps 1.2 million keys per cleaning.
log.cleaner.dedupe.buffer.size=33554432
EOF
	[[ -z $secure ]] || write_security_properties >>"$bdir/server.properties"
	[[ " $secure" != *" $KERBEROS_LISTENER="* ]] || write_kerberos_properties >>"$bdir/server.properties"
	if [[ ${#EXTRA_PROPS[@]} -gt 0 ]]; then
		{
			echo "# Set with --set."
			for line in "${EXTRA_PROPS[@]}"; do
				echo "$line"
			done
		} >>"$bdir/server.properties"
	fi
}

# write_security_properties prints the settings of the --security listeners (see usage).
# Every listener-prefixed key applies to that listener only; a mechanism-prefixed key
# (listener.name.L.MECH.KEY) to that SASL mechanism of it.
write_security_properties() {
	local sdir=$SECURITY_DIR u plain_users=""
	for u in "${PLAIN_USERS[@]+"${PLAIN_USERS[@]}"}"; do
		plain_users+=" user_${u%%=*}=\"${u#*=}\""
	done
	cat <<EOF
# --security: client listeners with TLS, SCRAM, PLAIN and OAUTHBEARER, from $sdir.
ssl.keystore.type=PEM
ssl.keystore.location=$sdir/broker.pem
ssl.truststore.type=PEM
ssl.truststore.location=$sdir/ca.pem
listener.name.ssl.ssl.client.auth=required
listener.name.expired.ssl.keystore.type=PEM
listener.name.expired.ssl.keystore.location=$sdir/broker-expired.pem
listener.name.expired.ssl.client.auth=none
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required$plain_users;
listener.name.oauth.sasl.enabled.mechanisms=OAUTHBEARER
listener.name.oauth.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
listener.name.oauth.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
# In Kafka 4.1 that handler makes the default validator (DefaultJwtValidator) without a JWKS
# key resolver, so it delegates to ClientJwtValidator: no signature, audience or issuer
# check, and forged tokens pass. BrokerJwtValidator makes its resolver from the URL below.
listener.name.oauth.sasl.oauthbearer.jwt.validator.class=org.apache.kafka.common.security.oauthbearer.BrokerJwtValidator
# Kafka 4.x also needs this URL in the JVM property $OAUTH_ALLOWED_URLS (launch_broker).
listener.name.oauth.sasl.oauthbearer.jwks.endpoint.url=$(jwks_url)
listener.name.oauth.sasl.oauthbearer.expected.issuer=$OAUTH_ISSUER
listener.name.oauth.sasl.oauthbearer.expected.audience=$OAUTH_AUDIENCE
# A session lasts as long as its token (at most an hour): clients must re-authenticate with a
# fresh token before it expires, or the broker closes the connection.
listener.name.oauth.oauthbearer.connections.max.reauth.ms=3600000
EOF
}

# write_kerberos_properties prints the settings of the --kerberos listener (see usage).
write_kerberos_properties() {
	cat <<EOF
# --kerberos: a GSSAPI client listener, logged in to the KDC of $KERBEROS_DIR.
listener.name.gssapi.sasl.enabled.mechanisms=GSSAPI
listener.name.gssapi.sasl.kerberos.service.name=$KERBEROS_SERVICE_NAME
listener.name.gssapi.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="$KERBEROS_KEYTAB" principal="$KERBEROS_PRINCIPAL";
EOF
}

jwks_url() {
	echo "file://$SECURITY_DIR/jwks.json"
}

# SECURITY_DIR is the --security dir of the test bed (empty without); SCRAM_USERS,
# PLAIN_USERS (NAME=PASSWORD each), OAUTH_ISSUER and OAUTH_AUDIENCE are what load_security
# read from it.
SECURITY_DIR=""
# KERBEROS_DIR is the --kerberos dir (empty without) and KRB5_CONF its krb5.conf, for the
# brokers' JVMs; KERBEROS_SERVICE_NAME, KERBEROS_PRINCIPAL and KERBEROS_KEYTAB are what
# load_kerberos read from it for their configs.
KERBEROS_DIR=""
KRB5_CONF=""
KERBEROS_SERVICE_NAME=""
KERBEROS_PRINCIPAL=""
KERBEROS_KEYTAB=""
SCRAM_USERS=()
PLAIN_USERS=()
OAUTH_ISSUER=""
OAUTH_AUDIENCE=""

# load_security checks the --security dir $1 and reads its users and OAuth claims.
load_security() {
	local sdir=$1 f key value kind name
	[[ -d $sdir ]] || usage_error "--security $sdir is not a directory"
	sdir=$(cd "$sdir" && pwd)
	# The path goes into server.properties and into a comma-separated JVM property.
	[[ $sdir =~ ^[A-Za-z0-9._/+-]+$ ]] || usage_error "--security $sdir: the path may hold only letters, digits and ._/+-"
	for f in broker.pem broker-expired.pem ca.pem jwks.json oauth.env users.env; do
		[[ -s $sdir/$f ]] || usage_error "--security $sdir lacks $f (see '$PROG help')"
	done
	SCRAM_USERS=() PLAIN_USERS=() OAUTH_ISSUER="" OAUTH_AUDIENCE=""
	while IFS='=' read -r key value; do
		[[ -z $key || $key == \#* ]] && continue
		kind=${key%%:*} name=${key#*:}
		[[ $key == *:* && $name =~ ^[A-Za-z][A-Za-z0-9_-]*$ && $value =~ ^[A-Za-z0-9._-]+$ ]] ||
			usage_error "$sdir/users.env: line '$key=...' must be scram:NAME=PASSWORD or plain:NAME=PASSWORD (NAME [A-Za-z][A-Za-z0-9_-]*, PASSWORD [A-Za-z0-9._-]+)"
		case $kind in
		scram) SCRAM_USERS+=("$name=$value") ;;
		plain) PLAIN_USERS+=("$name=$value") ;;
		*) usage_error "$sdir/users.env: unknown kind '$kind' (scram or plain)" ;;
		esac
	done <"$sdir/users.env"
	while IFS='=' read -r key value; do
		case $key in
		ISSUER) OAUTH_ISSUER=$value ;;
		AUDIENCE) OAUTH_AUDIENCE=$value ;;
		esac
	done <"$sdir/oauth.env"
	[[ $OAUTH_ISSUER =~ ^[^[:space:][:cntrl:],]+$ && $OAUTH_AUDIENCE =~ ^[^[:space:][:cntrl:],]+$ ]] ||
		usage_error "$sdir/oauth.env must set ISSUER=... and AUDIENCE=... (no spaces or commas)"
	SECURITY_DIR=$sdir
}

# load_kerberos checks the --kerberos dir $1 (a realm of scripts/kdc.sh) and reads what the
# brokers need from its kdc.env.
load_kerberos() {
	local kdir=$1 key value f
	[[ -d $kdir ]] || usage_error "--kerberos $kdir is not a directory"
	kdir=$(cd "$kdir" && pwd)
	[[ -s $kdir/kdc.env ]] || usage_error "--kerberos $kdir lacks kdc.env: make the realm with scripts/kdc.sh start $kdir"
	KRB5_CONF="" KERBEROS_SERVICE_NAME="" KERBEROS_PRINCIPAL="" KERBEROS_KEYTAB=""
	while IFS='=' read -r key value; do
		case $key in
		KRB5_CONFIG) KRB5_CONF=$value ;;
		SERVICE_NAME) KERBEROS_SERVICE_NAME=$value ;;
		BROKER_PRINCIPAL) KERBEROS_PRINCIPAL=$value ;;
		BROKER_KEYTAB) KERBEROS_KEYTAB=$value ;;
		esac
	done <"$kdir/kdc.env"
	# The paths and the principal go into server.properties and a JAAS line.
	for f in "$KRB5_CONF" "$KERBEROS_KEYTAB"; do
		[[ $f =~ ^/[A-Za-z0-9._/+-]+$ ]] || usage_error "$kdir/kdc.env: KRB5_CONFIG and BROKER_KEYTAB must be absolute paths of letters, digits and ._/+-, not '$f'"
		[[ -s $f ]] || usage_error "$kdir/kdc.env names $f, which does not exist or is empty"
	done
	[[ $KERBEROS_SERVICE_NAME =~ ^[A-Za-z0-9._-]+$ ]] || usage_error "$kdir/kdc.env: SERVICE_NAME must be a name such as kafka, not '$KERBEROS_SERVICE_NAME'"
	[[ $KERBEROS_PRINCIPAL == "$KERBEROS_SERVICE_NAME/127.0.0.1@"* && $KERBEROS_PRINCIPAL =~ ^[A-Za-z0-9._/-]+@[A-Za-z0-9._-]+$ ]] ||
		usage_error "$kdir/kdc.env: BROKER_PRINCIPAL must be $KERBEROS_SERVICE_NAME/127.0.0.1@REALM (the brokers advertise 127.0.0.1), not '$KERBEROS_PRINCIPAL'"
	KERBEROS_DIR=$kdir
}

# random_uuid prints a cluster id as `StorageTool random-uuid` would (16 random bytes in
# unpadded URL-safe base64, never starting with '-'), without the cost of a JVM start.
random_uuid() {
	local id
	while :; do
		id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
		[[ $id != -* ]] && break
	done
	echo "$id"
}

# format_cluster formats new, empty log dirs for the configs that pick_ports wrote: every
# broker of the cluster gets the same cluster id.
format_cluster() {
	local cdir=$1 uuid bdir u m
	local -a scram=()
	uuid=$(random_uuid)
	echo "CLUSTER_ID=$uuid" >>"$cdir/cluster.env"
	load_cluster "$cdir"
	# --security: SCRAM credentials go into the bootstrap metadata, so they exist at once.
	for u in "${SCRAM_USERS[@]+"${SCRAM_USERS[@]}"}"; do
		for m in SCRAM-SHA-256 SCRAM-SHA-512; do
			scram+=(--add-scram "$m=[name=${u%%=*},password=${u#*=}]")
		done
	done
	for bdir in "${NODE_DIRS[@]}"; do
		rm -rf "$bdir/data"
		java_log_opts "$bdir/format.log"
		java "${LOG_OPTS[@]}" -cp "$(libs_dir)/*" kafka.tools.StorageTool format -t "$uuid" -c "$bdir/server.properties" "${scram[@]+"${scram[@]}"}" >>"$bdir/format.log" 2>&1 ||
			die "$(broker_label "$bdir"): formatting the log dir failed (log: $bdir/format.log)"
	done
}

# launch_broker starts the broker of cdir in its own session (so stop can signal the whole
# process group) and returns once its pid file exists.
launch_broker() {
	local cdir=$1 i
	local -a sec_opts=()
	java_heap_opts "$KAFKA_HEAP" "$KAFKA_HEAP_MIN"
	java_log_opts "$cdir/server.log"
	[[ -z $SECURITY_DIR ]] || sec_opts=("-D$OAUTH_ALLOWED_URLS=$(jwks_url)")
	[[ -z $KRB5_CONF ]] || sec_opts+=("-Djava.security.krb5.conf=$KRB5_CONF")
	rm -f "$cdir/pid"
	# Logs are appended across restarts: readiness and errors count only after these offsets.
	: >>"$cdir/server.log"
	: >>"$cdir/stdout.log"
	printf '%s %s\n' "$(wc -c <"$cdir/server.log")" "$(wc -c <"$cdir/stdout.log")" >"$cdir/log.offsets"
	(
		cd "$cdir"
		# The pid file is written by the new session leader itself, so its pid is the process
		# group id that stop signals, whether or not setsid had to fork.
		# shellcheck disable=SC2016 # expanded by the inner bash
		exec setsid bash -c 'echo $$ >"$0/pid"; exec "$@"' "$cdir" \
			java "${HEAP_OPTS[@]}" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExplicitGCInvokesConcurrent \
			"-Xlog:gc:file=$cdir/gc.log:time" \
			-XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true "${LOG_OPTS[@]}" "${sec_opts[@]+"${sec_opts[@]}"}" \
			-cp "$(libs_dir)/*" kafka.Kafka "$cdir/server.properties" \
			</dev/null >>"$cdir/stdout.log" 2>&1
	) &
	for ((i = 0; i < 100; i++)); do
		[[ -s $cdir/pid ]] && return 0
		sleep 0.05
	done
	die "cluster ${cdir##*/}: the broker process did not start (see $cdir/stdout.log)"
}

# new_log prints what the broker logged since its last launch (server.log, then stdout.log).
new_log() {
	local cdir=$1 off_server=0 off_stdout=0
	[[ -f $cdir/log.offsets ]] && read -r off_server off_stdout <"$cdir/log.offsets"
	tail -c "+$((off_server + 1))" "$cdir/server.log" 2>/dev/null || true
	tail -c "+$((off_stdout + 1))" "$cdir/stdout.log" 2>/dev/null || true
}

broker_ready() {
	local cdir=$1 port=$2
	new_log "$cdir" | grep -q "Kafka Server started" && port_answers "$port"
}

# bind_failure prints the port a broker failed to bind ("?" if unknown), if it failed to.
bind_failure() {
	local log addr
	log=$(new_log "$1")
	[[ $log == *"Address already in use"* ]] || return 0
	addr=$(grep -o 'bind to [0-9.]*:[0-9]*' <<<"$log" | head -n 1 || true)
	if [[ -n $addr ]]; then echo "${addr##*:}"; else echo "?"; fi
}

show_log() {
	local bdir=$1 f errors
	errors=$(new_log "$bdir" | grep -E '^\[[^]]*\] (ERROR|FATAL) ' | head -n 5 || true)
	if [[ -n $errors ]]; then
		echo "----- first errors in the log of $(broker_label "$bdir")" >&2
		echo "$errors" >&2
	fi
	for f in "$bdir/server.log" "$bdir/stdout.log"; do
		if [[ -s $f ]]; then
			echo "----- last 30 lines of $f" >&2
			tail -n 30 "$f" >&2
		fi
	done
	echo "-----" >&2
}

# signal_broker sends $2 to the process group of the broker of bdir $1, if it runs.
signal_broker() {
	local pid
	pid=$(broker_pid "$1")
	[[ -n $pid ]] && kill "-$2" -- "-$pid" 2>/dev/null
	return 0
}

# broker_exiting succeeds while the broker of a broker dir has begun to exit but still holds its
# sockets: the kernel drops a process's memory (and so its command line) before its files.
broker_exiting() {
	local pid
	[[ -f $1/pid ]] || return 1
	pid=$(<"$1/pid")
	[[ $pid =~ ^[0-9]+$ && -d /proc/$pid && -z $(proc_args "$pid") ]]
}

# wait_gone waits up to $1 seconds until no broker of the given broker dirs runs, so their
# ports are free again.
wait_gone() {
	local deadline=$((SECONDS + $1)) bdir alive
	shift
	while :; do
		alive=0
		for bdir in "$@"; do
			if [[ -n $(broker_pid "$bdir") ]] || broker_exiting "$bdir"; then
				alive=1
			fi
		done
		((alive)) || return 0
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

# stop_brokers stops the brokers of the given broker dirs in parallel: SIGTERM, up to
# STOP_TIMEOUT seconds for a clean shutdown, then SIGKILL. With kill=1 it sends SIGKILL at
# once.
stop_brokers() {
	local kill=$1 bdir sig=TERM
	shift
	[[ $# -gt 0 ]] || return 0
	((kill)) && sig=KILL
	for bdir in "$@"; do
		signal_broker "$bdir" "$sig"
	done
	if ! wait_gone "$STOP_TIMEOUT" "$@"; then
		for bdir in "$@"; do
			if [[ -n $(broker_pid "$bdir") ]]; then
				info "$(broker_label "$bdir"): no clean shutdown within ${STOP_TIMEOUT}s, sending SIGKILL"
				signal_broker "$bdir" KILL
			fi
		done
		wait_gone 10 "$@" || die "a broker of $* still runs 10s after SIGKILL"
	fi
	for bdir in "$@"; do
		rm -f "$bdir/pid"
	done
}

# broker_gone succeeds once the broker launched for bdir has ended. The pid file is written
# by the launcher shell, which then execs java: in between, the process is alive with an
# empty command line, which broker_pid cannot tell from an ended one (6 of 300 launches on
# a loaded machine). Such a process is gone only once it is a zombie.
broker_gone() {
	local pid state
	[[ -s $1/pid && -z $(broker_pid "$1") ]] || return 1
	broker_exiting "$1" || return 0
	pid=$(<"$1/pid")
	state=$(sed -n 's/^.*) \([A-Za-z]\).*/\1/p' "/proc/$pid/stat" 2>/dev/null) || true
	[[ -z $state || $state == Z ]]
}

# all_node_dirs prints the broker dirs of every cluster dir given.
all_node_dirs() {
	local cdir
	for cdir in "$@"; do
		node_dirs "$cdir"
	done
}

# wait_ready waits for the brokers of the given broker dirs. A broker that failed to bind a
# port (another process took it after we picked it) has its whole cluster reformatted on new
# ports and relaunched, up to BIND_RETRIES times. May relaunch only when $1 is "fresh".
wait_ready() {
	local fresh=$1 bdir cdir label deadline bind tries pending lports
	shift
	declare -A attempts=()
	deadline=$((SECONDS + KAFKA_START_TIMEOUT))
	pending=("$@")
	while [[ ${#pending[@]} -gt 0 ]]; do
		local next=()
		local -A queued=()
		for bdir in "${pending[@]}"; do
			[[ -z ${queued[$bdir]:-} ]] || continue
			label=$(broker_label "$bdir")
			load_node "$bdir"
			if broker_ready "$bdir" "$PORT"; then
				info "$label: ready on 127.0.0.1:$PORT"
				continue
			fi
			if broker_gone "$bdir"; then
				bind=$(bind_failure "$bdir")
				cdir=$(cluster_dir "$bdir")
				tries=${attempts[$cdir]:-0}
				if [[ -n $bind && $fresh == fresh && $tries -lt $BIND_RETRIES ]]; then
					attempts[$cdir]=$((tries + 1))
					info "$label: port $bind was taken after it was picked; retrying cluster ${cdir##*/} on new ports"
					relaunch_cluster "$cdir"
					deadline=$((SECONDS + KAFKA_START_TIMEOUT))
					for bdir in "${NODE_DIRS[@]}"; do
						next+=("$bdir")
						queued[$bdir]=1
					done
					continue
				fi
				show_log "$bdir"
				if [[ -n $bind ]]; then
					lports=$(listener_ports)
					FAILURE="$label: port $bind is already in use (broker port $PORT, controller port $CONTROLLER_PORT${EXTERNAL_PORT:+, external port $EXTERNAL_PORT}${lports:+, --security ports $lports}): stop whatever listens on it"
				else
					FAILURE="$label: the broker exited during startup; see its logs above (in $bdir)"
				fi
				return 1
			fi
			next+=("$bdir")
			queued[$bdir]=1
		done
		pending=("${next[@]+"${next[@]}"}")
		[[ ${#pending[@]} -eq 0 ]] && break
		if ((SECONDS >= deadline)); then
			bdir=${pending[0]}
			load_node "$bdir"
			show_log "$bdir"
			FAILURE="$(broker_label "$bdir"): broker did not start within ${KAFKA_START_TIMEOUT}s; port $PORT in use? (log: $bdir/server.log)"
			return 1
		fi
		sleep 0.2
	done
	return 0
}

# relaunch_cluster kills the brokers of cdir, picks new ports, formats and launches them
# again; it leaves NODE_DIRS set to the cluster's broker dirs.
relaunch_cluster() {
	local cdir=$1 n bdir
	load_cluster "$cdir"
	n=$BROKERS
	stop_brokers 1 "${NODE_DIRS[@]}"
	pick_ports "$cdir" "$n"
	format_cluster "$cdir"
	for bdir in "${NODE_DIRS[@]}"; do
		launch_broker "$bdir"
	done
}

write_testbed_files() {
	local dir=$1 name upper first="" second="" cdir l
	: >"$dir/clusters.env.tmp"
	for name in $(cluster_names "$dir"); do
		load_cluster "$dir/$name"
		upper=$(echo "$name" | tr '[:lower:]' '[:upper:]')
		echo "KAFKA_${upper}_BOOTSTRAP=$BOOTSTRAP" >>"$dir/clusters.env.tmp"
		for l in "${CLIENT_LISTENERS[@]}"; do
			[[ -z ${LISTENER_BOOTSTRAPS[$l]:-} ]] || echo "KAFKA_${upper}_${l}_BOOTSTRAP=${LISTENER_BOOTSTRAPS[$l]}" >>"$dir/clusters.env.tmp"
		done
		if [[ -z $first ]]; then first=$name; elif [[ -z $second ]]; then second=$name; fi
	done
	mv -f "$dir/clusters.env.tmp" "$dir/clusters.env"
	[[ -n $second ]] || return 0
	{
		echo "# MirrorMaker 2 config for the test bed in $dir (generated by scripts/kafka.sh)."
		echo "# Try: strait run $dir/mm2.properties   or   scripts/kafka.sh mm2 -d $dir"
		echo "clusters = $first, $second"
		for cdir in "$dir/$first" "$dir/$second"; do
			load_cluster "$cdir"
			echo "${cdir##*/}.bootstrap.servers = $BOOTSTRAP"
		done
		echo "$first->$second.enabled = true"
		cat <<'EOF'
topics = .*
groups = .*
# Single-broker clusters: every topic MM2 creates needs replication factor 1.
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
offset.storage.replication.factor = 1
status.storage.replication.factor = 1
config.storage.replication.factor = 1
# The brokers run without an authorizer: there are no ACLs to sync.
sync.topic.acls.enabled = false
EOF
	} >"$dir/mm2.properties"
}

START_CDIRS=()
FORMAT_PIDS=()

# abort_start is the EXIT trap of a start that has not finished: it ends the formatting
# still running and kills the brokers launched so far.
abort_start() {
	local bdir i bdirs=()
	[[ ${#START_CDIRS[@]} -gt 0 ]] || return 0
	info "start did not finish: killing the clusters it launched"
	if [[ ${#FORMAT_PIDS[@]} -gt 0 ]]; then
		kill "${FORMAT_PIDS[@]}" 2>/dev/null || true
		wait "${FORMAT_PIDS[@]}" 2>/dev/null || true
	fi
	mapfile -t bdirs < <(all_node_dirs "${START_CDIRS[@]}")
	# A broker launched just before the signal may not have written its pid file yet.
	for bdir in "${bdirs[@]}"; do
		for ((i = 0; i < 20; i++)); do
			[[ ! -f $bdir/log.offsets || -s $bdir/pid ]] && break
			sleep 0.05
		done
	done
	stop_brokers 1 "${bdirs[@]}"
}

# parse_brokers sets BROKER_COUNTS (one count per cluster) from --brokers SPEC: one number
# for every cluster, or a comma-separated list with one number per cluster.
parse_brokers() {
	local spec=$1 n=$2 i
	local -a counts=()
	IFS=',' read -r -a counts <<<"$spec"
	if [[ ${#counts[@]} -eq 1 ]]; then
		for ((i = 1; i < n; i++)); do
			counts+=("${counts[0]}")
		done
	fi
	[[ ${#counts[@]} -eq $n ]] || usage_error "--brokers '$spec' gives ${#counts[@]} counts for $n cluster(s): give one number, or one per cluster such as 1,1,3"
	for i in "${counts[@]}"; do
		[[ $i =~ ^[1-9]$ ]] || usage_error "--brokers: a cluster has 1 to 9 brokers, not '$i'"
	done
	BROKER_COUNTS=("${counts[@]}")
}

# parse_external records --external NAME[:ID]=PORT in EXTERNAL_ADV.
parse_external() {
	local spec=$1 node port
	[[ $spec =~ ^([a-z])(:([1-9]))?=([0-9]+)$ ]] || usage_error "--external '$spec' must look like a=40001 or c:2=40003 (cluster, broker id, advertised port)"
	node=${BASH_REMATCH[1]}:${BASH_REMATCH[3]:-1}
	port=${BASH_REMATCH[4]}
	((port >= 1 && port <= 65535)) || usage_error "--external '$spec': $port is not a port"
	[[ -z ${EXTERNAL_ADV[$node]:-} ]] || usage_error "--external: broker $node is given twice"
	EXTERNAL_ADV[$node]=$port
	# Never hand the advertised port out as one of the brokers' own.
	USED_PORTS+="$port "
}

cmd_start() {
	local n=2 dir="" owner="" heap=$KAFKA_HEAP heap_min=$KAFKA_HEAP_MIN own_dir=0 i name cdir bdir brokers=1 node security="" kerberos="" l
	local -a externals=() bdirs=()
	while [[ $# -gt 0 ]]; do
		case $1 in
		-n) [[ $# -ge 2 ]] || usage_error "-n needs a number"; n=$2; shift 2 ;;
		-d) [[ $# -ge 2 ]] || usage_error "-d needs a directory"; dir=$2; shift 2 ;;
		--heap) [[ $# -ge 2 ]] || usage_error "--heap needs a size"; heap=$2; shift 2 ;;
		--heap-min) [[ $# -ge 2 ]] || usage_error "--heap-min needs a size"; heap_min=$2; shift 2 ;;
		--owner) [[ $# -ge 2 ]] || usage_error "--owner needs a pid"; owner=$2; shift 2 ;;
		--brokers) [[ $# -ge 2 ]] || usage_error "--brokers needs a count"; brokers=$2; shift 2 ;;
		--external) [[ $# -ge 2 ]] || usage_error "--external needs NAME[:ID]=PORT"; externals+=("$2"); shift 2 ;;
		--security) [[ $# -ge 2 ]] || usage_error "--security needs a directory"; security=$2; shift 2 ;;
		--kerberos) [[ $# -ge 2 ]] || usage_error "--kerberos needs a directory"; kerberos=$2; shift 2 ;;
		--set)
			[[ $# -ge 2 ]] || usage_error "--set needs KEY=VALUE"
			[[ $2 =~ ^[a-zA-Z0-9._-]+=[^[:cntrl:]]*$ ]] || usage_error "--set '$2' must look like log.cleaner.backoff.ms=1000"
			EXTRA_PROPS+=("$2")
			shift 2
			;;
		*) usage_error "start: unknown argument '$1'" ;;
		esac
	done
	if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 1 || n > 26)); then
		usage_error "-n must be a number from 1 to 26, not '$n'"
	fi
	[[ -z $owner || $owner =~ ^[0-9]+$ ]] || usage_error "--owner must be a pid, not '$owner'"
	check_heap "$heap"
	[[ -z $heap_min ]] || check_heap "$heap_min"
	KAFKA_HEAP=$heap KAFKA_HEAP_MIN=$heap_min
	[[ $KAFKA_START_TIMEOUT =~ ^[0-9]+$ ]] || usage_error "KAFKA_START_TIMEOUT must be whole seconds, not '$KAFKA_START_TIMEOUT'"
	parse_brokers "$brokers" "$n"
	local letters=abcdefghijklmnopqrstuvwxyz cdirs=()
	for i in "${externals[@]+"${externals[@]}"}"; do
		parse_external "$i"
	done
	for node in "${!EXTERNAL_ADV[@]}"; do
		i=$(($(printf '%d' "'${node%%:*}") - 97))
		((i < n)) || usage_error "--external $node: there is no cluster ${node%%:*} among the $n cluster(s)"
		((${node##*:} <= BROKER_COUNTS[i])) || usage_error "--external $node: cluster ${node%%:*} has ${BROKER_COUNTS[i]} broker(s)"
	done
	[[ -z $security ]] || load_security "$security"
	if [[ -n $kerberos ]]; then
		[[ -n $security ]] || usage_error "--kerberos needs --security: the GSSAPI listener is one of the client listeners"
		load_kerberos "$kerberos"
	fi
	check_version
	need_tool java
	cmd_fetch

	if [[ -z $dir ]]; then
		dir=$(mktemp -d "${TMPDIR:-/tmp}/strait-kafka.XXXXXX")
		own_dir=1
	fi
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	[[ ! -f $dir/testbed.env ]] || die "$dir already holds a test bed: stop it with '$PROG stop -d $dir' or choose another dir"
	printf 'KAFKA_VERSION=%s\nKAFKA_HEAP=%s\nKAFKA_HEAP_MIN=%s\n' "$KAFKA_VERSION" "$KAFKA_HEAP" "$KAFKA_HEAP_MIN" >"$dir/testbed.env"
	[[ -z $SECURITY_DIR ]] || echo "SECURITY_DIR=$SECURITY_DIR" >>"$dir/testbed.env"
	[[ -z $KERBEROS_DIR ]] || printf 'KERBEROS_DIR=%s\nKRB5_CONF=%s\n' "$KERBEROS_DIR" "$KRB5_CONF" >>"$dir/testbed.env"
	if ((own_dir)); then
		mkdir -p "$STRAIT_CACHE"
		echo "$dir" >"$(last_dir_file)"
	fi

	for ((i = 0; i < n; i++)); do
		cdirs+=("$dir/${letters:i:1}")
	done
	info "starting $n Kafka $KAFKA_VERSION cluster(s) in $dir"
	# Failed or killed while starting (e.g. by a test's timeout): take the brokers down too.
	START_CDIRS=("${cdirs[@]}")
	trap abort_start EXIT
	trap 'exit 130' INT TERM

	# Ports are picked here, in this shell, so no two brokers get the same one. Formatting
	# and launching then run in parallel, as each is a JVM start of a few seconds.
	# Brokers are launched by this shell only, so abort_start knows every one of them.
	local fmt_failed=0
	for ((i = 0; i < n; i++)); do
		pick_ports "${cdirs[i]}" "${BROKER_COUNTS[i]}"
	done
	for cdir in "${cdirs[@]}"; do
		(format_cluster "$cdir") </dev/null &
		FORMAT_PIDS+=($!)
	done
	for i in "${FORMAT_PIDS[@]}"; do
		wait "$i" || fmt_failed=1
	done
	FORMAT_PIDS=()

	FAILURE=""
	mapfile -t bdirs < <(all_node_dirs "${cdirs[@]}")
	if ((fmt_failed)); then
		FAILURE="could not format every cluster (see the messages above)"
	else
		for bdir in "${bdirs[@]}"; do
			launch_broker "$bdir"
		done
		wait_ready fresh "${bdirs[@]}" || true
	fi
	if [[ -n $FAILURE ]]; then
		mapfile -t bdirs < <(all_node_dirs "${cdirs[@]}")
		stop_brokers 0 "${bdirs[@]}"
		START_CDIRS=()
		die "$FAILURE; stopped every cluster of $dir (kept for its logs)"
	fi
	START_CDIRS=()
	trap - EXIT INT TERM
	write_testbed_files "$dir"
	if [[ -n $owner ]]; then
		(setsid "$SELF" _watch -d "$dir" --owner "$owner" </dev/null >>"$dir/watch.log" 2>&1 &)
	fi
	for cdir in "${cdirs[@]}"; do
		load_cluster "$cdir"
		echo "${cdir##*/} $BOOTSTRAP $cdir"
	done
	# Brokers of clusters with several brokers or an external listener get a line each.
	for cdir in "${cdirs[@]}"; do
		load_cluster "$cdir"
		for bdir in "${NODE_DIRS[@]}"; do
			load_node "$bdir"
			if ((BROKERS > 1)) || [[ -n $EXTERNAL_PORT ]]; then
				echo "node ${cdir##*/}:$NODE_ID 127.0.0.1:$PORT ${EXTERNAL_PORT:+127.0.0.1:}${EXTERNAL_PORT:--} ${ADVERTISED_PORT:+127.0.0.1:}${ADVERTISED_PORT:--} $bdir"
			fi
		done
	done
	# With --security (and --kerberos), one line per cluster and listener.
	for cdir in "${cdirs[@]}"; do
		load_cluster "$cdir"
		for l in "${CLIENT_LISTENERS[@]}"; do
			[[ -z ${LISTENER_BOOTSTRAPS[$l]:-} ]] || echo "listener ${cdir##*/} $l ${LISTENER_BOOTSTRAPS[$l]}"
		done
	done
	echo "$dir"
}

cmd_stop() {
	local dir="" keep=0 cdirs=() bdirs=() name pid
	while [[ $# -gt 0 ]]; do
		case $1 in
		-d) [[ $# -ge 2 ]] || usage_error "-d needs a directory"; dir=$2; shift 2 ;;
		--keep) keep=1; shift ;;
		*) usage_error "stop: unknown argument '$1'" ;;
		esac
	done
	dir=$(resolve_dir "$dir")
	if [[ ! -d $dir ]]; then
		info "$dir does not exist: nothing to stop"
		return 0
	fi
	dir=$(cd "$dir" && pwd)
	for name in $(cluster_names "$dir"); do
		cdirs+=("$dir/$name")
	done
	if [[ ${#cdirs[@]} -gt 0 ]]; then
		mapfile -t bdirs < <(all_node_dirs "${cdirs[@]}")
	fi
	stop_brokers 0 "${bdirs[@]+"${bdirs[@]}"}"
	# The owner watchdog has nothing left to guard (unless it is the one stopping).
	if [[ -f $dir/watch.pid ]]; then
		pid=$(<"$dir/watch.pid")
		if [[ $pid =~ ^[0-9]+$ && $pid != "${WATCHDOG_PID:-}" && $(proc_args "$pid") == *"_watch -d $dir "* ]]; then
			kill "$pid" 2>/dev/null || true
		fi
	fi
	if ((keep)); then
		info "stopped ${#cdirs[@]} cluster(s); kept $dir"
	elif [[ -f $dir/testbed.env ]]; then
		rm -rf "$dir"
		if [[ -f $(last_dir_file) && $(<"$(last_dir_file)") == "$dir" ]]; then
			rm -f "$(last_dir_file)"
		fi
		info "stopped ${#cdirs[@]} cluster(s); removed $dir"
	else
		info "stopped ${#cdirs[@]} cluster(s); not removing $dir: it has no testbed.env, so it was not made by '$PROG start'"
	fi
}

# parse_one_cluster parses [-d DIR] NAME [--node ID] [--kill] into DIR, CDIR, KILL and
# BDIRS (the broker dirs to act on: every broker of the cluster, or broker ID).
parse_one_cluster() {
	local cmd=$1 allow_kill=$2 name="" node=""
	shift 2
	DIR="" KILL=0
	while [[ $# -gt 0 ]]; do
		case $1 in
		-d) [[ $# -ge 2 ]] || usage_error "-d needs a directory"; DIR=$2; shift 2 ;;
		--kill) ((allow_kill)) || usage_error "$cmd: unknown argument '--kill'"; KILL=1; shift ;;
		--node) [[ $# -ge 2 ]] || usage_error "--node needs a broker id"; node=$2; shift 2 ;;
		-*) usage_error "$cmd: unknown argument '$1'" ;;
		*) [[ -z $name ]] || usage_error "$cmd: one cluster NAME, not '$name' and '$1'"; name=$1; shift ;;
		esac
	done
	[[ -n $name ]] || usage_error "$cmd: which cluster? give its NAME (a, b, ...)"
	[[ $name =~ ^[a-z]$ ]] || usage_error "$cmd: cluster names are single letters a, b, c, ..., not '$name'"
	DIR=$(resolve_dir "$DIR")
	[[ -d $DIR ]] || die "test bed $DIR does not exist"
	DIR=$(cd "$DIR" && pwd)
	load_testbed "$DIR"
	CDIR=$DIR/$name
	load_cluster "$CDIR"
	BDIRS=("${NODE_DIRS[@]}")
	if [[ -n $node ]]; then
		[[ $node =~ ^[1-9]$ ]] && ((node <= BROKERS)) || usage_error "$cmd: cluster $name has broker ids 1 to $BROKERS, not '$node'"
		BDIRS=("${NODE_DIRS[node - 1]}")
	fi
}

# what_brokers describes BDIRS of parse_one_cluster in messages.
what_brokers() {
	if [[ ${#BDIRS[@]} -eq 1 ]]; then broker_label "${BDIRS[0]}"; else echo "cluster ${CDIR##*/} (${#BDIRS[@]} brokers)"; fi
}

cmd_stop_broker() {
	parse_one_cluster stop-broker 1 "$@"
	stop_brokers "$KILL" "${BDIRS[@]}"
	if ((KILL)); then
		info "$(what_brokers): killed"
	else
		info "$(what_brokers): stopped"
	fi
}

cmd_start_broker() {
	parse_one_cluster start-broker 0 "$@"
	local pid port bdir label
	for bdir in "${BDIRS[@]}"; do
		label=$(broker_label "$bdir")
		pid=$(broker_pid "$bdir")
		[[ -z $pid ]] || die "$label is already running (pid $pid): stop it first with '$PROG stop-broker -d $DIR ${CDIR##*/}'"
	done
	cmd_fetch
	for bdir in "${BDIRS[@]}"; do
		label=$(broker_label "$bdir")
		load_node "$bdir"
		# shellcheck disable=SC2046 # listener_ports prints port numbers, one word each
		for port in "$PORT" "$CONTROLLER_PORT" ${EXTERNAL_PORT:+"$EXTERNAL_PORT"} $(listener_ports); do
			port_free "$port" || die "$label: port $port is in use, so the broker cannot restart on its old port: stop whatever listens on 127.0.0.1:$port"
		done
	done
	# Launch them all before waiting: a broker of several needs a controller quorum to start.
	for bdir in "${BDIRS[@]}"; do
		launch_broker "$bdir"
	done
	FAILURE=""
	if ! wait_ready restart "${BDIRS[@]}"; then
		stop_brokers 0 "${BDIRS[@]}"
		die "$FAILURE"
	fi
}

cmd_restart_broker() {
	parse_one_cluster restart-broker 1 "$@"
	local args=(-d "$DIR" "${CDIR##*/}")
	stop_brokers "$KILL" "${BDIRS[@]}"
	if [[ ${#BDIRS[@]} -eq 1 && $BROKERS -gt 1 ]]; then
		args+=(--node "${BDIRS[0]##*/}")
	fi
	cmd_start_broker "${args[@]}"
}

# cmd_watch is the owner watchdog: it stops the test bed (keeping its logs) once the owner
# process, a test binary, has gone without stopping it, e.g. killed by `go test -timeout`.
cmd_watch() {
	local dir="" owner=""
	while [[ $# -gt 0 ]]; do
		case $1 in
		-d) dir=$2; shift 2 ;;
		--owner) owner=$2; shift 2 ;;
		*) usage_error "_watch: unknown argument '$1'" ;;
		esac
	done
	[[ -n $dir && -n $owner ]] || usage_error "_watch needs -d DIR and --owner PID"
	WATCHDOG_PID=$$
	echo "$$" >"$dir/watch.pid"
	while kill -0 "$owner" 2>/dev/null; do
		[[ -d $dir ]] || exit 0
		sleep 1
	done
	[[ -d $dir ]] || exit 0
	info "owner pid $owner has exited: stopping the test bed $dir"
	cmd_stop -d "$dir" --keep
}

cmd_mm2() {
	local dir="" cfg="" heap=512m log="" extra=()
	while [[ $# -gt 0 ]]; do
		case $1 in
		-d) [[ $# -ge 2 ]] || usage_error "-d needs a directory"; dir=$2; shift 2 ;;
		-c) [[ $# -ge 2 ]] || usage_error "-c needs a file"; cfg=$2; shift 2 ;;
		--heap) [[ $# -ge 2 ]] || usage_error "--heap needs a size"; heap=$2; shift 2 ;;
		--log) [[ $# -ge 2 ]] || usage_error "--log needs a file"; log=$2; shift 2 ;;
		--) shift; extra+=("$@"); break ;;
		*) extra+=("$1"); shift ;;
		esac
	done
	check_heap "$heap"
	dir=$(resolve_dir "$dir")
	[[ -d $dir ]] || die "test bed $dir does not exist"
	dir=$(cd "$dir" && pwd)
	load_testbed "$dir"
	cfg=${cfg:-$dir/mm2.properties}
	[[ -f $cfg ]] || die "MirrorMaker 2 config $cfg not found: pass it with -c FILE"
	log=${log:-$dir/mm2.log}
	need_tool java
	cmd_fetch
	java_log_opts "$log"
	info "running MirrorMaker 2 ($KAFKA_VERSION) with $cfg; log: $log"
	exec java -Xms128m "-Xmx$heap" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
		-Djava.awt.headless=true "${LOG_OPTS[@]}" -cp "$(libs_dir)/*" \
		org.apache.kafka.connect.mirror.MirrorMaker "$cfg" "${extra[@]+"${extra[@]}"}"
}

main() {
	[[ $# -gt 0 ]] || usage_error "no command given"
	local cmd=$1
	shift
	case $cmd in
	fetch) [[ $# -eq 0 ]] || usage_error "fetch takes no arguments"; cmd_fetch ;;
	classpath) cmd_classpath "$@" ;;
	log4j-config) cmd_log4j_config "$@" ;;
	start) cmd_start "$@" ;;
	stop) cmd_stop "$@" ;;
	stop-broker) cmd_stop_broker "$@" ;;
	start-broker) cmd_start_broker "$@" ;;
	restart-broker) cmd_restart_broker "$@" ;;
	mm2) cmd_mm2 "$@" ;;
	_watch) cmd_watch "$@" ;;
	help | -h | --help) usage ;;
	*) usage_error "unknown command '$cmd'" ;;
	esac
}

# Sourced (by a test of its functions), it defines them and runs nothing.
[[ ${BASH_SOURCE[0]} != "$0" ]] || main "$@"
