package runner

import (
	"maps"
	"slices"
	"sync"

	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/summary"
)

// changedInputs keeps the tasks of a run whose outputs are not what their keys describe: those
// whose input files changed while their command ran (hasher.Recheck), and, after them, every task
// that ran on their outputs (its key holds theirs). None of them is cached. It is safe for
// concurrent use.
type changedInputs struct {
	mu sync.Mutex
	// byTask maps each such task to the files it names in its summary row: its own inputs as
	// its inputs name them, or, for a task that ran on another's outputs, that task's files
	// root-relative ("//"-prefixed).
	byTask map[string][]string
	// rooted maps each such task to the root-relative ("//"-prefixed) form of those files.
	rooted map[string][]string
}

// put records the files (as its inputs name them) of the task id, in the project folder dir, that
// changed while it ran.
func (c *changedInputs) put(id, dir string, files []string) {
	rooted := make([]string, len(files))
	for i, f := range files {
		rooted[i] = hasher.RootedInput(dir, f)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byTask == nil {
		c.byTask, c.rooted = map[string][]string{}, map[string][]string{}
	}
	c.byTask[id], c.rooted[id] = files, rooted
}

// fromDeps answers the tasks among n's dependencies that are recorded, and the files they name,
// root-relative; it records n with those files. None when no dependency is recorded.
func (c *changedInputs) fromDeps(n *node) (deps, files []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	set := map[string]bool{}
	for _, d := range n.deps {
		if f, ok := c.rooted[d.task.ID]; ok {
			deps = append(deps, d.task.ID)
			for _, name := range f {
				set[name] = true
			}
		}
	}
	if len(deps) == 0 {
		return nil, nil
	}
	files = slices.Sorted(maps.Keys(set))
	c.byTask[n.task.ID], c.rooted[n.task.ID] = files, files
	return deps, files
}

// fill sets the row of each recorded task in sum.
func (c *changedInputs) fill(sum *summary.Summary) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, t := range sum.Tasks {
		if files, ok := c.byTask[t.TaskID]; ok {
			sum.Tasks[i].InputsChangedDuringRun = files
		}
	}
}
