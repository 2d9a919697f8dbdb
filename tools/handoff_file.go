package tools

import (
	"fmt"
	"os"
)

// tempHandoffFile answers a temporary file for a runTasks child's hand-off, owner-only and removed
// from its folder at once, and what closes it (and removes it, where an open file could not be
// removed).
func tempHandoffFile() (*os.File, func(), error) {
	f, err := os.CreateTemp("", "vx-handoff-*")
	if err != nil {
		return nil, nil, fmt.Errorf("runTasks: hand-off file: %w", err)
	}
	removed := os.Remove(f.Name()) == nil
	return f, func() {
		f.Close()
		if !removed {
			_ = os.Remove(f.Name())
		}
	}, nil
}
