#!/usr/bin/env bash
# kdc.sh: a disposable MIT Kerberos KDC for Strait's test bed.
#
# It installs Debian's MIT Kerberos packages (if missing), creates a realm whose config,
# database, stash, keytabs and logs all live in one dir (KRB5_CONFIG and KRB5_KDC_PROFILE
# point there: nothing under /etc is read or written), runs krb5kdc on a loopback port and
# stops it again. The kafka.sh test bed gives its brokers a GSSAPI listener from that dir
# (kafka.sh start --security SDIR --kerberos DIR).
# Run `scripts/kdc.sh help` for the commands. Progress goes to stderr; results to stdout.
set -euo pipefail

PROG=${0##*/}
# shellcheck source=scripts/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
SELF=$(cd "$(dirname "$0")" && pwd)/${0##*/}

# krb5kdc, kdb5_util and kadmin.local live in /usr/sbin, which a test's PATH may lack.
PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

KDC_START_TIMEOUT=${KDC_START_TIMEOUT:-20}

readonly DEFAULT_REALM=STRAIT.TEST
# The brokers' service name (sasl.kerberos.service.name) and host: franz-go and the Java
# client ask for a ticket to <service>/<host of the broker address>, and the brokers
# advertise 127.0.0.1, so the brokers' principal is kafka/127.0.0.1@REALM.
readonly SERVICE_NAME=kafka
readonly BROKER_HOST=127.0.0.1
readonly CLIENT_NAME=strait
readonly PACKAGES=(krb5-kdc krb5-admin-server krb5-user)
readonly TOOLS=(krb5kdc kdb5_util kadmin.local)
readonly PORT_MIN=20000
readonly PORT_MAX=45000
readonly BIND_RETRIES=3
readonly STOP_TIMEOUT=10
readonly INSTALL_LOCK=${TMPDIR:-/tmp}/strait-kdc-install.lock

usage() {
	cat <<EOF
Usage: $PROG COMMAND [options]

Commands:
  install                       install MIT Kerberos with apt-get unless its tools
                                (${TOOLS[*]}) are there already; needs
                                root. Packages: ${PACKAGES[*]}. No daemon
                                of theirs is started (policy-rc.d), and the test bed
                                never reads the /etc/krb5.conf they write.
  start DIR [--realm REALM] [--owner PID]
                                create realm REALM (default $DEFAULT_REALM) in DIR unless DIR
                                holds one already, start its KDC on a free 127.0.0.1 port
                                (TCP and UDP; clients are told to use TCP) and print the
                                realm's facts as KEY=VALUE lines (also kept in DIR/kdc.env):
                                  REALM             the realm
                                  KDC               127.0.0.1:PORT
                                  KRB5_CONFIG       DIR/krb5.conf, for clients and brokers
                                                    (KRB5_CONFIG, -Djava.security.krb5.conf)
                                  SERVICE_NAME      $SERVICE_NAME (sasl.kerberos.service.name)
                                  BROKER_PRINCIPAL  $SERVICE_NAME/$BROKER_HOST@REALM
                                  BROKER_KEYTAB     DIR/$SERVICE_NAME.keytab
                                  CLIENT_PRINCIPAL  $CLIENT_NAME@REALM
                                  CLIENT_KEYTAB     DIR/$CLIENT_NAME.keytab
                                The realm also holds $SERVICE_NAME/localhost@REALM, with no
                                keytab: a client of localhost:PORT gets a ticket for it, which
                                the brokers refuse (they hold only $SERVICE_NAME/$BROKER_HOST's key).
                                A KDC of DIR that runs already is left running (its facts are
                                printed again); a stopped one restarts with its database, on
                                its old port if that is free. With --owner, a watchdog stops
                                the KDC once PID has exited.
  stop DIR                      stop the KDC of DIR (SIGTERM, then SIGKILL); DIR is kept
  help                          print this text

DIR holds kdc.conf, krb5.conf, the database and its stash, the keytabs (mode 600) and the
KDC's logs (kdc.log, stdout.log).

Environment:
  KDC_START_TIMEOUT  seconds to wait for the KDC to listen (default 20)
EOF
}

have_tools() {
	local t
	for t in "${TOOLS[@]}"; do
		command -v "$t" >/dev/null 2>&1 || return 1
	done
}

need_tools() {
	have_tools || die "MIT Kerberos is not installed (need ${TOOLS[*]}): run '$PROG install' (Debian/Ubuntu: apt-get install ${PACKAGES[*]})"
}

# ---- install --------------------------------------------------------------------------

POLICY_RC=""

remove_policy_rc() {
	[[ -z $POLICY_RC ]] || rm -f "$POLICY_RC"
}

cmd_install() {
	[[ $# -eq 0 ]] || usage_error "install takes no arguments"
	if have_tools; then
		return 0
	fi
	[[ $(id -u) -eq 0 ]] || die "MIT Kerberos is missing and installing it needs root: run 'sudo $SELF install' or apt-get install ${PACKAGES[*]}"
	command -v apt-get >/dev/null 2>&1 || die "MIT Kerberos is missing and there is no apt-get: install ${TOOLS[*]} (MIT Kerberos KDC and admin tools) another way"
	# Parallel test packages may install at once: one installs, the others wait for it.
	exec 9>"$INSTALL_LOCK"
	if command -v flock >/dev/null 2>&1; then
		flock -w 900 9 || die "waited 15 minutes for another install of MIT Kerberos (lock $INSTALL_LOCK)"
	fi
	if have_tools; then
		exec 9>&-
		return 0
	fi
	# The packages' maintainer scripts start the system's krb5-kdc and krb5-admin-server
	# unless policy-rc.d forbids it; the test bed never uses them.
	if [[ ! -e /usr/sbin/policy-rc.d ]]; then
		POLICY_RC=/usr/sbin/policy-rc.d
		trap remove_policy_rc EXIT
		printf '#!/bin/sh\n# Written by strait scripts/kdc.sh while it installs MIT Kerberos: start no daemon.\nexit 101\n' >"$POLICY_RC"
		chmod 755 "$POLICY_RC"
	fi
	apt_install "${PACKAGES[@]}"
	local log=$APT_LOG
	have_tools || die "apt-get installed ${PACKAGES[*]}, but ${TOOLS[*]} are still not in PATH ($PATH) (log: $log)"
	remove_policy_rc
	POLICY_RC=""
	trap - EXIT
	rm -f "$log"
	exec 9>&-
	info "installed MIT Kerberos"
}

# ---- ports ----------------------------------------------------------------------------

# port_free succeeds if 127.0.0.1:$1 can be bound for TCP and for UDP alike.
port_free() {
	if command -v perl >/dev/null 2>&1; then
		perl -MIO::Socket::INET -e '
			IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0], Proto => "tcp", Listen => 1, ReuseAddr => 1) or exit 1;
			IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0], Proto => "udp") or exit 1' "$1"
	elif command -v python3 >/dev/null 2>&1; then
		python3 -c 'import socket, sys
t = socket.socket()
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", int(sys.argv[1])))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
	elif port_answers "$1"; then
		return 1
	fi
}

port_answers() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# pick_port sets PICKED to a free TCP+UDP port in [PORT_MIN, PORT_MAX].
pick_port() {
	local p i
	for ((i = 0; i < 200; i++)); do
		p=$((PORT_MIN + (RANDOM * 32768 + RANDOM) % (PORT_MAX - PORT_MIN + 1)))
		if port_free "$p"; then
			PICKED=$p
			return 0
		fi
	done
	die "found no free TCP and UDP port in $PORT_MIN-$PORT_MAX after 200 tries"
}

# ---- the realm ------------------------------------------------------------------------

# write_confs DIR REALM PORT writes the KDC's profile (kdc.conf) and the clients' krb5.conf.
write_confs() {
	local dir=$1 realm=$2 port=$3
	cat >"$dir/kdc.conf" <<EOF
# Generated by strait scripts/kdc.sh: the KDC of realm $realm (KRB5_KDC_PROFILE).
[kdcdefaults]
  kdc_listen = 127.0.0.1:$port
  kdc_tcp_listen = 127.0.0.1:$port

[realms]
  $realm = {
    database_name = $dir/principal
    key_stash_file = $dir/stash
    acl_file = $dir/kadm5.acl
    kdc_listen = 127.0.0.1:$port
    kdc_tcp_listen = 127.0.0.1:$port
    max_life = 10h
    max_renewable_life = 7d
    master_key_type = aes256-cts-hmac-sha1-96
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
    # Pre-authentication, as Active Directory and most KDCs require.
    default_principal_flags = +preauth
  }

[plugins]
  # SPAKE pre-authentication needs groups configured, and neither gokrb5 nor Java speaks
  # it: off, rather than an error in kdc.log at every start.
  kdcpreauth = {
    disable = spake
  }

[logging]
  kdc = FILE:$dir/kdc.log
  admin_server = FILE:$dir/kadmin.log
  default = FILE:$dir/kdc.log
EOF
	cat >"$dir/krb5.conf" <<EOF
# Generated by strait scripts/kdc.sh: clients of realm $realm (KRB5_CONFIG, or a JVM's
# -Djava.security.krb5.conf).
[libdefaults]
  default_realm = $realm
  dns_lookup_kdc = false
  dns_lookup_realm = false
  # Service principals are named after the address as given (kafka/127.0.0.1): no
  # reverse or forward DNS.
  rdns = false
  dns_canonicalize_hostname = false
  # TCP only: every message is larger than one byte.
  udp_preference_limit = 1
  ticket_lifetime = 10h
  forwardable = true

[realms]
  $realm = {
    kdc = 127.0.0.1:$port
  }

[domain_realm]
  $BROKER_HOST = $realm
EOF
	: >"$dir/kadm5.acl"
}

# load_env sets REALM and KDC from DIR/kdc.env.
load_env() {
	local dir=$1 key value
	REALM="" KDC=""
	while IFS='=' read -r key value; do
		case $key in
		REALM) REALM=$value ;;
		KDC) KDC=$value ;;
		esac
	done <"$dir/kdc.env"
	[[ -n $REALM && $KDC == 127.0.0.1:* ]] || die "$dir/kdc.env lacks REALM or KDC: remove $dir and start again"
}

