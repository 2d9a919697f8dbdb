// Package stress holds the tests that try vx as a whole, against built binaries and real
// processes: the MCP server under thousands of pipelined and cancelled calls, runs killed at
// random moments, every trust boundary tried as an attacker would, answers on huge workspaces,
// and the benchmarks against peers (the scripts in stress/peers). It has no code of its own.
package stress
