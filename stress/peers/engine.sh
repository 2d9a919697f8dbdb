#!/usr/bin/env bash
# Engine speed against Turborepo on generated npm-workspaces repos (../shared/bench/genmono.py: N
# packages, 20 source files each; build `rm -rf dist && cp -R src dist`, outputs dist/**, no
# inputs, so both tools hash every git-visible file). For each size it times, paired in R rounds
# that alternate the tools, and reports medians with the ratio vx/turbo and the peak RSS:
#   hit     — `run build`, nothing changed: every task a cache hit (the second run after a
#             restore: the first re-hashes the rewritten outputs once);
#   restore — `run build` after `rm -rf packages/*/dist`: every task restored from the cache;
#   plan    — `run build --dry=json`.
# turbo is installed from npm into a scratch folder, never into vx.
# Usage: stress/peers/engine.sh [SIZES="300 1000"] [R=7]     Output: a Markdown table on stdout.
# With VX_BASELINE=PATH (an older vx binary), that binary takes turbo's place, so that a change of
# vx is measured against the vx before it, paired in the same run.
set -euo pipefail
SIZES=${1:-"300 1000"}
R=${2:-7}
TURBO_VERSION=${TURBO_VERSION:-2.11.11}
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/stress/peers/lib.sh"
gen=${VX_GENMONO:-$repo/../shared/bench/genmono.py}
scratch=${VX_PEERS_DIR:-/tmp/vx-peers-engine}
mkdir -p "$scratch"
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 TURBO_NO_UPDATE_NOTIFIER=1 CI=true

echo "building vx and installing turbo@$TURBO_VERSION into $scratch ..." >&2
build_vx "$scratch"
if [ "$("$scratch/tools/node_modules/.bin/turbo" --version 2>/dev/null)" != "$TURBO_VERSION" ]; then
	mkdir -p "$scratch/tools"
	(cd "$scratch/tools" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "turbo@$TURBO_VERSION" >&2)
fi
vx=$scratch/vx
turbo=$scratch/tools/node_modules/.bin/turbo
peer="turbo $TURBO_VERSION"
turboFlags=(--output-logs=none)
if [ -n "${VX_BASELINE:-}" ]; then
	# The baseline keeps its state apart: two versions of the index in one folder would reset
	# each other's.
	printf '#!/bin/sh\nVX_CACHE_DIR="$PWD.baseline-state" exec %q "$@"\n' "$VX_BASELINE" >"$scratch/vx-baseline"
	chmod +x "$scratch/vx-baseline"
	turbo=$scratch/vx-baseline peer="vx baseline" turboFlags=()
fi

# measure TOOL LABEL CMD...: runs CMD in $ws, appends "seconds kilobytes" to $scratch/TOOL-LABEL.
measure() {
	local tool=$1 label=$2
	shift 2
	/usr/bin/time -f "%e %M" -o "$scratch/time.out" "$@" >/dev/null 2>"$scratch/err.out" || {
		cat "$scratch/err.out" >&2
		return 1
	}
	cat "$scratch/time.out" >>"$scratch/$tool-$label"
}

echo "| packages | path | vx | $peer | ratio | vx peak RSS | $peer peak RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for n in $SIZES; do
	ws=$scratch/ws-$n
	rm -rf "$ws" "$ws.baseline-state" "$scratch"/vx-hit "$scratch"/vx-restore "$scratch"/vx-plan "$scratch"/turbo-*
	python3 "$gen" "$ws" "$n" --files 20 >/dev/null
	cd "$ws"
	echo "$n packages: warming both caches ..." >&2
	for _ in 1 2; do
		"$vx" run build >/dev/null 2>&1
		"$turbo" run build "${turboFlags[@]}" >/dev/null 2>&1
	done
	sleep 3 # outputs older than any stat-cache window
	for _ in $(seq "$R"); do
		rm -rf packages/*/dist
		measure vx restore "$vx" run build
		rm -rf packages/*/dist
		measure turbo restore "$turbo" run build "${turboFlags[@]}"
		measure vx plan "$vx" run build --dry=json
		measure turbo plan "$turbo" run build --dry=json
		# The outputs were just rewritten: the first run after a restore re-hashes them once (it
		# cannot trust a stat taken within the racy window); a full hit is the run after that.
		sleep 0.2
		"$vx" run build >/dev/null 2>&1
		"$turbo" run build "${turboFlags[@]}" >/dev/null 2>&1
		measure vx hit "$vx" run build
		measure turbo hit "$turbo" run build "${turboFlags[@]}"
	done
	for label in hit restore plan; do
		v=$(cut -d' ' -f1 <"$scratch/vx-$label" | median)
		t=$(cut -d' ' -f1 <"$scratch/turbo-$label" | median)
		vm=$(cut -d' ' -f2 <"$scratch/vx-$label" | median)
		tm=$(cut -d' ' -f2 <"$scratch/turbo-$label" | median)
		printf '| %s | %s | %.3f s | %.3f s | %.2f× | %d MB | %d MB |\n' "$n" "$label" "$v" "$t" \
			"$(echo "$v $t" | awk '{print $1/$2}')" "$((${vm%.*} / 1024))" "$((${tm%.*} / 1024))"
	done
	cd "$scratch"
done
