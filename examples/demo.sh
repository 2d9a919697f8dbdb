#!/usr/bin/env bash
# Builds vx, runs it on the example workspace — cold, warm, after an edit (and why it ran again),
# and a failing task — and makes an MCP round trip with `vx mcp`: the first of the README's two
# set-up commands. The edits it makes to examples/basic are undone when it ends, however it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/vx ./cmd/vx
vx=$PWD/bin/vx
cd examples/basic
rm -rf .vx

lib=packages/lib/src/index.ts app=packages/app/src/main.ts
lib_was=$(cat "$lib") app_was=$(cat "$app")
trap 'printf "%s\n" "$lib_was" > "$lib"; printf "%s\n" "$app_was" > "$app"' EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
step vx show app
"$vx" show app
step vx run build test          # cold: every task runs
"$vx" run build test
step vx run build test          # warm: every task is a cache hit, its log replayed after its hit line
"$vx" run build test

printf '\n# an edit to lib: lib and everything that depends on it run again\n'
printf '%s\n' "$lib_was" 'export const shout = (name: string) => greet(name).toUpperCase()' > "$lib"
step vx run build test
"$vx" run build test
step vx why app#build           # app's own files did not move: lib#build's key did, because src/index.ts did
"$vx" why app#build

printf '\n# a TODO left in app: lint fails, and says where\n'
printf '%s\n' "$app_was" '// TODO: say goodbye too' > "$app"
step vx run lint
"$vx" run lint && exit 1 || printf '(vx run exited %d: a task failed)\n' "$?"
step vx last --list
"$vx" last --list

step vx mcp                     # an MCP client's first calls, one reply line each
coproc MCP { "$vx" mcp; }
call() {
	printf '%s\n' "$1" >&"${MCP[1]}"
	IFS= read -r reply <&"${MCP[0]}"
	printf '→ %s\n← %.300s%s\n' "$1" "$reply" "$([ ${#reply} -gt 300 ] && echo ' …')"
}
call '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}'
printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"${MCP[1]}"
call '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
call '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"listTasks","arguments":{"project":"app"}}}'
call '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"getRunHistory","arguments":{"limit":5}}}'
call '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"getFailures","arguments":{}}}'
exec {MCP[1]}>&-
wait "$MCP_PID"
printf '\nvx mcp exited cleanly on end of input.\n'
