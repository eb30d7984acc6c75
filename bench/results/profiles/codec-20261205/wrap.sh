#!/bin/bash
# Runs Strait with its pprof endpoint and takes a CPU profile 1.5 s after start
# (cell 3: 2 s, cell 4: 3 s). STRAIT is the binary built from the commit profiled.
mkdir -p /tmp/prof
( sleep 1.5; curl -s -o /tmp/prof/cpu.pb.gz "http://127.0.0.1:6073/debug/pprof/profile?seconds=${PROFILE_SECONDS:-2}" ) &
exec "${STRAIT:-/tmp/strait}" "$@" --debug-addr 127.0.0.1:6073
