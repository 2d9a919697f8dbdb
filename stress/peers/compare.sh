#!/usr/bin/env bash
# Compares vx with Turborepo and Nx on one generated workspace: N packages in a chain of
# dependencies, each with a build that writes dist/, run the same way by all three (npm run
# build). It installs turbo and nx from npm into a
# scratch folder (never into vx), then times, side by side in one run:
#   cold   — every task runs (caches cleared first);
#   hit    — nothing changed: every task a cache hit;
#   one    — the first package's source changed: it and whatever its tool deems affected rebuild
#            (vx and turbo key a task on its dependencies' keys, so the whole chain; nx keys on the
#            declared inputs only, so one package).
# in R rounds that interleave the tools, reporting medians.
# Usage: stress/peers/compare.sh [N=100] [R=5]     Output: a Markdown table on stdout.
set -euo pipefail
N=${1:-100}
R=${2:-5}
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/stress/peers/lib.sh"
scratch=${VX_PEERS_DIR:-/tmp/vx-peers}
mkdir -p "$scratch"
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false CI=true

echo "building vx and installing turbo and nx into $scratch ..." >&2
build_vx "$scratch"
if [ ! -x "$scratch/tools/node_modules/.bin/turbo" ] || [ ! -x "$scratch/tools/node_modules/.bin/nx" ]; then
	mkdir -p "$scratch/tools"
	(cd "$scratch/tools" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund turbo nx >&2)
fi
turbo=$scratch/tools/node_modules/.bin/turbo
nx=$scratch/tools/node_modules/.bin/nx

ws=$scratch/ws-$N
rm -rf "$ws"
mkdir -p "$ws/packages"
cat > "$ws/package.json" <<JSON
{ "name": "peers", "private": true, "packageManager": "npm@$(npm --version)", "workspaces": ["packages/*"] }
JSON
cat > "$ws/turbo.json" <<'JSON'
{ "tasks": { "build": { "dependsOn": ["^build"], "inputs": ["src/**"], "outputs": ["dist/**"] } } }
JSON
cat > "$ws/nx.json" <<'JSON'
{ "targetDefaults": { "build": { "dependsOn": ["^build"], "inputs": ["{projectRoot}/src/**/*"], "outputs": ["{projectRoot}/dist"], "cache": true } }, "useDaemonProcess": false }
JSON
cat > "$ws/vx.workspace.ts" <<'TS'
export default {
  projects: ['packages/*'],
  tasks: { build: { command: 'npm run build', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] } },
}
TS
for i in $(seq 0 $((N - 1))); do
	p=$(printf 'pkg-%03d' "$i")
	deps=""
	[ "$i" -gt 0 ] && deps=$(printf '"pkg-%03d": "*"' $((i - 1)))
	mkdir -p "$ws/packages/$p/src"
	printf 'export const n = %d\n' "$i" > "$ws/packages/$p/src/index.ts"
	printf 'mkdir -p dist && cat src/* > dist/index.js\n' > "$ws/packages/$p/build.sh"
	cat > "$ws/packages/$p/package.json" <<JSON
{ "name": "$p", "version": "1.0.0", "scripts": { "build": "sh build.sh" }, "dependencies": { $deps } }
JSON
done
# nx loads its modules from the workspace: share the scratch install rather than install again.
ln -s "$scratch/tools/node_modules" "$ws/node_modules"
printf 'node_modules\n.vx\n.turbo\n.nx\ndist\n' > "$ws/.gitignore"
(cd "$ws" && git init -q && git add -A && git -c user.name=p -c user.email=p@p commit -qm init)

leaf=$ws/packages/pkg-000/src/index.ts
declare -A cold hit one
run_vx()    { (cd "$ws" && "$scratch/vx" run build --concurrency 2); }
run_turbo() { (cd "$ws" && "$turbo" run build --concurrency=2 --output-logs=none); }
run_nx()    { (cd "$ws" && "$nx" run-many -t build --parallel=2 --outputStyle=static); }
clear_vx()    { rm -rf "$ws/.vx"; }
clear_turbo() { rm -rf "$ws/.turbo" "$ws"/node_modules/.cache/turbo; }
clear_nx()    { rm -rf "$ws/.nx" "$ws"/node_modules/.cache/nx; (cd "$ws" && "$nx" reset >/dev/null 2>&1 || true); }

# Rounds interleave the tools (vx, turbo, nx, vx, …) so that a shared machine's changing load
# falls on all three alike; each figure is the median over the rounds.
declare -A colds hits ones
for round in $(seq "$R"); do
	for tool in vx turbo nx; do
		rm -rf "$ws"/packages/*/dist
		"clear_$tool"
		colds[$tool]+="$(time_ms "run_$tool") "
		hits[$tool]+="$(time_ms "run_$tool") "
		printf 'export const n = %d\n' "$((1000 + round))" > "$leaf"
		ones[$tool]+="$(time_ms "run_$tool") "
		printf 'export const n = 0\n' > "$leaf"
		echo "round $round: $tool done" >&2
	done
done
for tool in vx turbo nx; do
	cold[$tool]=$(printf '%s\n' ${colds[$tool]} | median)
	hit[$tool]=$(printf '%s\n' ${hits[$tool]} | median)
	one[$tool]=$(printf '%s\n' ${ones[$tool]} | median)
done

echo "| $N packages, chain of dependencies | vx | turbo $("$turbo" --version 2>/dev/null) | nx $("$nx" --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1) |"
echo "| --- | --- | --- | --- |"
echo "| cold: every task runs (median of $R) | ${cold[vx]} ms | ${cold[turbo]} ms | ${cold[nx]} ms |"
echo "| full hit: nothing changed (median of $R) | ${hit[vx]} ms | ${hit[turbo]} ms | ${hit[nx]} ms |"
echo "| the first package's source changed (median of $R) | ${one[vx]} ms | ${one[turbo]} ms | ${one[nx]} ms |"
