//go:build !linux

package workspace

// memoryCgroup stands for Linux's memory cgroups, which other systems do not have.
type memoryCgroup struct{}

// newMemoryCgroup answers nil: there is no memory cgroup outside Linux.
func newMemoryCgroup(uint64) *memoryCgroup { return nil }

func (*memoryCgroup) procsFile() string { return "" }
func (*memoryCgroup) oomKilled() bool   { return false }
func (*memoryCgroup) remove()           {}

// applyMemoryBound sets no bound outside Linux: the child's own heap sampling is what holds
// there (see docs/config.md).
func applyMemoryBound(evalRequest) error { return nil }
