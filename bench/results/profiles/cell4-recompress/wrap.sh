#!/bin/bash
( sleep 1; curl -s -o /tmp/prof4/cpu.pb.gz "http://127.0.0.1:6073/debug/pprof/profile?seconds=4" ) &
( sleep 1; curl -s -o /tmp/prof4/block.pb.gz "http://127.0.0.1:6073/debug/pprof/block?seconds=4" ) &
exec /tmp/strait-now "$@" --debug-addr 127.0.0.1:6073
