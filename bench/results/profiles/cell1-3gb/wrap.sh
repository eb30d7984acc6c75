#!/bin/bash
( sleep 2; curl -s -o /tmp/prof1/cpu.pb.gz "http://127.0.0.1:6073/debug/pprof/profile?seconds=5" ) &
( sleep 2; curl -s -o /tmp/prof1/block.pb.gz "http://127.0.0.1:6073/debug/pprof/block?seconds=5" ) &
exec /tmp/strait-now "$@" --debug-addr 127.0.0.1:6073
