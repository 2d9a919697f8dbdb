package main

import (
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/runout"
	"github.com/vzn/vx/engine/vxerr"
)

// habitFlags are the vx run flags a Turborepo user reaches for in the first hour, spelled as
// turbo spells them: --concurrency as a count or a share of the CPUs, --continue, --output-logs
// and --log-order.
type habitFlags struct {
	concurrency string
	continueOn  string
	outputLogs  string
	logOrder    string
}

// continueDefault is vx run's default after a failure, as turbo's
// --continue=dependencies-successful: the tasks that do not depend on it go on.
const continueDefault = "dependencies-successful"

// continueAlways is --continue=always, and --continue without a value, as turbo 2's: the
// dependents of a failed task run too.
const continueAlways = "always"

func (h *habitFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&h.concurrency, "concurrency", "", "how many tasks run at once: `N`, or a share of the CPUs such as 50% (default: env VX_CONCURRENCY, else the number of CPUs)")
	f.StringVar(&h.continueOn, "continue", "", "after a failure, go on: `WHEN` is dependencies-successful (vx run's default: every task that does not depend on the failure), always (the default of --continue alone, as turbo's: the failure's dependents run too) or never (--bail)")
	f.Lookup("continue").NoOptDefVal = continueAlways
	f.StringVar(&h.outputLogs, "output-logs", "", "which task output to show, as `MODE`: full (the default), new-only (not the logs hits replay), errors-only (failed tasks' output, each whole), hash-only (each task's key, no output) or none")
	f.StringVar(&h.logOrder, "log-order", "", "how task output is ordered, as `ORDER`: stream (the default: lines as they come) or grouped (each task's output together when it ends)")
}

// apply checks the flags' values and puts them in rf: the worker count, --bail for
// --continue=never, continueAlways for --continue=always. Each refusal is a usage error naming the flag.
func (h *habitFlags) apply(cmd *cobra.Command, rf *runFlags) error {
	if cmd.Flags().Changed("concurrency") {
		n, err := parseConcurrency(h.concurrency, runtime.NumCPU())
		if err != nil {
			return err
		}
		rf.concurrency = n
	}
	switch h.continueOn {
	case "", continueDefault:
		if h.continueOn != "" && rf.bail {
			return vxerr.Usagef("--continue and --bail: choose one (--continue, the default, goes on after a failure; --bail stops)")
		}
	case "never":
		rf.bail = true
	case continueAlways:
		if rf.bail {
			return vxerr.Usagef("--continue and --bail: choose one (--continue, --continue=always, runs even the dependents of a failure; --bail stops)")
		}
		rf.continueAlways = true
	default:
		return vxerr.Usagef("--continue=%s: want dependencies-successful (the default), always or never", h.continueOn)
	}
	return runout.CheckLogOptions(h.outputLogs, h.logOrder)
}

// logOptions are the runner's log options for the flags, in colour or not.
func (h *habitFlags) logOptions(color bool) runout.LogOptions {
	return runout.LogOptions{Show: h.outputLogs, Grouped: h.logOrder == runout.OrderGrouped, Color: color}
}

// parseConcurrency reads --concurrency: a positive count, or a percentage of cpus (at least one
// worker). 0, a negative count or anything else is refused.
func parseConcurrency(v string, cpus int) (int, error) {
	refuse := vxerr.Usagef("--concurrency %s: want a positive number of tasks, or a share of the CPUs such as 50%%", v)
	if pct, ok := strings.CutSuffix(strings.TrimSpace(v), "%"); ok {
		p, err := strconv.ParseFloat(pct, 64)
		if err != nil || p <= 0 {
			return 0, refuse
		}
		return max(1, int(float64(cpus)*p/100)), nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return 0, refuse
	}
	return n, nil
}
