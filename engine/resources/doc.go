// Package resources resolves what a run may use of the machine: how many tasks run at once
// (Workers) and how much memory their reservations may add up to (MemoryBudget), each with the
// source it came from (a flag, the environment, vx.workspace.ts, the cgroup or the machine), as
// `vx run` schedules with them and `vx info` reports them; and what each task is expected to
// take (Estimates from its recent runs, TaskMemory and DefaultTaskMemory where it has none).
package resources
