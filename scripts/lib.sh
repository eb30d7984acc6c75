# lib.sh: what Strait's scripts share. Source it after setting PROG (the script's name for
# messages) and defining usage (printed by usage_error).
# shellcheck shell=bash

# die prints the message and exits 1.
die() {
	echo "$PROG: $*" >&2
	exit 1
}

# usage_error is for bad command lines: the message, the usage text, exit 2.
usage_error() {
	echo "$PROG: $*" >&2
	usage >&2
	exit 2
}

# info prints progress to stderr (results go to stdout).
info() {
	echo "$PROG: $*" >&2
}

# apt_install installs Debian packages with apt-get, its output in a log file whose path it
# leaves in APT_LOG (the caller removes it once it checked the result). A failed install is
# tried once more after updating the package lists; a second failure dies with the log's tail.
apt_install() {
	APT_LOG=$(mktemp "${TMPDIR:-/tmp}/strait-$PROG-install.XXXXXX")
	info "installing $* with apt-get (log: $APT_LOG)"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "$@" >"$APT_LOG" 2>&1; then
		info "apt-get install failed; updating the package lists and trying again"
		if ! { apt-get update -q -o DPkg::Lock::Timeout=300 &&
			apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "$@"; } >>"$APT_LOG" 2>&1; then
			tail -n 20 "$APT_LOG" >&2 || true
			die "apt-get could not install $* (log: $APT_LOG)"
		fi
	fi
}
