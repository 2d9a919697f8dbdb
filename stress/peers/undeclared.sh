#!/usr/bin/env bash
# What the undeclared-outputs check costs a miss. A generated npm-workspaces repo
# (../shared/bench/genmono.py: N packages, 20 source files each; build `rm -rf dist && cp -R src
# dist`, which leaves a git-ignored dist/) is copied twice: in one the build declares no outputs,
# so after each miss vx looks for git-ignored files the task left (one `git ls-files` and a stat
# per ignored entry) and warns; in the other it says `outputs: []`, which vx takes as "nothing to
# keep" and does not look. Both run the same commands and archive nothing. R rounds alternate
# `vx run build --force` (every task a miss) between the two; the medians and their ratio are the
# check's cost. Usage: stress/peers/undeclared.sh [SIZES="100 300"] [R=7]
set -euo pipefail
SIZES=${1:-"100 300"}
R=${2:-7}
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/stress/peers/lib.sh"
gen=${VX_GENMONO:-$repo/../shared/bench/genmono.py}
scratch=${VX_PEERS_DIR:-/tmp/vx-peers-undeclared}
mkdir -p "$scratch"
build_vx "$scratch"
vx=$scratch/vx

echo "| packages | miss, outputs undeclared (checked) | miss, outputs: [] (not checked) | ratio | warnings |"
echo "| --- | --- | --- | --- | --- |"
for n in $SIZES; do
	base=$scratch/ws-$n
	rm -rf "$base" "$base-checked" "$base-unchecked" "$scratch"/t-*
	python3 "$gen" "$base" "$n" --files 20 >/dev/null
	grep -q "outputs: \['dist/\*\*'\]" "$base/vx.workspace.ts" || { echo "genmono's build no longer declares outputs: ['dist/**']" >&2; exit 1; }
	cp -R "$base" "$base-checked"
	cp -R "$base" "$base-unchecked"
	sed -i "s/, outputs: \['dist\/\*\*'\]//" "$base-checked/vx.workspace.ts"
	sed -i "s/outputs: \['dist\/\*\*'\]/outputs: []/" "$base-unchecked/vx.workspace.ts"
	for ws in "$base-checked" "$base-unchecked"; do
		(cd "$ws" && "$vx" run build >/dev/null 2>&1)
	done
	warnings=$(cd "$base-checked" && "$vx" run build --force 2>&1 >/dev/null | grep -c 'declares no outputs' || true)
	if [ "$warnings" != "$n" ] || (cd "$base-unchecked" && "$vx" run build --force 2>&1 >/dev/null | grep -q 'declares no outputs'); then
		echo "$n packages: expected $n warnings where undeclared and none with outputs: [] (got $warnings)" >&2
		exit 1
	fi
	for _ in $(seq "$R"); do
		(cd "$base-checked" && time_ms "$vx" run build --force) >>"$scratch/t-checked"
		(cd "$base-unchecked" && time_ms "$vx" run build --force) >>"$scratch/t-unchecked"
	done
	c=$(median <"$scratch/t-checked")
	u=$(median <"$scratch/t-unchecked")
	printf '| %s | %.3f s | %.3f s | %.3f× | %s |\n' "$n" "$(echo "$c" | awk '{print $1/1000}')" \
		"$(echo "$u" | awk '{print $1/1000}')" "$(echo "$c $u" | awk '{print $1/$2}')" "$warnings"
done
