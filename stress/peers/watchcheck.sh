#!/usr/bin/env bash
# watchcheck.sh OLD_VX NEW_VX [PACKAGES] [ROUNDS]: an all-hit `vx run build` beside each binary's
# own `vx watch build`, and scanning (VX_FILE_STATE=scan), on a generated npm-workspaces repo
# (shared/bench/genmono.py, or $VX_GENMONO), rounds alternating the two binaries. Prints each
# round's medians in ms (9 watched runs, 5 scanning). Everything lives in a scratch folder.
set -euo pipefail
old=$1 new=$2 size=${3:-300} rounds=${4:-3}
gen=${VX_GENMONO:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/bench/genmono.py}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for side in old new; do
  python3 "$gen" "$scratch/$side" "$size" >/dev/null
  # genmono.py makes a git repository of one commit already; commit anything it left out.
  (cd "$scratch/$side" && git add -A && { git diff --cached --quiet || git -c user.email=b@b -c user.name=b commit -qm rest; })
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
timed() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
measure() { # bin dir
  local bin=$1 dir=$2 watched scan wp
  (cd "$dir" && "$bin" run build >/dev/null 2>&1)
  (cd "$dir" && exec "$bin" watch build >/dev/null 2>&1) & wp=$!
  sleep 5
  watched=$(for _ in $(seq 9); do (cd "$dir" && timed "$bin" run build); done | median)
  kill -INT "$wp"; wait "$wp" 2>/dev/null || true
  scan=$(for _ in $(seq 5); do (cd "$dir" && VX_FILE_STATE=scan timed "$bin" run build); done | median)
  echo "watched $watched scan $scan"
}
for r in $(seq "$rounds"); do
  echo "round $r: old $(measure "$old" "$scratch/old") | new $(measure "$new" "$scratch/new")"
done
