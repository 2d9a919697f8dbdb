#!/usr/bin/env bash
# Compares vx's scheduler with Turborepo's on a graph whose durations are skewed: one long chain
# (chain-0 → … → chain-7, each task sleeping 2–3 s) beside 28 short independent tasks (each
# sleeping 0.1–0.5 s), on 2 workers, every task run the same way by both (npm run build). Turborepo
# starts ready tasks in graph order with a fixed concurrency; vx starts the one with the longest
# remaining path first (from the p50s of its history), so the chain never waits behind the short
# tasks. Cold: every task runs (vx run --force with the history of one earlier run, turbo run
# --force); "cold, no history" clears vx's state folder too (no p50s: every task counts the same,
# so the longer chain still goes first). R rounds interleave the tools; medians are reported.
# It installs turbo from npm into a scratch folder (never into vx).
# Usage: stress/peers/schedule.sh [R=3]     Output: a Markdown table on stdout.
set -euo pipefail
R=${1:-3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/stress/peers/lib.sh"
scratch=${VX_PEERS_DIR:-/tmp/vx-peers-sched}
mkdir -p "$scratch"
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 CI=true

echo "building vx and installing turbo into $scratch ..." >&2
build_vx "$scratch"
if [ ! -x "$scratch/tools/node_modules/.bin/turbo" ]; then
	mkdir -p "$scratch/tools"
	(cd "$scratch/tools" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund turbo >&2)
fi
turbo=$scratch/tools/node_modules/.bin/turbo

ws=$scratch/ws
rm -rf "$ws"
mkdir -p "$ws/packages"
cat > "$ws/package.json" <<JSON
{ "name": "sched", "private": true, "packageManager": "npm@$(npm --version)", "workspaces": ["packages/*"] }
JSON
cat > "$ws/turbo.json" <<'JSON'
{ "tasks": { "build": { "dependsOn": ["^build"], "inputs": ["src/**"], "outputs": ["dist/**"] } } }
JSON
cat > "$ws/vx.workspace.ts" <<'TS'
export default {
  projects: ['packages/*'],
  tasks: { build: { command: 'npm run build', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] } },
}
TS
# pkg NAME SECONDS [DEP]: a package whose build sleeps SECONDS then writes dist/.
pkg() {
	local deps=""
	[ -n "${3:-}" ] && deps="\"$3\": \"*\""
	mkdir -p "$ws/packages/$1/src"
	printf 'export const name = "%s"\n' "$1" > "$ws/packages/$1/src/index.ts"
	cat > "$ws/packages/$1/package.json" <<JSON
{ "name": "$1", "version": "1.0.0", "scripts": { "build": "sleep $2 && mkdir -p dist && cat src/* > dist/index.js" }, "dependencies": { $deps } }
JSON
}
# The short tasks sort first by name, the chain last: graph order is name order among ready tasks.
short=(0.3 0.1 0.5 0.2 0.4 0.3 0.1 0.5 0.2 0.4 0.3 0.1 0.5 0.2 0.4 0.3 0.1 0.5 0.2 0.4 0.3 0.1 0.5 0.2 0.4 0.3 0.1 0.5)
for i in "${!short[@]}"; do pkg "$(printf 'a-short-%02d' "$i")" "${short[$i]}"; done
chain=(2 3 2.5 2 3 2.5 2 3)
prev=""
for i in "${!chain[@]}"; do
	pkg "chain-$i" "${chain[$i]}" "$prev"
	prev="chain-$i"
done
printf 'node_modules\n.vx\n.turbo\ndist\n' > "$ws/.gitignore"
(cd "$ws" && npm install --silent --no-audit --no-fund >/dev/null 2>&1 || true)
(cd "$ws" && git init -q && git add -A && git -c user.name=p -c user.email=p@p commit -qm init)

run_vx()       { (cd "$ws" && "$scratch/vx" run build --concurrency 2 --force); }
run_vx_fresh() { rm -rf "$ws/.vx"; (cd "$ws" && "$scratch/vx" run build --concurrency 2); }
run_turbo()    { (cd "$ws" && "$turbo" run build --concurrency=2 --force --output-logs=none); }

# One earlier run gives vx its history (the p50s); --force then runs every task again.
(cd "$ws" && "$scratch/vx" run build --concurrency 2 >/dev/null 2>&1)
plan=$(cd "$ws" && "$scratch/vx" run build --concurrency 2 --force --dry | tail -2 | head -1)
declare -A times
for round in $(seq "$R"); do
	for tool in vx turbo vx_fresh; do
		rm -rf "$ws"/packages/*/dist
		times[$tool]+="$(time_ms "run_$tool") "
		echo "round $round: $tool done" >&2
	done
	# vx_fresh cleared the history: give it back for the next round's vx
	(cd "$ws" && "$scratch/vx" run build --concurrency 2 --force >/dev/null 2>&1)
done
vx=$(printf '%s\n' ${times[vx]} | median)
fresh=$(printf '%s\n' ${times[vx_fresh]} | median)
tb=$(printf '%s\n' ${times[turbo]} | median)
echo "| 36 tasks: an 8-task chain sleeping 20 s beside 28 short tasks sleeping 8.4 s, 2 workers | vx | vx, no history | turbo $("$turbo" --version 2>/dev/null) |"
echo "| --- | --- | --- | --- |"
echo "| cold: every task runs (median of $R) | ${vx} ms ($(awk "BEGIN{printf \"%.2f\", $vx/$tb}")×) | ${fresh} ms ($(awk "BEGIN{printf \"%.2f\", $fresh/$tb}")×) | ${tb} ms |"
echo
echo "vx's plan: $plan"
