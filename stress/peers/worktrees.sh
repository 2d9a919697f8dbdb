#!/usr/bin/env bash
# Four git worktrees of one repository building at once from cold: vx with one cache store the
# four share (each key executed once on the machine: the others wait for it, then restore it), vx
# with a store per checkout (each checkout builds everything), and Turborepo 2.11, whose local cache
# the worktrees of a repository share (.turbo/cache of the main checkout), against one cold build
# of each. The workspace is generated (/work/shared/bench/genmono.py, or $GENMONO) with N packages;
# turbo is installed into a scratch folder (never into vx). Each round starts from cold: no
# outputs, no store, no turbo cache; the rounds interleave the scenarios. The script checks that
# every build passed and, for vx's shared store, that the four runs together executed each of the
# N keys exactly once (the misses of the four summaries add up to N).
# Usage: stress/peers/worktrees.sh [N=300] [R=3]     Output: a Markdown table on stdout.
set -euo pipefail
N=${1:-300}
R=${2:-3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/stress/peers/lib.sh"
scratch=${VX_PEERS_DIR:-/tmp/vx-peers-worktrees}
genmono=${GENMONO:-/work/shared/bench/genmono.py}
mkdir -p "$scratch"
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 CI=true

echo "building vx, installing turbo into $scratch ..." >&2
build_vx "$scratch"
if [ ! -x "$scratch/tools/node_modules/.bin/turbo" ]; then
	mkdir -p "$scratch/tools"
	(cd "$scratch/tools" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund turbo@2.11.13 >&2)
fi
turbo=$scratch/tools/node_modules/.bin/turbo
vx=$scratch/vx

work=$(mktemp -d "$scratch/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
# vx's default shared store would be under the user's cache folder: keep it in the scratch run.
export XDG_CACHE_HOME=$work/xdg
python3 "$genmono" "$work/wt1" "$N" >&2
wts=("$work/wt1")
for i in 2 3 4; do
	git -C "$work/wt1" worktree add -q --detach "$work/wt$i"
	wts+=("$work/wt$i")
done

# cold: every worktree without outputs, vx state or turbo cache; every vx store gone.
cold() {
	for w in "${wts[@]}"; do git -C "$w" clean -fdxq; done
	rm -rf "$work/shared" "$work"/own*
}
# vx_build DIR STORE OUT: one vx build in DIR with its store in STORE, its summary to OUT.
vx_build() { (cd "$1" && VX_CACHE_DIR=$2 "$vx" run build --concurrency 2 --format json >"$3" 2>"$3.err"); }
# turbo_build DIR: one turbo build in DIR (its cache: the main worktree's .turbo/cache).
turbo_build() { (cd "$1" && "$turbo" run build --concurrency=2 --output-logs=none >/dev/null 2>&1); }
# misses FILE...: the misses the summaries say, added up.
misses() { cat "$@" | grep -o '"misses": [0-9]*' | awk '{ s += $2 } END { print s + 0 }'; }
# wall CMD...: wall ms of CMD (a function running its builds), which must pass.
wall() {
	local t0 t1
	t0=$(now)
	"$@" || { echo "failed: $*" >&2; exit 1; }
	t1=$(now)
	echo $(((t1 - t0) / 1000000))
}

vx_one() { vx_build "${wts[0]}" "$work/own1" "$work/one.json"; }
vx_four_shared() {
	local pids=() i
	for i in 0 1 2 3; do
		vx_build "${wts[$i]}" "$work/shared" "$work/shared$i.json" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || return 1; done
	local m
	m=$(misses "$work"/shared[0-3].json)
	[ "$m" = "$N" ] || { echo "vx, shared store: the four runs executed $m keys, want $N" >&2; return 1; }
}
vx_four_own() {
	local pids=() i
	for i in 0 1 2 3; do
		vx_build "${wts[$i]}" "$work/own$i" "$work/own$i.json" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || return 1; done
}
turbo_one() { turbo_build "${wts[0]}"; }
turbo_four() {
	local pids=() w
	for w in "${wts[@]}"; do
		turbo_build "$w" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || return 1; done
}

declare -A times
scenarios=(vx_one vx_four_shared vx_four_own turbo_one turbo_four)
for r in $(seq "$R"); do
	echo "round $r/$R ..." >&2
	for s in "${scenarios[@]}"; do
		cold
		times[$s]+="$(wall "$s") "
	done
done
m() { tr ' ' '\n' <<<"${times[$1]}" | grep . | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f×", a / b }'; }
one=$(m vx_one) tone=$(m turbo_one)
echo "| $N packages, from cold, concurrency 2 each | wall (median of $R) | ÷ one cold build of its tool |"
echo "| --- | --- | --- |"
echo "| vx, one checkout | $one ms | 1.00× |"
echo "| vx, four worktrees at once, one shared store | $(m vx_four_shared) ms | $(ratio "$(m vx_four_shared)" "$one") |"
echo "| vx, four worktrees at once, a store each | $(m vx_four_own) ms | $(ratio "$(m vx_four_own)" "$one") |"
echo "| turbo $("$turbo" --version), one checkout | $tone ms | 1.00× |"
echo "| turbo, four worktrees at once (shared .turbo/cache) | $(m turbo_four) ms | $(ratio "$(m turbo_four)" "$tone") |"
for s in "${scenarios[@]}"; do echo "rounds (ms): $s ${times[$s]}" >&2; done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
