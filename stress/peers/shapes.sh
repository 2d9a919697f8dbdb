#!/usr/bin/env bash
# Times vx, Turborepo and Nx side by side on one of the benchmark shapes of docs/performance.md
# ("The benchmark shapes"), written by stress/shapes: G1 (N projects, i depending on i−3, i−6,
# i−9), G2 (layers of packages whose tasks are `sleep 1`) or G3 (9,603 tasks in 30 levels).
# It installs turbo and nx from npm into a scratch folder (never into vx), then, in R rounds that
# alternate the tools (vx, turbo, nx, vx, …), times for each tool:
#   cold     — every task runs (outputs deleted, the tool's caches cleared first);
#   hit      — nothing changed: every task a cache hit;
#   restore  — every output deleted: every task restored from the cache;
#   leaf     — one source file of a project nothing depends on changed;
#   core     — one source file of the project everything depends on changed;
#   dry      — the plan only: `--dry=json` (Nx: `--graph=stdout`, its nearest).
# Each cell is the median over the rounds of wall time, with CPU time (user + system, the whole
# process tree) and peak RSS (the largest single process of the tree) measured by GNU time.
# For G2 it also prints each tool's cold wall time minus the ideal schedule's (critical path
# first, no overhead, every task one second) at the same concurrency.
#
# Usage: stress/peers/shapes.sh SHAPE [GENERATOR FLAGS...]
#   stress/peers/shapes.sh g1 -n 100
#   stress/peers/shapes.sh g2 -layers 100
#   stress/peers/shapes.sh g3 -levels 30
# Environment: R rounds (default 3), C concurrency of every tool (default 10, Turborepo's own),
# VX_PEERS_DIR the scratch folder (default /tmp/vx-peers), TURBO and NX the npm versions, TOOLS the
# tools timed (default "vx turbo nx"; the goals compare vx with Turborepo only), PHASES the
# measurements taken (default "cold hit restore leaf core dry"), COLD_R the rounds whose cold run is
# timed (default R: every round). A round without a timed cold run still runs every task once,
# untimed, the first time it meets a tool, so that the tool's cache holds every entry; the big
# shapes' cold runs take Turborepo tens of minutes (npm starts thousands of scripts), so
# `COLD_R=1 PHASES="cold hit restore dry"` times their cold run once and the rest R times.
# FILL=sh makes those untimed runs of turbo and nx start each package script through a stand-in
# for npm that runs the script's text with sh: at 5,000 workspaces each real `npm run` costs about
# a second of CPU (npm maps every workspace first), which makes filling Turborepo's cache alone a
# matter of hours. Without PEER_NPM=sh nothing timed runs through it; each timed full hit is checked.
# PEER_NPM=sh makes the timed runs of turbo and nx go through the stand-in too: their times are then
# those of the peer without npm's start, a lower bound of what its users wait (npm runs every
# script of theirs), which a ratio of vx's to it can only overstate; the table says so.
# Output: a Markdown table on stdout; progress on stderr.
set -euo pipefail
shape=${1:?usage: shapes.sh g1|g2|g3 [generator flags]}
shift
R=${R:-3}
C=${C:-10}
TOOLS=${TOOLS:-vx turbo nx}
PHASES=${PHASES:-cold hit restore leaf core dry}
COLD_R=${COLD_R:-$R}
FILL=${FILL:-npm}
PEER_NPM=${PEER_NPM:-npm}
TURBO=${TURBO:-2.11.13}
NX=${NX:-24.0.7}
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/stress/peers/lib.sh"
scratch=${VX_PEERS_DIR:-/tmp/vx-peers}
mkdir -p "$scratch"
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false CI=true NX_SKIP_NX_CACHE=false

echo "building vx and installing turbo@$TURBO and nx@$NX into $scratch ..." >&2
build_vx "$scratch" && (cd "$repo" && go build -o "$scratch/shapes" ./stress/shapes)
tools=$scratch/tools-$TURBO-$NX
if [ ! -x "$tools/node_modules/.bin/turbo" ] || [ ! -x "$tools/node_modules/.bin/nx" ]; then
	mkdir -p "$tools"
	(cd "$tools" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "turbo@$TURBO" "nx@$NX" >&2)
fi
vx=$scratch/vx
turbo=$tools/node_modules/.bin/turbo
nx=$tools/node_modules/.bin/nx

ws=$scratch/shape-$shape
rm -rf "$ws"
# vx's shared content store lives beside the workspace, so that a cold run can clear it.
export VX_CACHE_DIR=$ws.vx-store
info=$("$scratch/shapes" -shape "$shape" -concurrency "$C" -npm "$(npm --version)" -out "$ws" "$@")
eval "$info" # tasks count projects leaf core [ideal_lower_s ideal_list_s]
# nx loads its modules from the workspace: share the scratch install rather than install again.
ln -s "$tools/node_modules" "$ws/node_modules"
(cd "$ws" && git init -q && git add -A && git -c user.name=p -c user.email=p@p commit -qm init)

