#!/usr/bin/env bash
# chromium.sh: the headless Chromium that Strait's dashboard browser tests drive.
#
# It installs Debian's chromium package (if no Chromium is on PATH) and prints the path of the
# browser, which the tests hand to chromedp as its ExecPath.
# Run `scripts/chromium.sh help` for the commands. Progress goes to stderr; results to stdout.
set -euo pipefail

PROG=${0##*/}
# shellcheck source=scripts/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
SELF=$(cd "$(dirname "$0")" && pwd)/${0##*/}

readonly PACKAGES=(chromium)
# Debian calls it chromium; other systems' packages install one of the others.
readonly NAMES=(chromium chromium-browser google-chrome-stable google-chrome)
readonly INSTALL_LOCK=${TMPDIR:-/tmp}/strait-chromium-install.lock

usage() {
	cat <<EOF
Usage: $PROG COMMAND

Commands:
  install   install Debian's ${PACKAGES[*]} with apt-get unless a Chromium
            (${NAMES[*]}) is on PATH already, then print its path; needs root
  path      print the path of the Chromium on PATH, or fail saying how to install one
  help      print this text
EOF
}

# find_chromium prints the first Chromium on PATH, or fails.
find_chromium() {
	local n p
	for n in "${NAMES[@]}"; do
		if p=$(command -v "$n" 2>/dev/null); then
			echo "$p"
			return 0
		fi
	done
	return 1
}

cmd_path() {
	[[ $# -eq 0 ]] || usage_error "path takes no arguments"
	find_chromium || die "no Chromium on PATH (looked for ${NAMES[*]}): run '$SELF install' (Debian/Ubuntu: apt-get install ${PACKAGES[*]})"
}

cmd_install() {
	[[ $# -eq 0 ]] || usage_error "install takes no arguments"
	if find_chromium; then
		return 0
	fi
	[[ $(id -u) -eq 0 ]] || die "Chromium is missing and installing it needs root: run 'sudo $SELF install' or apt-get install ${PACKAGES[*]}"
	command -v apt-get >/dev/null 2>&1 || die "Chromium is missing and there is no apt-get: install Chromium another way"
	# Parallel test packages may install at once: one installs, the others wait for it.
	exec 9>"$INSTALL_LOCK"
	if command -v flock >/dev/null 2>&1; then
		flock -w 900 9 || die "waited 15 minutes for another install of Chromium (lock $INSTALL_LOCK)"
	fi
	if find_chromium; then
		exec 9>&-
		return 0
	fi
	apt_install "${PACKAGES[@]}"
	local log=$APT_LOG
	find_chromium || die "apt-get installed ${PACKAGES[*]}, but no Chromium (${NAMES[*]}) is on PATH ($PATH) (log: $log)"
	rm -f "$log"
	exec 9>&-
	info "installed Chromium"
}

main() {
	[[ $# -gt 0 ]] || usage_error "no command given"
	local cmd=$1
	shift
	case $cmd in
	install) cmd_install "$@" ;;
	path) cmd_path "$@" ;;
	help | -h | --help) usage ;;
	*) usage_error "unknown command '$cmd'" ;;
	esac
}

main "$@"
