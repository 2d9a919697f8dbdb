// Package taskenv prepares what a task runs in and checks what it left: its environment (Env: what
// it declares, the base list, a credential only when it names it), its sandbox (Sandboxes: the
// Landlock policy of its reads and writes, and the violations found once it ended), and the
// git-ignored files a task that declares no outputs left in its project (Undeclared).
package taskenv
