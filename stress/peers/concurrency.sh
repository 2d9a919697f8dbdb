#!/usr/bin/env bash
# Times vx's cold runs at several concurrencies on three kinds of task, to choose the default
# worker count by measurement (docs/performance.md, "How many tasks at once"):
#   light — G1 at 100 projects (stress/shapes): 300 tasks that each start a shell and copy a file;
#   sleep — G2 at 3 layers: 99 tasks of `sleep 1`, tasks that wait rather than compute;
#   cpu   — G1 at 40 projects whose build also spins node for about a third of a second of CPU.
# In R rounds that rotate the concurrencies, each cold run starts from no outputs, no state
# folder and an empty store. Each cell is the median wall time, with CPU time (user + system of
# the whole tree) and the largest process's peak RSS from GNU time.
#
# Usage: stress/peers/concurrency.sh     Environment: R rounds (default 3), CS the concurrencies
# (default "2 4 8 10 16"), VX_PEERS_DIR the scratch folder (default /tmp/vx-peers-concurrency).
# Output: a Markdown table on stdout; progress on stderr.
set -euo pipefail
R=${R:-3}
CS=${CS:-2 4 8 10 16}
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/stress/peers/lib.sh"
scratch=${VX_PEERS_DIR:-/tmp/vx-peers-concurrency}
rm -rf "$scratch"
mkdir -p "$scratch"
build_vx "$scratch" && (cd "$repo" && go build -o "$scratch/shapes" ./stress/shapes)

# shape NAME GENERATOR-FLAGS...: writes the workspace NAME under scratch, committed.
shape() {
	local name=$1
	shift
	"$scratch/shapes" -out "$scratch/$name" -npm "$(npm --version)" "$@" >/dev/null
	(cd "$scratch/$name" && git init -q && git add -A && git -c user.name=p -c user.email=p@p commit -qm init)
}
shape light -shape g1 -n 100
shape sleep -shape g2 -layers 3
shape cpu -shape g1 -n 40
spin="node -e 'let x = 0; for (let i = 0; i < 3e8; i++) x += i'"
sed -i "s|\"build\": \"mkdir -p dist \&\& |\"build\": \"$spin \&\& mkdir -p dist \&\& |" "$scratch"/cpu/packages/*/package.json
(cd "$scratch/cpu" && git commit -qam spin)
grep -q "node -e" "$scratch/cpu/packages/p00000/package.json" || {
	echo "could not add the spin to the cpu shape's build" >&2
	exit 1
}

declare -A samples
# cold SHAPE C: one cold run of SHAPE's tasks at concurrency C, appended to its samples.
cold() {
	local ws=$scratch/$1 c=$2 t0 t1 tasks
	tasks=$(grep -o '^    [a-z]*:' "$ws/vx.workspace.ts" | tr -d ' :' | tr '\n' ' ')
	rm -rf "$ws/.vx" "$ws.store" "$ws"/packages/*/dist "$ws"/packages/*/docs "$ws"/packages/*/pack
	t0=$(now)
	(cd "$ws" && VX_CACHE_DIR=$ws.store /usr/bin/time -f '%U %S %M' -o "$scratch/time.out" \
		"$scratch/vx" run $tasks --concurrency "$c" >"$scratch/last.log" 2>&1) || {
		echo "failed: $1 at $c" >&2
		tail -20 "$scratch/last.log" >&2
		exit 1
	}
	t1=$(now)
	samples[$1 $c]+="$(((t1 - t0) / 1000000)) $(awk '{printf "%d %d", ($1 + $2) * 1000, $3}' "$scratch/time.out");"
}

read -ra cs <<<"$CS"
for round in $(seq "$R"); do
	# Rotate the order, so that no concurrency always runs first or last.
	for i in "${!cs[@]}"; do
		c=${cs[$(((i + round - 1) % ${#cs[@]}))]}
		for s in light sleep cpu; do cold "$s" "$c"; done
	done
	echo "round $round done ($(uptime | sed 's/.*load/load/'))" >&2
done

column() { tr ';' '\n' <<<"${samples[$1]}" | awk -v f="$2" 'NF {print $f}' | median; }
printf '| cold run, median of %s | %s |\n' "$R" "$(sed 's/ / | /g' <<<"$CS" | sed 's/\([0-9][0-9]*\)/concurrency \1/g')"
printf '| --- |%s\n' "$(for _ in "${cs[@]}"; do printf ' --- |'; done)"
for s in light sleep cpu; do
	printf '| %s |' "$s"
	for c in "${cs[@]}"; do
		printf ' %s ms (%s ms CPU, %s MB) |' "$(column "$s $c" 1)" "$(column "$s $c" 2)" "$(($(column "$s $c" 3 | cut -d. -f1) / 1024))"
	done
	echo
done
