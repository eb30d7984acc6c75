#!/bin/bash
# Runs strait with a debug server and takes a CPU and a block profile while it copies.
( sleep 4; curl -s -o /tmp/prof7/cpu.pb.gz "http://127.0.0.1:6072/debug/pprof/profile?seconds=8" ) &
( sleep 4; curl -s -o /tmp/prof7/block.pb.gz "http://127.0.0.1:6072/debug/pprof/block?seconds=8" ) &
exec /tmp/strait-now "$@" --debug-addr 127.0.0.1:6072
