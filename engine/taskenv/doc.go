// Package taskenv prepares what a task runs in: its environment (Env: what it declares, the base
// list, a credential only when it names it).
package taskenv
