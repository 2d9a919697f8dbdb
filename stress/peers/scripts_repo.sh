#!/usr/bin/env bash
# A cold build of a real repository's packages both ways, compared: vx running each package's
# build script's text itself (the default) and vx through its package manager
# (VX_SCRIPTS_RUNNER=package-manager). It checks that the two builds write the same files, byte
# for byte (the sha256 of every file under each package's dist/), then times each way and
# Turborepo at the same concurrency, in R rounds that interleave them (medians; CPU is user+sys
# of the tool and every process it started).
#
# DIR is a checkout with its dependencies installed and a build script in its packages; the
# script writes a vx.workspace.ts and a turbo.json there when it has none, with `build` depending
# on `^build` and writing OUTPUTS (globs in a package, space-separated; by default dist/** and
# *.tsbuildinfo, tsc's incremental state, which decides what tsc emits again), run as
# `pnpm run build` (MANAGER=npm for npm). A cold build starts with every file git ignores under
# packages/ removed, but node_modules: the outputs must be ignored files. Turbo comes from the
# scratch folder stress/peers/scripts.sh installs it in.
# Usage: stress/peers/scripts_repo.sh DIR [C=2] [R=3]     Output: Markdown on stdout.
set -euo pipefail
dir=$(cd "$1" && pwd)
C=${2:-2}
R=${3:-3}
manager=${MANAGER:-pnpm}
outputs_globs=${OUTPUTS:-dist/** *.tsbuildinfo}
quoted() { local sep= g; for g in $outputs_globs; do printf "%s$1%s$1" "$sep" "$g"; sep=', '; done; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/stress/peers/lib.sh"
scratch=${VX_PEERS_DIR:-/tmp/vx-peers}
mkdir -p "$scratch"
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 CI=true
build_vx "$scratch"
if [ ! -x "$scratch/tools/node_modules/.bin/turbo" ]; then
	mkdir -p "$scratch/tools"
	(cd "$scratch/tools" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund turbo@2.11 >&2)
fi
turbo=$scratch/tools/node_modules/.bin/turbo

[ -f "$dir/vx.workspace.ts" ] || cat > "$dir/vx.workspace.ts" <<TS
export default {
  projects: ['packages/*'],
  tasks: { build: { command: '$manager run build', dependsOn: ['^build'], outputs: [$(quoted "'")], ifScript: true } },
}
TS
[ -f "$dir/turbo.json" ] || cat > "$dir/turbo.json" <<JSON
{ "tasks": { "build": { "dependsOn": ["^build"], "outputs": [$(quoted '"')] } } }
JSON
if [ ! -d "$dir/.git" ]; then
	printf '\nnode_modules\n.vx\n.turbo\ndist\n*.tsbuildinfo\n' >> "$dir/.gitignore"
	(cd "$dir" && git init -q && git add -A && git -c user.name=p -c user.email=p@p commit -qm init)
fi
# The tools' own folders are neither inputs nor outputs.
grep -qx '.turbo' "$dir/.git/info/exclude" 2>/dev/null || printf '.vx\n.turbo\n' >> "$dir/.git/info/exclude"

export VX_CACHE_DIR=$scratch/repo-cache
# built lists, NUL-separated, what git ignores under packages/ but node_modules: the outputs.
built() { (cd "$dir" && git ls-files -z -oi --exclude-standard --directory -- packages | grep -zv '/node_modules/$' || true); }
clear_all() {
	rm -rf "$dir/.vx" "$dir/.turbo" "$dir"/packages/*/.turbo "$VX_CACHE_DIR"
	(cd "$dir" && built | xargs -0 -r rm -rf)
}
run_direct()  { (cd "$dir" && "$scratch/vx" run build --concurrency "$C"); }
run_manager() { (cd "$dir" && VX_SCRIPTS_RUNNER=package-manager "$scratch/vx" run build --concurrency "$C"); }
run_turbo()   { (cd "$dir" && "$turbo" run build --concurrency="$C" --output-logs=none); }
outputs() { (cd "$dir" && built | xargs -0 -r sh -c 'find "$@" -type f -print0' sh | sort -z | xargs -0 sha256sum); }

clear_all
run_direct >/dev/null 2>&1 || { echo "the direct build failed:" >&2; run_direct >&2; exit 1; }
outputs > "$scratch/outputs-direct.txt"
clear_all
run_manager >/dev/null 2>&1 || { echo "the build through $manager failed:" >&2; run_manager >&2; exit 1; }
outputs > "$scratch/outputs-manager.txt"
files=$(wc -l < "$scratch/outputs-direct.txt")
if cmp -s "$scratch/outputs-direct.txt" "$scratch/outputs-manager.txt"; then
	same="byte-identical: $files files, the same sha256 each"
else
	same="DIFFERENT (diff $scratch/outputs-direct.txt $scratch/outputs-manager.txt)"
fi
echo "outputs: $same" >&2

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
tasks=$(cd "$dir" && "$scratch/vx" run build --dry=json | grep -c '"taskId"')
echo "outputs of a cold build, direct against $manager: $same"
echo
echo "| cold build, $(basename "$dir"): $tasks tasks, concurrency $C (median of $R) | wall | CPU |"
echo "| --- | --- | --- |"
echo "| vx, the scripts' text run directly | $(med "${cw[direct]}") ms | $(med "${cc[direct]}") ms |"
echo "| vx, through $manager | $(med "${cw[manager]}") ms | $(med "${cc[manager]}") ms |"
echo "| turbo $("$turbo" --version 2>/dev/null) (through $manager) | $(med "${cw[turbo]}") ms | $(med "${cc[turbo]}") ms |"
