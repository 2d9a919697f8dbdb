package resources

import "testing"

// A cgroup's CPU quota reads in cores; "max" or a negative quota binds nothing.
func TestQuotaCores(t *testing.T) {
	for _, c := range []struct {
		quota, period string
		cores         float64
		ok            bool
	}{
		{"150000", "100000", 1.5, true},
		{"max", "100000", 0, false},
		{"-1", "100000", 0, false},
		{"200000", "0", 0, false},
	} {
		if cores, ok := quotaCores(c.quota, c.period); cores != c.cores || ok != c.ok {
			t.Errorf("quotaCores(%q, %q) = %v, %v; want %v, %v", c.quota, c.period, cores, ok, c.cores, c.ok)
		}
	}
}
