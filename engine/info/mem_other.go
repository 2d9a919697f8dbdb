//go:build !linux && !windows && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package info

import (
	"errors"
	"fmt"
)

// totalMemoryBytes is unknown here: the budget then has no default (VX_MEMORY_BUDGET sets one).
func totalMemoryBytes() (int64, error) {
	return 0, fmt.Errorf("total memory: %w", errors.ErrUnsupported)
}
