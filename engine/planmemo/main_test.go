package planmemo

import (
	"testing"

	"go.uber.org/goleak"
)

// A memo's background plan is owned by it: Close ends it, and none outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
