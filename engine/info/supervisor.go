package info

import (
	"runtime"

	"github.com/vzn/vx/proc/sandbox"
)

// Supervisor is the program a run starts each task under, as `vx run` picks it.
type Supervisor struct {
	// Program is the supervisor's executable; "" where tasks run unsupervised.
	Program string `json:"program"`
	// Kind is "helper" (vx-sandbox, or the program VX_SANDBOX_HELPER names), "vx" (vx itself,
	// `vx __supervise`) or "none" (not Linux: a task's process group is all there is).
	Kind string `json:"kind"`
	// Note says it in one line for people.
	Note string `json:"note"`
}

// SupervisorFor answers the supervisor a run on goos uses: the program VX_SANDBOX_HELPER names,
// else vx-sandbox next to the vx executable, else vx itself; none off Linux.
func SupervisorFor(goos string, getenv func(string) string) Supervisor {
	if goos != "linux" {
		return Supervisor{Kind: "none", Note: "none: tasks are not supervised on " + goos + " (a task's process group is all there is)"}
	}
	named := getenv("VX_SANDBOX_HELPER")
	if p := sandbox.HelperFor(named); p != "" {
		from := sandbox.HelperName + " next to vx"
		if named != "" {
			from = "VX_SANDBOX_HELPER"
		}
		return Supervisor{Program: p, Kind: "helper", Note: p + " (" + from + ")"}
	}
	return Supervisor{Program: "vx", Kind: "vx",
		Note: "vx itself (vx __supervise: no " + sandbox.HelperName + " next to vx, so each task pays a start of vx)"}
}

// hostSupervisor is SupervisorFor on the host vx runs on.
func hostSupervisor(getenv func(string) string) Supervisor {
	return SupervisorFor(runtime.GOOS, getenv)
}
