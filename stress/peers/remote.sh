#!/usr/bin/env bash
# Restore from a shared remote cache: vx from bazel-remote, vx from ducktors/turborepo-remote-cache,
# and `turbo run build` from the same ducktors server, on one generated workspace of N packages
# (/work/shared/bench/genmono.py, or $GENMONO). It builds bazel-remote v2.6.2 from its module
# (stress/remote/bazelremote) and installs ducktors 2.12.0 and turbo into a scratch folder (never
# into vx), starts both servers on free ports of 127.0.0.1 with temporary folders, fills them from
# one checkout (vx uploads to each server, turbo to ducktors), then in R rounds that interleave the
# three, times `build` in a fresh copy of the checkout (no dist/, no local cache: every task a
# remote hit, checked), reporting medians and the ratios. The servers are stopped at the end.
# DELAY (a Go duration, e.g. 5ms) puts stress/delayproxy between the tools and both servers for
# the timed runs: every request and its answer take 2 × DELAY more, as across a network.
# Usage: stress/peers/remote.sh [N=300] [R=5]     Output: a Markdown table on stdout.
set -euo pipefail
N=${1:-300}
R=${2:-5}
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/stress/peers/lib.sh"
scratch=${VX_PEERS_DIR:-/tmp/vx-peers-remote}
genmono=${GENMONO:-/work/shared/bench/genmono.py}
mkdir -p "$scratch"
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 CI=true

echo "building vx and bazel-remote, installing ducktors and turbo into $scratch ..." >&2
build_vx "$scratch"
[ -x "$scratch/bazel-remote" ] || (cd "$repo/stress/remote/bazelremote" && GOWORK=off go build -o "$scratch/bazel-remote" github.com/buchgr/bazel-remote/v2)
if [ ! -x "$scratch/tools/node_modules/.bin/turbo" ] || [ ! -f "$scratch/tools/node_modules/turborepo-remote-cache/dist/cli.js" ]; then
	mkdir -p "$scratch/tools"
	(cd "$scratch/tools" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund turbo@2.11.11 turborepo-remote-cache@2.12.0 >&2)
