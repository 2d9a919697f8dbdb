#!/usr/bin/env bash
# What a package manager's start costs a task, and what running the script without it saves:
#   noop  — `npm run -s noop` against `sh -c true`, one after another, CPU and wall per call;
#   cold  — a cold build of N small independent packages (`npm run build`, which runs
#           `node build.js` copying src/ to dist/), at the same concurrency C, by vx running the
#           script's text itself (the default), vx through npm (VX_SCRIPTS_RUNNER=package-manager)
#           and Turborepo (which runs every script through npm), in R rounds that interleave them.
# Each figure is a median; CPU is user+sys of the tool and every process it started. It installs
# turbo from npm into a scratch folder (never into vx).
# Usage: stress/peers/scripts.sh [N=20] [C=2] [R=5]     Output: Markdown tables on stdout.
set -euo pipefail
N=${1:-20}
C=${2:-2}
R=${3:-5}
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/stress/peers/lib.sh"
scratch=${VX_PEERS_DIR:-/tmp/vx-peers}
mkdir -p "$scratch"
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 CI=true

echo "building vx and installing turbo into $scratch ..." >&2
build_vx "$scratch"
if [ ! -x "$scratch/tools/node_modules/.bin/turbo" ]; then
	mkdir -p "$scratch/tools"
	(cd "$scratch/tools" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund turbo@2.11 >&2)
fi
turbo=$scratch/tools/node_modules/.bin/turbo


ws=$scratch/scripts-$N
rm -rf "$ws"
mkdir -p "$ws/packages"
cat > "$ws/package.json" <<JSON
{ "name": "scripts", "private": true, "packageManager": "npm@$(npm --version)", "workspaces": ["packages/*"] }
JSON
cat > "$ws/turbo.json" <<'JSON'
{ "tasks": { "build": { "inputs": ["src/**"], "outputs": ["dist/**"] } } }
JSON
cat > "$ws/vx.workspace.ts" <<'TS'
export default {
  projects: ['packages/*'],
  tasks: { build: { command: 'npm run build', inputs: ['src/**'], outputs: ['dist/**'] } },
}
TS
for i in $(seq 0 $((N - 1))); do
	p=$(printf 'pkg-%03d' "$i")
	mkdir -p "$ws/packages/$p/src"
	printf 'export const n = %d\n' "$i" > "$ws/packages/$p/src/index.js"
	printf 'const fs = require("fs")\nfs.mkdirSync("dist", { recursive: true })\nfs.writeFileSync("dist/index.js", fs.readFileSync("src/index.js"))\n' > "$ws/packages/$p/build.js"
	cat > "$ws/packages/$p/package.json" <<JSON
{ "name": "$p", "version": "1.0.0", "scripts": { "build": "node build.js", "noop": "true" } }
JSON
done
ln -s "$scratch/tools/node_modules" "$ws/node_modules"
printf 'node_modules\n.vx\n.turbo\ndist\n' > "$ws/.gitignore"
(cd "$ws" && git init -q && git add -A && git -c user.name=p -c user.email=p@p commit -qm init)

# noop: one package's script, started 20 times in a row each way.
pkg=$ws/packages/pkg-000
npm_noop() { (cd "$pkg" && for _ in $(seq 20); do npm run -s noop; done); }
sh_noop() { (cd "$pkg" && for _ in $(seq 20); do sh -c true; done); }
declare -A nw nc
for _ in $(seq "$R"); do
	for way in npm sh; do
		r=$(cpu_wall "${way}_noop")
		read -r w c <<< "$r"
		nw[$way]+="$((w / 20)) "
		nc[$way]+="$((c / 20)) "
	done
done

run_direct()  { (cd "$ws" && "$scratch/vx" run build --concurrency "$C"); }
run_manager() { (cd "$ws" && VX_SCRIPTS_RUNNER=package-manager "$scratch/vx" run build --concurrency "$C"); }
run_turbo()   { (cd "$ws" && "$turbo" run build --concurrency="$C" --output-logs=none); }
clear_all()   { rm -rf "$ws/.vx" "$ws/.turbo" "$ws"/packages/*/dist "$scratch/scripts-cache"; }
export VX_CACHE_DIR=$scratch/scripts-cache
declare -A cw cc
# Each round starts with the next tool, so that a load that falls or rises across the rounds does
# not always favour the same one.
order=(direct manager turbo)
for round in $(seq "$R"); do
	for k in 0 1 2; do
		tool=${order[$(((round + k) % 3))]}
		clear_all
		r=$(cpu_wall "run_$tool")
		read -r w c <<< "$r"
		cw[$tool]+="$w "
		cc[$tool]+="$c "
		echo "round $round: $tool: $w ms wall, $c ms CPU" >&2
	done
done

med() { printf '%s\n' $1 | median; }
echo "| one script, started 20 times (median of $R) | wall per call | CPU per call |"
echo "| --- | --- | --- |"
echo "| npm run -s noop (npm $(npm --version), node $(node --version)) | $(med "${nw[npm]}") ms | $(med "${nc[npm]}") ms |"
echo "| sh -c true | $(med "${nw[sh]}") ms | $(med "${nc[sh]}") ms |"
echo
echo "| cold build, $N small packages, concurrency $C (median of $R) | wall | CPU |"
echo "| --- | --- | --- |"
echo "| vx, the script's text run directly | $(med "${cw[direct]}") ms | $(med "${cc[direct]}") ms |"
echo "| vx, through npm (VX_SCRIPTS_RUNNER=package-manager) | $(med "${cw[manager]}") ms | $(med "${cc[manager]}") ms |"
echo "| turbo $("$turbo" --version 2>/dev/null) (through npm) | $(med "${cw[turbo]}") ms | $(med "${cc[turbo]}") ms |"
