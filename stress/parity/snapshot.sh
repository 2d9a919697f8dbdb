#!/usr/bin/env bash
# Snapshots the documents vx answers that do not change from run to run (show, the dry-run plan,
# info without timings, lock, init, docs, the MCP tools/list and the read-only tools) on copies
# of the examples, into OUT. Run it with the vx of two commits and diff the two folders: a
# refactoring that keeps behaviour leaves no difference.
#   stress/parity/snapshot.sh VX OUT
set -euo pipefail
vx=$(realpath "$1"); out=$(realpath -m "$2")
here=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out"; mkdir -p "$out"
work=/tmp/vx-parity-work; rm -rf "$work"; mkdir -p "$work"  # one fixed path: documents name the root
export GIT_AUTHOR_NAME=vx GIT_AUTHOR_EMAIL=vx@example.com GIT_COMMITTER_NAME=vx GIT_COMMITTER_EMAIL=vx@example.com

# a generated workspace beside the examples: 40 projects in four layers, each depending on two of
# the layer before, with templates, overrides, tags, a secret and the mcp() plugin
gen="$work/gen-src"; mkdir -p "$gen"
cat >"$gen/vx.workspace.ts" <<'TS'
import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp({ run: ['build', 'test'] })],
  tasks: {
    build: { command: 'mkdir -p dist && cat src/*.ts > dist/out.js', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] },
    test: { command: 'test -s dist/out.js', dependsOn: ['build'], timeout: '1m' },
    deploy: { command: 'echo deploy', cache: false, exec: { env: { TOKEN: { secret: 'PARITY_TOKEN' } } } },
  },
})
TS
for i in $(seq -w 0 39); do
	d="$gen/packages/p$i"; mkdir -p "$d/src"
	layer=$((10#$i / 10)); deps=""
	if [ "$layer" -gt 0 ]; then
		a=$(printf '%02d' $(( (layer - 1) * 10 + 10#$i % 10 ))); b=$(printf '%02d' $(( (layer - 1) * 10 + (10#$i + 3) % 10 )))
		deps="\"p$a\": \"*\", \"p$b\": \"*\""
	fi
	printf '{ "name": "p%s", "dependencies": { %s } }\n' "$i" "$deps" >"$d/package.json"
	printf 'export const v%s = %s\n' "$i" "$i" >"$d/src/index.ts"
	if [ $((10#$i % 7)) -eq 0 ]; then
		printf "export default { tags: ['seven'], tasks: { deploy: false, test: { command: 'true' } } }\n" >"$d/vx.project.ts"
	fi
done

for ex in "$here"/examples/*/ "$gen"/; do
	name=$(basename "$ex"); [ "$name" = gen-src ] && name=generated
	cp -R "$ex" "$work/$name"
	cd "$work/$name"
	rm -rf .vx
	git init -q -b main && git add -A && git commit -qm init
	snap() { local file=$1; shift; "$vx" "$@" >"$out/$name.$file" 2>&1 || echo "exit $?" >>"$out/$name.$file"; }
	snap show.json show --format json
	snap show.txt show
	snap dry.json run --all --dry=json
	snap lock-check.json lock --check --format json
	snap init.json init --dry --format json
	snap docs.json docs cache key --format json
	"$vx" run --all >/dev/null 2>&1 || true
	"$vx" run --all >/dev/null 2>&1 || true
	# the MCP surface: the handshake, tools/list and the tools whose answers hold no timings
	{
		echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"parity","version":"1"}}}'
		echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
		echo '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
		echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"listTasks","arguments":{}}}'
		echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"getConfig","arguments":{}}}'
		echo '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"checkLock","arguments":{}}}'
		echo '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"searchDocs","arguments":{"query":"cache key"}}}'
		echo '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"planInit","arguments":{}}}'
		echo '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope","arguments":{}}}'
		echo '{"jsonrpc":"2.0","id":9,"method":"bogus"}'
		sleep 2
	} | "$vx" mcp 2>/dev/null | python3 -c 'import json,sys
for line in sys.stdin:
    print(json.dumps(json.loads(line), sort_keys=True))' | sort >"$out/$name.mcp.jsonl" || true
	cd "$here"
done
echo "snapshots in $out"
