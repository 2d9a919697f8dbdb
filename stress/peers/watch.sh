#!/usr/bin/env bash
# What a watching vx saves, against Turborepo: installs turbo from npm into a scratch folder (as
# engine.sh does, never into vx) and runs stress's BenchmarkWatchedWorkspace with it, which times
# planTasks and all-hit runTasks through `vx mcp` (first call, and after an edit) against
# `vx run --dry=json` and `vx run`, and a CLI full hit with and without the server's watcher
# against turbo's, in rounds that alternate them. It prints a Markdown table of the medians.
# Usage: stress/peers/watch.sh [SIZES="300 1000"] [ROUNDS=5]
set -euo pipefail
SIZES=${1:-"300 1000"}
ROUNDS=${2:-5}
TURBO_VERSION=${TURBO_VERSION:-2.11.11}
repo=$(cd "$(dirname "$0")/../.." && pwd)
scratch=${VX_PEERS_DIR:-/tmp/vx-peers-engine}
mkdir -p "$scratch/tools"
if [ "$("$scratch/tools/node_modules/.bin/turbo" --version 2>/dev/null)" != "$TURBO_VERSION" ]; then
	(cd "$scratch/tools" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "turbo@$TURBO_VERSION" >&2)
fi
export VX_TURBO=$scratch/tools/node_modules/.bin/turbo
export VX_GENMONO=${VX_GENMONO:-$repo/../shared/bench/genmono.py}
export VX_BENCH_SIZES=$SIZES VX_BENCH_ROUNDS=$ROUNDS
cd "$repo"
echo "load before: $(uptime)" >&2
go test -run '^$' -bench WatchedWorkspace -benchtime 1x -timeout 120m ./stress/ | sed -n '/^| packages/,/^$/p'
echo "load after: $(uptime)" >&2
