// Package actor is the MCP server of `vx mcp`: newline-delimited JSON-RPC 2.0
// over stdio, speaking the MCP revisions 2024-11-05, 2025-03-26, 2025-06-18 and
// 2025-11-25 through the initialize handshake and the stateless 2026-07-28 one
// (server/discover, the revision in each request's _meta, resultType on results).
//
// On a connection that negotiates a handshake revision, tools/list and tools/call
// are refused (-32600) until initialize was answered; a stateless request, which
// names its revision in params._meta, needs no handshake. An id is echoed byte for
// byte, so one that is not valid UTF-8 (which no JSON reply could carry) is refused.
//
// The connection (serve.go, conn.go, writer.go) is apart from MCP (mcp.go,
// mcp_tools.go). One reader goroutine reads frames and hands each request to the
// MCP session, which answers the control messages itself — ping, initialize,
// server/discover — so they never wait behind work; notifications/cancelled is
// acted on by the reader too. tools/list and tools/call go through an unbounded
// queue to a bounded pool (sourcegraph/conc). One writer goroutine owns the reply
// stream and writes each reply, batch array or notification as one line.
//
// Every request runs under its own context: notifications/cancelled, the end of
// Serve's context (a signal) and a broken reply stream cancel it, each as its
// context.Cause, and a cancelled request gets no reply. On stdin's EOF the
// requests already read are answered within a short grace, but a tool that is not
// read-only is cancelled at once. All in-flight state lives in one struct changed
// in one closure-taking method (conn.update), and a call's life is a phase moved
// only by the state's transitions (inflight.go): register, start, cancel, finish,
// claim.
//
// MCP tasks (tasks.go) run a tool that allows it (runTasks) beyond the request that
// started it, for a client that declares them: 2025-11-25's tasks/* and the 2026-07-28
// tasks extension. A task's context is a child of the server's, not of its request's,
// and its goroutine is the session's: stdin's end cancels it, and Serve waits for it
// before it closes the reply stream. Confirmations (confirm.go) ask the client's user
// before a tool destroys or runs what the workspace did not allow: elicitation/create,
// a request of the server's whose response the reader routes back (asked.go), or an
// input_required answer with a signed requestState for a stateless client.
//
// GuardStdout is called first: it keeps fd 1 for the replies and points fd 1 at
// stderr, so that nothing else in the process or its children can corrupt them.
package actor
