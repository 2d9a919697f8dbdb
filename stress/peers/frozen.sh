#!/usr/bin/env bash
# vx run --frozen against an evaluated run, paired in one run of this script, on a generated
# npm-workspaces repo (../shared/bench/genmono.py: N packages, 20 source files each; build
# `rm -rf dist && cp -R src dist`, outputs dist/**). Every run is an all-hit `run build`. Three
# ways to get the workspace, in R rounds that alternate them, medians of wall time and peak RSS:
#   frozen    — `run build --frozen`: the workspace vx.lock keeps, no config evaluated;
#   cached    — `run build`: the config loader's own cache (.vx/config/resolved.gob), as a warm
#               laptop or a CI runner that restored .vx/ has it;
#   evaluated — `run build` with .vx/config removed first: esbuild and goja evaluate the config,
#               as a fresh CI runner does.
# Usage: stress/peers/frozen.sh [N=300] [R=7]     Output: a Markdown table on stdout.
set -euo pipefail
N=${1:-300}
R=${2:-7}
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/stress/peers/lib.sh"
gen=${VX_GENMONO:-$repo/../shared/bench/genmono.py}
[ -f "$gen" ] || gen=/work/shared/bench/genmono.py
scratch=${VX_PEERS_DIR:-/tmp/vx-peers-frozen}
mkdir -p "$scratch"
build_vx "$scratch"
vx=$scratch/vx

measure() {
	local label=$1
	shift
	/usr/bin/time -f "%e %M" -o "$scratch/time.out" "$@" >/dev/null 2>"$scratch/err.out" || {
		cat "$scratch/err.out" >&2
		return 1
	}
	cat "$scratch/time.out" >>"$scratch/vx-$label"
}

ws=$scratch/ws-$N
rm -rf "$ws" "$scratch"/vx-frozen "$scratch"/vx-cached "$scratch"/vx-evaluated
python3 "$gen" "$ws" "$N" --files 20 >/dev/null
cd "$ws"
"$vx" lock >/dev/null
for _ in 1 2 3; do "$vx" run build >/dev/null 2>&1; done
sleep 3 # outputs older than any stat-cache window
"$vx" run build --frozen | grep -q " 0 miss" || { echo "the frozen run is not all hits" >&2; exit 1; }
for _ in $(seq "$R"); do
	measure frozen "$vx" run build --frozen
	measure cached "$vx" run build
	rm -rf .vx/config
	measure evaluated "$vx" run build
done
echo "| packages | workspace from | wall | peak RSS |"
echo "| --- | --- | --- | --- |"
for label in frozen cached evaluated; do
	v=$(cut -d' ' -f1 <"$scratch/vx-$label" | median)
	m=$(cut -d' ' -f2 <"$scratch/vx-$label" | median)
	printf '| %s | %s | %.3f s | %d MB |\n' "$N" "$label" "$v" "$((${m%.*} / 1024))"
done
