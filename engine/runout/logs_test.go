package runout

import "testing"

func TestCheckLogOptions(t *testing.T) {
	for _, ok := range [][2]string{{"", ""}, {"full", "stream"}, {"new-only", "grouped"}, {"errors-only", "auto"}, {"none", ""}, {"hash-only", ""}} {
		if err := CheckLogOptions(ok[0], ok[1]); err != nil {
			t.Errorf("CheckLogOptions(%q, %q) = %v", ok[0], ok[1], err)
		}
	}
	if err := CheckLogOptions("some", ""); err == nil || err.Error() != "--output-logs=some: want full, new-only, errors-only, hash-only or none" {
		t.Errorf("CheckLogOptions(some) = %v", err)
	}
	if err := CheckLogOptions("", "sorted"); err == nil || err.Error() != "--log-order=sorted: want stream, grouped or auto" {
		t.Errorf("CheckLogOptions(sorted) = %v", err)
	}
}