fi
turbo=$scratch/tools/node_modules/.bin/turbo
vx=$scratch/vx

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
work=$(mktemp -d "$scratch/run.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

brport=$(freeport)
"$scratch/bazel-remote" --dir "$work/bazel-remote" --max_size 5 --http_address "127.0.0.1:$brport" --grpc_address none >"$work/bazel-remote.log" 2>&1 &
pids+=($!)
dkport=$(freeport)
token=bench-token
(cd "$scratch/tools" && PORT=$dkport HOST=127.0.0.1 TURBO_TOKEN=$token STORAGE_PROVIDER=local STORAGE_PATH="$work/ducktors" \
	STORAGE_PATH_USE_TMP_FOLDER=false LOG_LEVEL=error NODE_ENV=production exec node node_modules/turborepo-remote-cache/dist/cli.js) >"$work/ducktors.log" 2>&1 &
pids+=($!)
for u in "http://127.0.0.1:$brport/status" "http://127.0.0.1:$dkport/v8/artifacts/status"; do
	for _ in $(seq 100); do curl -s -o /dev/null "$u" && break; sleep 0.1; done
done

ws=$work/ws
python3 "$genmono" "$ws" "$N" >&2
export TURBO_API=http://127.0.0.1:$dkport TURBO_TOKEN=$token TURBO_TEAM=vx-bench
# vx's local store lives outside the checkout (one per repository, by the path of its .git): each
# fresh copy gets an empty one of its own, so that its hits can only come from the server.
braddr=127.0.0.1:$brport dkaddr=127.0.0.1:$dkport
vx_bazel() { VX_CACHE_DIR=$work/b-store VX_REMOTE_CACHE_URL=http://$braddr VX_REMOTE_CACHE_PROTOCOL=bazel "$vx" run build --concurrency 2 --format json; }
vx_turbo() { VX_CACHE_DIR=$work/b-store VX_REMOTE_CACHE_URL=http://$dkaddr VX_REMOTE_CACHE_PROTOCOL=turbo VX_REMOTE_CACHE_TOKEN=$token "$vx" run build --concurrency 2 --format json "$@"; }
# vx's turbo protocol needs a team or slug: the generated workspace names none, so add one (the
# URL and protocol come from the environment above).
sed -i "s#^export default defineWorkspace({#export default defineWorkspace({\n  remoteCache: { slug: 'vx-bench' },#" "$ws/vx.workspace.ts"
grep -q remoteCache "$ws/vx.workspace.ts" || {
	echo "could not add remoteCache to $ws/vx.workspace.ts" >&2
	exit 1
}
(cd "$ws" && git -c user.name=b -c user.email=b@b commit -qam remote)

echo "filling the servers ..." >&2
(cd "$ws" && vx_bazel >/dev/null 2>&1)
(cd "$ws" && rm -rf .vx "$work/b-store" && vx_turbo >/dev/null 2>&1)
(cd "$ws" && "$turbo" run build --concurrency=2 --output-logs=none >/dev/null 2>&1)

if [ -n "${DELAY:-}" ]; then
	(cd "$repo" && go build -o "$scratch/delayproxy" ./stress/delayproxy)
	exec {brfd}< <("$scratch/delayproxy" "127.0.0.1:$brport" "$DELAY")
	pids+=($!)
	exec {dkfd}< <("$scratch/delayproxy" "127.0.0.1:$dkport" "$DELAY")
	pids+=($!)
	read -r braddr <&"$brfd"
	read -r dkaddr <&"$dkfd"
	export TURBO_API=http://$dkaddr
	echo "through delayproxy ($DELAY each way): bazel-remote at $braddr, ducktors at $dkaddr" >&2
fi

# fresh: a copy of the checkout without outputs or local caches.
fresh() {
	rm -rf "$work/b" "$work/b-store"
	git clone -q "$ws" "$work/b"
}
# time_restore NAME CMD...: wall ms of CMD in a fresh copy; checks that every task was a remote hit.
time_restore() {
	local name=$1 t0 t1 out
	shift
	fresh
	t0=$(now)
	out=$(cd "$work/b" && "$@" 2>&1) || { echo "$name failed: $out" >&2; exit 1; }
	t1=$(now)
	case $name in
	# grep reads a here-string, not a pipe: grep -q ending early must not SIGPIPE an echo (pipefail).
	turbo) grep -q "Cached: *$N cached, $N total" <<<"$out" || { echo "turbo: not every task cached: $(tail -5 <<<"$out")" >&2; exit 1; } ;;
	*) grep -q "\"remoteHits\": *$N" <<<"$out" || {
		echo "$out" >"$scratch/$name-failed.out"
		echo "$name: not every task a remote hit: see $scratch/$name-failed.out" >&2
		exit 1
	} ;;
	esac
	echo $(((t1 - t0) / 1000000))
}
declare -A times
for r in $(seq "$R"); do
	echo "round $r/$R ..." >&2
	times[vxb]+="$(time_restore vx-bazel vx_bazel) "
	times[vxt]+="$(time_restore vx-turbo vx_turbo) "
	times[tb]+="$(time_restore turbo "$turbo" run build --concurrency=2 --output-logs=none) "
done
m() { tr ' ' '\n' <<<"${times[$1]}" | grep . | median; }
vxb=$(m vxb) vxt=$(m vxt) tb=$(m tb)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f×", b / a }'; }
echo "| restore of $N packages, fresh checkout${DELAY:+, $DELAY each way} | wall (median of $R) | turbo ÷ this |"
echo "| --- | --- | --- |"
echo "| vx from bazel-remote 2.6.2 | $vxb ms | $(ratio "$vxb" "$tb") |"
echo "| vx from ducktors 2.12.0 (turbo API) | $vxt ms | $(ratio "$vxt" "$tb") |"
echo "| turbo $("$turbo" --version) from ducktors 2.12.0 | $tb ms | 1.0× |"
echo "rounds (ms): vx-bazel ${times[vxb]}; vx-turbo ${times[vxt]}; turbo ${times[tb]}" >&2