# A vx that refuses a task with no command (the group task) runs the shape without it.
vx_tasks=$tasks
vx_note=""
if ! (cd "$ws" && "$vx" run $tasks --dry=json >/dev/null 2>"$scratch/vx-dry.err"); then
	if grep -q 'has no command' "$scratch/vx-dry.err"; then
		rm -rf "$ws/.vx"
		"$scratch/shapes" -shape "$shape" -concurrency "$C" -npm "$(npm --version)" -vx-groups=false -out "$ws.novx" "$@" >/dev/null
		cp "$ws.novx/vx.workspace.ts" "$ws/vx.workspace.ts"
		rm -rf "$ws.novx"
		vx_tasks=${tasks/ check/}
		vx_note="vx refused the group task (no command): it ran without it ($vx_tasks)."
		echo "$vx_note" >&2
	else
		cat "$scratch/vx-dry.err" >&2
		exit 1
	fi
fi

# Each tool works in a copy of the workspace of its own: Turborepo without its daemon rewrites
# every output on a full hit, which a tool sharing the folder would find changed under it (and
# check by content) at its next run.
for tool in $TOOLS; do
	rm -rf "${ws:?}.$tool"
	cp -a "$ws" "$ws.$tool"
done

outputs() { rm -rf "$ws.$1"/packages/*/dist "$ws.$1"/packages/*/docs "$ws.$1"/packages/*/pack; }
run_vx()    { (cd "$ws.vx" && "$vx" run $vx_tasks --concurrency "$C" "$@"); }
run_turbo() { (cd "$ws.turbo" && "$turbo" run $tasks --concurrency="$C" --output-logs=none "$@"); }
run_nx()    { (cd "$ws.nx" && "$nx" run-many -t $tasks --parallel="$C" --outputStyle=static "$@"); }
dry_vx()    { run_vx --dry=json; }
dry_turbo() { run_turbo --dry=json; }
dry_nx()    { (cd "$ws.nx" && "$nx" run-many -t $tasks --graph=stdout); }
clear_vx()    { rm -rf "$ws.vx/.vx" "$VX_CACHE_DIR"; }
clear_turbo() { rm -rf "$ws.turbo/.turbo" "$ws.turbo"/node_modules/.cache/turbo; }
clear_nx()    { rm -rf "$ws.nx/.nx" "$ws.nx"/node_modules/.cache/nx; (cd "$ws.nx" && "$nx" reset >/dev/null 2>&1 || true); }

# GNU time runs a program: the tool functions reach it through bash, with what they use exported.
export ws vx turbo nx C tasks vx_tasks
export -f run_vx run_turbo run_nx dry_vx dry_turbo dry_nx

# measure NAME CMD...: runs CMD once (output discarded; a failure stops the script) and appends
# "wall_ms cpu_ms peak_rss_kb" to the samples of NAME.
declare -A samples
measure() {
	local name=$1 t0 t1 usage
	shift
	t0=$(now)
	/usr/bin/time -f '%U %S %M' -o "$scratch/time.out" bash -c "$*" >"$scratch/last.log" 2>&1 || {
		echo "failed: $name: $*" >&2
		tail -20 "$scratch/last.log" >&2
		exit 1
	}
	t1=$(now)
	usage=$(tail -1 "$scratch/time.out")
	samples[$name]+="$(((t1 - t0) / 1000000)) $(echo "$usage" | awk '{printf "%d %d", ($1 + $2) * 1000, $3}');"
}

# full_hit TOOL checks that the run just measured ran nothing, from each tool's summary.
full_hit() {
	local ok=true
	case $1 in
	turbo) grep -Eq "Cached: +([0-9]+) cached, \1 total" "$scratch/last.log" || ok=false ;;
	vx) grep -Eq "ok: ([0-9]+) tasks, \1 hit, 0 miss" "$scratch/last.log" || ok=false ;;
	nx) grep -q "existing outputs match the cache\|read the output from the cache" "$scratch/last.log" || ok=false ;;
	esac
	$ok || {
		echo "$1: the full hit ran tasks:" >&2
		tail -20 "$scratch/last.log" >&2
		exit 1
	}
}

# A stand-in for `npm run NAME` that runs the script's text with sh (FILL=sh; see above): it reads
# the script from the project's package.json, one key a line as stress/shapes writes it.
mkdir -p "$scratch/fill-bin"
cat >"$scratch/fill-bin/npm" <<'SHIM'
#!/bin/sh
[ "$1" = run ] || { echo "fill npm: only 'run NAME' is stood in for: $*" >&2; exit 2; }
script=$(sed -n "s/^    \"$2\": \"\(.*\)\",\{0,1\}\$/\1/p" package.json)
[ -n "$script" ] || { echo "fill npm: no script $2 in $PWD/package.json" >&2; exit 2; }
exec sh -c "$script"
SHIM
chmod +x "$scratch/fill-bin/npm"

# timed TOOL prints the command that runs TOOL in a timed run: a peer's through the stand-in for
# npm under PEER_NPM=sh.
timed() {
	if [ "$PEER_NPM" = sh ] && [ "$1" != vx ]; then
		echo "PATH=$scratch/fill-bin:\$PATH run_$1"
	else
		echo "run_$1"
	fi
}

# edit FILE runs the tool after appending a line to FILE, then puts FILE back.
edit() {
	local name=$1 file=$ws.$3/$2 tool=$3
	cp "$file" "$scratch/saved"
	echo "export const edited = $RANDOM" >>"$file"
	measure "$name" "$(timed "$tool")"
	cp "$scratch/saved" "$file"
}

# phase NAME: whether PHASES holds NAME.
phase() { [[ " $PHASES " == *" $1 "* ]]; }

for round in $(seq "$R"); do
	for tool in $TOOLS; do
		if phase cold && [ "$round" -le "$COLD_R" ]; then
			outputs "$tool"
			"clear_$tool"
			measure "$tool cold" "$(timed "$tool")"
		elif [ "$round" -eq 1 ]; then
			outputs "$tool"
			"clear_$tool"
			fill_path=$PATH
			[ "$FILL" != sh ] || [ "$tool" = vx ] || fill_path=$scratch/fill-bin:$PATH
			PATH=$fill_path "run_$tool" >"$scratch/last.log" 2>&1 || { echo "failed: $tool's untimed cold run" >&2; tail -20 "$scratch/last.log" >&2; exit 1; }
		fi
		if phase hit; then
			measure "$tool hit" "$(timed "$tool")"
			full_hit "$tool"
		fi
		if phase restore; then
			outputs "$tool"
			measure "$tool restore" "$(timed "$tool")"
		fi
		! phase leaf || edit "$tool leaf" "$leaf" "$tool"
		! phase core || edit "$tool core" "$core" "$tool"
		! phase dry || measure "$tool dry" "dry_$tool"
		echo "round $round: $tool done ($(uptime | sed 's/.*load/load/'))" >&2
	done
done

# column NAME FIELD prints the median of one field (1 wall, 2 CPU, 3 RSS) of NAME's samples.
column() { tr ';' '\n' <<<"${samples[$1]}" | awk -v f="$2" 'NF {print $f}' | median; }
# cell NAME prints "wall ms (CPU ms, RSS MB)", or "not run".
cell() {
	[ -n "${samples[$1]:-}" ] || { printf 'not run'; return; }
	printf '%s ms (%s ms CPU, %s MB)' "$(column "$1" 1)" "$(column "$1" 2)" "$(($(column "$1" 3 | cut -d. -f1) / 1024))"
}

cold_note=""
! phase cold || [ "$COLD_R" -eq "$R" ] || cold_note="; cold of $COLD_R"
echo "| $shape $* ($count tasks, $projects projects, concurrency $C, median of $R$cold_note) | vx | turbo $("$turbo" --version 2>/dev/null) | nx $("$nx" --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1) | vx / turbo |"
echo "| --- | --- | --- | --- | --- |"
for sc in cold hit restore leaf core dry; do
	phase "$sc" || continue
	ratio=$(awk -v a="$(column "vx $sc" 1)" -v b="$(column "turbo $sc" 1)" 'BEGIN {printf "%.2f", a / b}')
	echo "| $sc | $(cell "vx $sc") | $(cell "turbo $sc") | $(cell "nx $sc") | $ratio |"
done
if [ -n "${ideal_list_s:-}" ]; then
	declare -A over
	for tool in vx turbo nx; do
		if [ -n "${samples[$tool cold]:-}" ]; then over[$tool]="$(($(column "$tool cold" 1 | cut -d. -f1) - ideal_list_s * 1000)) ms"; else over[$tool]="not run"; fi
	done
	echo "| cold minus the ideal schedule ($ideal_list_s s; lower bound $ideal_lower_s s) | ${over[vx]} | ${over[turbo]} | ${over[nx]} | $(awk -v a="${over[vx]% ms}" -v b="${over[turbo]% ms}" 'BEGIN {printf "%.2f", a / b}') |"
fi
[ -z "$vx_note" ] || echo "
$vx_note"
[ "$PEER_NPM" != sh ] || echo "
Turborepo and Nx ran each package script through a stand-in for npm that runs its text with sh
(PEER_NPM=sh): their times are lower bounds of what they take through npm, as their users run them."
