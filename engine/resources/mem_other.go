//go:build !linux && !windows && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package resources

import (
	"errors"
	"fmt"
)

// totalMemoryBytes is unknown here: the budget then has no default (--memory-budget,
// VX_MEMORY_BUDGET or memoryBudget set one).
func totalMemoryBytes() (int64, error) {
	return 0, fmt.Errorf("total memory: %w", errors.ErrUnsupported)
}

// availableMemoryBytes is the machine's RAM: vx reads no memory limit of its own here.
func availableMemoryBytes() (int64, bool, error) {
	total, err := totalMemoryBytes()
	return total, false, err
}
