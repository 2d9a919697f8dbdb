#!/usr/bin/env bash
# Builds vx, runs it on the example workspace, and makes an MCP round trip with `vx mcp`:
# the first of the README's two set-up commands.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/vx ./cmd/vx
vx=$PWD/bin/vx
cd examples/basic
rm -rf .vx

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
step vx show app
"$vx" show app
step vx run build test          # cold: every task runs
"$vx" run build test
step vx run build test          # warm: every task is a cache hit
"$vx" run build test
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
exec {MCP[1]}>&-
wait "$MCP_PID"
printf '\nvx mcp exited cleanly on end of input.\n'
