package runlanes

import (
	"slices"
	"testing"
	"time"
)

func at(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }

func TestLanesTakeTheLowestFreeLane(t *testing.T) {
	spans := []Span{
		{"d", at(30), at(50)}, // e's lane 0 is free again at 20
		{"a", at(0), at(30)},  // starts with b, ends later: lane 1
		{"b", at(0), at(10)},  // lane 0
		{"c", at(5), at(40)},  // lanes 0 and 1 busy: lane 2
		{"e", at(10), at(20)}, // b ended at 10: lane 0
		{"f", at(35), at(30)}, // ends before it starts: a point at 35, lane 1 (a ended at 30)
	}
	lanes, n := Lanes(spans)
	want := []int{0, 1, 0, 2, 0, 1}
	if !slices.Equal(lanes, want) || n != 3 {
		t.Errorf("lanes %v of %d, want %v of 3", lanes, n, want)
	}
	if lanes, n := Lanes(nil); len(lanes) != 0 || n != 0 {
		t.Errorf("no spans: %v, %d", lanes, n)
	}
}

func TestCriticalPathFollowsWhatHeldEachTaskUp(t *testing.T) {
	spans := []Span{
		{"lib#build", at(0), at(100)},
		{"util#build", at(0), at(40)},
		{"app#build", at(100), at(300)},
		{"app#lint", at(0), at(250)},
		{"dev#serve", at(0), at(400)}, // a server released its dependents early: it held nothing up
		{"app#test", at(300), at(350)},
	}
	deps := map[string][]string{
		"app#build": {"lib#build", "util#build"},
		"app#test":  {"app#build", "dev#serve", "gone#build"},
	}
	got := CriticalPath(spans, func(id string) []string { return deps[id] })
	// dev#serve ended last but nothing waited on it ending: the path is its own, one task.
	if want := []string{"dev#serve"}; !slices.Equal(got, want) {
		t.Errorf("critical path %v, want %v", got, want)
	}
	got = CriticalPath(spans[:len(spans)-2], func(id string) []string { return deps[id] })
	if want := []string{"lib#build", "app#build"}; !slices.Equal(got, want) {
		t.Errorf("critical path %v, want %v", got, want)
	}
	spans[4] = Span{"dev#serve", at(0), at(10)}
	got = CriticalPath(spans, func(id string) []string { return deps[id] })
	if want := []string{"lib#build", "app#build", "app#test"}; !slices.Equal(got, want) {
		t.Errorf("critical path %v, want %v", got, want)
	}
	if got := CriticalPath(nil, nil); got == nil || len(got) != 0 {
		t.Errorf("no spans: %#v, want an empty path", got)
	}
}