write_env() {
	local dir=$1 realm=$2 port=$3 tmp
	tmp=$(mktemp "$dir/kdc.env.XXXXXX")
	cat >"$tmp" <<EOF
REALM=$realm
KDC=127.0.0.1:$port
KRB5_CONFIG=$dir/krb5.conf
SERVICE_NAME=$SERVICE_NAME
BROKER_PRINCIPAL=$SERVICE_NAME/$BROKER_HOST@$realm
BROKER_KEYTAB=$dir/$SERVICE_NAME.keytab
CLIENT_PRINCIPAL=$CLIENT_NAME@$realm
CLIENT_KEYTAB=$dir/$CLIENT_NAME.keytab
EOF
	chmod 644 "$tmp"
	mv -f "$tmp" "$dir/kdc.env"
}

# kdc_tool runs a Kerberos admin tool on DIR's profiles only.
kdc_tool() {
	local dir=$1
	shift
	KRB5_CONFIG=$dir/krb5.conf KRB5_KDC_PROFILE=$dir/kdc.conf "$@"
}

# create_realm DIR REALM makes the database, the principals and their keytabs.
create_realm() {
	local dir=$1 realm=$2 master p kt log=$1/setup.log
	pick_port
	write_confs "$dir" "$realm" "$PICKED"
	master=$(head -c 24 /dev/urandom | base64 | tr -d '+/=')
	info "creating realm $realm in $dir"
	# -s stashes the master key, so krb5kdc starts without asking for it.
	kdc_tool "$dir" kdb5_util create -s -r "$realm" -P "$master" >"$log" 2>&1 ||
		die "creating the Kerberos database of $realm failed (log: $log)"
	kdc_tool "$dir" kadmin.local -r "$realm" -q "addprinc -randkey $SERVICE_NAME/localhost@$realm" >>"$log" 2>&1 ||
		die "creating principal $SERVICE_NAME/localhost@$realm failed (log: $log)"
	for p in "$SERVICE_NAME/$BROKER_HOST" "$CLIENT_NAME"; do
		kt=$dir/${p%%/*}.keytab
		kdc_tool "$dir" kadmin.local -r "$realm" -q "addprinc -randkey $p@$realm" >>"$log" 2>&1 ||
			die "creating principal $p@$realm failed (log: $log)"
		rm -f "$kt"
		kdc_tool "$dir" kadmin.local -r "$realm" -q "ktadd -k $kt $p@$realm" >>"$log" 2>&1 ||
			die "writing the keytab $kt of $p@$realm failed (log: $log)"
		[[ -s $kt ]] || die "kadmin.local wrote no keytab $kt for $p@$realm (log: $log)"
		chmod 600 "$kt"
	done
	write_env "$dir" "$realm" "$PICKED"
}

# ---- the KDC process ------------------------------------------------------------------

proc_args() {
	if [[ -d /proc/$1 ]]; then
		tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null || true
	else
		ps -o args= -p "$1" 2>/dev/null || true
	fi
}

# kdc_pid prints the pid of DIR's KDC if it runs. The pid file alone is not trusted (pids
# are reused): the process must be krb5kdc with DIR's pid file on its command line.
kdc_pid() {
	local dir=$1 pid args
	[[ -f $dir/krb5kdc.pid ]] || return 0
	pid=$(<"$dir/krb5kdc.pid")
	[[ $pid =~ ^[0-9]+$ ]] || return 0
	args=$(proc_args "$pid")
	[[ $args == *krb5kdc* && $args == *"$dir/krb5kdc.own.pid"* ]] && echo "$pid"
	return 0
}

show_logs() {
	local f
	for f in "$1/kdc.log" "$1/stdout.log"; do
		if [[ -s $f ]]; then
			echo "----- last 20 lines of $f" >&2
			tail -n 20 "$f" >&2
		fi
	done
}

# launched_exited DIR reports whether the process that launch_kdc started has ended (or is
# a zombie). It goes by the pid alone: while bash execs krb5kdc the command line kdc_pid
# checks can be momentarily unreadable, and a start that had succeeded was taken for a
# failure.
launched_exited() {
	local pid state
	[[ -s $1/krb5kdc.pid ]] || return 1
	pid=$(<"$1/krb5kdc.pid")
	[[ $pid =~ ^[0-9]+$ ]] || return 1 # being written
	[[ -r /proc/$pid/stat ]] || return 0
	state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)
	[[ -z $state || $state == Z ]]
}

# launch_kdc DIR starts krb5kdc in its own session and waits until it listens. It returns
# 3 when the port was taken in between (the caller picks another), and dies otherwise.
launch_kdc() {
	local dir=$1 port=${KDC##*:} deadline pid off_kdc off_stdout
	rm -f "$dir/krb5kdc.pid" "$dir/krb5kdc.own.pid"
	# The logs are appended across starts: only what this start adds counts.
	: >>"$dir/kdc.log"
	: >>"$dir/stdout.log"
	off_kdc=$(wc -c <"$dir/kdc.log")
	off_stdout=$(wc -c <"$dir/stdout.log")
	# -n: stay in the foreground (this script keeps its pid). krb5kdc writes its pid file
	# itself (-P), truncating it first, so it gets a file of its own: krb5kdc.pid is written
	# once, by the launching shell, and is never seen empty by kdc_pid while krb5kdc runs
	# (that race failed a start that had succeeded). -P also puts DIR on its command line.
	(
		cd "$dir"
		# shellcheck disable=SC2016 # expanded by the inner bash
		KRB5_CONFIG=$dir/krb5.conf KRB5_KDC_PROFILE=$dir/kdc.conf exec setsid bash -c 'echo $$ >"$0/krb5kdc.pid"; exec "$@"' "$dir" \
			krb5kdc -n -r "$REALM" -P "$dir/krb5kdc.own.pid" </dev/null >>"$dir/stdout.log" 2>&1
	) &
	deadline=$((SECONDS + KDC_START_TIMEOUT))
	while :; do
		pid=$(kdc_pid "$dir")
		if [[ -n $pid ]] && port_answers "$port"; then
			return 0
		fi
		if [[ -z $pid ]] && launched_exited "$dir"; then
			if { tail -c "+$((off_kdc + 1))" "$dir/kdc.log"; tail -c "+$((off_stdout + 1))" "$dir/stdout.log"; } | grep -q "Address already in use"; then
				return 3
			fi
			show_logs "$dir"
			die "krb5kdc of $REALM exited during startup (logs: $dir/kdc.log, $dir/stdout.log)"
		fi
		if ((SECONDS >= deadline)); then
			[[ -z $pid ]] || kill -KILL "$pid" 2>/dev/null || true
			show_logs "$dir"
			die "krb5kdc of $REALM did not listen on $KDC within ${KDC_START_TIMEOUT}s (logs: $dir/kdc.log, $dir/stdout.log)"
		fi
		sleep 0.05
	done
}

# use_port DIR PORT moves DIR's realm to PORT (kdc.conf, krb5.conf, kdc.env).
use_port() {
	local dir=$1 port=$2
	write_confs "$dir" "$REALM" "$port"
	write_env "$dir" "$REALM" "$port"
	KDC=127.0.0.1:$port
}

cmd_start() {
	local dir="" realm=$DEFAULT_REALM owner="" pid try rc
	while [[ $# -gt 0 ]]; do
		case $1 in
		--realm) [[ $# -ge 2 ]] || usage_error "--realm needs a name"; realm=$2; shift 2 ;;
		--owner) [[ $# -ge 2 ]] || usage_error "--owner needs a pid"; owner=$2; shift 2 ;;
		-*) usage_error "start: unknown argument '$1'" ;;
		*) [[ -z $dir ]] || usage_error "start: one DIR, not '$dir' and '$1'"; dir=$1; shift ;;
		esac
	done
	[[ -n $dir ]] || usage_error "start needs a DIR for the realm"
	[[ $realm =~ ^[A-Z0-9][A-Z0-9.-]*$ ]] || usage_error "--realm '$realm' must be upper case, such as $DEFAULT_REALM"
	[[ -z $owner || $owner =~ ^[0-9]+$ ]] || usage_error "--owner must be a pid, not '$owner'"
	[[ $KDC_START_TIMEOUT =~ ^[0-9]+$ ]] || usage_error "KDC_START_TIMEOUT must be whole seconds, not '$KDC_START_TIMEOUT'"
	need_tools
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	# The path goes into kdc.conf, krb5.conf and the brokers' server.properties.
	[[ $dir =~ ^[A-Za-z0-9._/+-]+$ ]] || usage_error "start $dir: the path may hold only letters, digits and ._/+-"
	if [[ -f $dir/kdc.env ]]; then
		load_env "$dir"
		[[ $REALM == "$realm" || $realm == "$DEFAULT_REALM" ]] || die "$dir holds realm $REALM, not $realm: choose another dir"
		pid=$(kdc_pid "$dir")
		if [[ -n $pid ]]; then
			info "the KDC of $REALM runs already (pid $pid, $KDC)"
			cat "$dir/kdc.env"
			return 0
		fi
		if ! port_free "${KDC##*:}"; then
			pick_port
			info "port ${KDC##*:} of $REALM is taken: moving the KDC to $PICKED"
			use_port "$dir" "$PICKED"
		fi
	else
		[[ -z $(ls -A "$dir") ]] || die "$dir is not empty and holds no realm (no kdc.env): give an empty or new dir"
		chmod 700 "$dir"
		create_realm "$dir" "$realm"
		load_env "$dir"
	fi
	for ((try = 0; ; try++)); do
		rc=0
		launch_kdc "$dir" || rc=$?
		((rc == 0)) && break
		((try < BIND_RETRIES)) || die "krb5kdc of $REALM found its port taken $((try + 1)) times (logs: $dir/kdc.log)"
		pick_port
		info "port ${KDC##*:} was taken after it was picked; retrying on $PICKED"
		use_port "$dir" "$PICKED"
	done
	pid=$(kdc_pid "$dir")
	info "KDC of $REALM up on $KDC (pid $pid)"
	if [[ -n $owner ]]; then
		(setsid "$SELF" _watch "$dir" --owner "$owner" </dev/null >>"$dir/watch.log" 2>&1 &)
	fi
	cat "$dir/kdc.env"
}

cmd_stop() {
	local dir="" pid deadline wpid
	[[ $# -eq 1 && $1 != -* ]] || usage_error "stop needs exactly one DIR"
	dir=$1
	if [[ ! -d $dir ]]; then
		info "$dir does not exist: no KDC to stop"
		return 0
	fi
	dir=$(cd "$dir" && pwd)
	if [[ -f $dir/watch.pid ]]; then
		wpid=$(<"$dir/watch.pid")
		if [[ $wpid =~ ^[0-9]+$ && $wpid != "${WATCHDOG_PID:-}" && $(proc_args "$wpid") == *"_watch $dir "* ]]; then
			kill "$wpid" 2>/dev/null || true
		fi
		rm -f "$dir/watch.pid"
	fi
	pid=$(kdc_pid "$dir")
	if [[ -z $pid ]]; then
		rm -f "$dir/krb5kdc.pid" "$dir/krb5kdc.own.pid"
		info "no KDC runs in $dir"
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	deadline=$((SECONDS + STOP_TIMEOUT))
	while [[ -n $(kdc_pid "$dir") ]]; do
		if ((SECONDS >= deadline)); then
			info "the KDC (pid $pid) did not stop within ${STOP_TIMEOUT}s: sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			sleep 0.2
			[[ -z $(kdc_pid "$dir") ]] || die "the KDC of $dir (pid $pid) still runs after SIGKILL"
			break
		fi
		sleep 0.05
	done
	rm -f "$dir/krb5kdc.pid" "$dir/krb5kdc.own.pid"
	info "stopped the KDC of $dir (pid $pid)"
}

# cmd_watch is the owner watchdog: it stops the KDC once the owner process (a test binary)
# has gone without stopping it, and ends by itself once the KDC has gone.
cmd_watch() {
	local dir=$1 owner
	[[ $# -eq 3 && $2 == --owner ]] || usage_error "_watch needs DIR --owner PID"
	owner=$3
	WATCHDOG_PID=$$
	echo "$$" >"$dir/watch.pid"
	while kill -0 "$owner" 2>/dev/null; do
		[[ -n $(kdc_pid "$dir") ]] || exit 0
		sleep 1
	done
	info "owner pid $owner has exited: stopping the KDC of $dir"
	cmd_stop "$dir"
}

main() {
	[[ $# -gt 0 ]] || usage_error "no command given"
	local cmd=$1
	shift
	case $cmd in
	install) cmd_install "$@" ;;
	start) cmd_start "$@" ;;
	stop) cmd_stop "$@" ;;
	_watch) cmd_watch "$@" ;;
	help | -h | --help) usage ;;
	*) usage_error "unknown command '$cmd'" ;;
	esac
}

main "$@"
