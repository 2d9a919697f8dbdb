package deploysubset

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (git runs through proc).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
