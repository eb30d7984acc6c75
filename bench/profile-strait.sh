#!/bin/bash
# profile-strait.sh: give it to the bench as -strait-bin to profile one Strait run.
# It runs $STRAIT (the binary built from the commit profiled) with its pprof endpoint and,
# PROFILE_DELAY seconds after start (default 2), fetches PROFILE_SECONDS (default 5) of each
# profile in PROFILE_KINDS (default "cpu"; "cpu block" adds the block profile) into PROFILE_DIR
# (default /tmp/prof) as KIND.pb.gz. Read them with: go tool pprof -top $STRAIT DIR/cpu.pb.gz
set -euo pipefail
dir=${PROFILE_DIR:-/tmp/prof}
mkdir -p "$dir"
for kind in ${PROFILE_KINDS:-cpu}; do
	endpoint=$kind
	[[ $kind == cpu ]] && endpoint=profile
	(sleep "${PROFILE_DELAY:-2}"; curl -s -o "$dir/$kind.pb.gz" "http://127.0.0.1:6073/debug/pprof/$endpoint?seconds=${PROFILE_SECONDS:-5}") &
done
exec "${STRAIT:?set STRAIT to the strait binary to profile}" "$@" --debug-addr 127.0.0.1:6073
