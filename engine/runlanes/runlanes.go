// Package runlanes answers how a run's tasks lie in time, for the pictures of a run (the trace
// of `vx run --profile` and the page of `vx last --format html`): the lane each task ran on, the
// lowest one free when it started, and the critical path, the chain of tasks that ended last,
// each waiting on the one before it.
package runlanes

import (
	"cmp"
	"slices"
	"time"
)

// Span is one task's time in a run.
type Span struct {
	ID         string
	Start, End time.Time
}

// Lanes answers the lane of each span (by index), 0 first: spans sorted by start (then end, then
// id), each takes the lowest lane whose last span ended at or before it starts. It answers as well
// how many lanes there are. A span that ends before it starts counts as ending at its start.
func Lanes(spans []Span) (lanes []int, count int) {
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		sa, sb := spans[a], spans[b]
		if c := sa.Start.Compare(sb.Start); c != 0 {
			return c
		}
		if c := end(sa).Compare(end(sb)); c != 0 {
			return c
		}
		return cmp.Compare(sa.ID, sb.ID)
	})
	lanes = make([]int, len(spans))
	var free []time.Time // when each lane is free again
	for _, i := range order {
		s := spans[i]
		lane := -1
		for l, at := range free {
			if !at.After(s.Start) {
				lane = l
				break
			}
		}
		if lane < 0 {
			lane = len(free)
			free = append(free, time.Time{})
		}
		free[lane] = end(s)
		lanes[i] = lane
	}
	return lanes, len(free)
}

func end(s Span) time.Time {
	if s.End.Before(s.Start) {
		return s.Start
	}
	return s.End
}

// slack is how much later than a task's start a dependency may be recorded to have ended and
// still have held it up: the index keeps times to the millisecond.
const slack = time.Millisecond

// CriticalPath answers the chain of spans that ended last, first task first: from the span that
// ended last, each step goes to the dependency (deps gives a span's, by id) that ended last among
// those that ended by the time it started (a dependency that ended later did not hold it up: it
// was released early, a persistent server). Spans absent from spans are no step.
func CriticalPath(spans []Span, deps func(id string) []string) []string {
	if len(spans) == 0 {
		return []string{}
	}
	byID := make(map[string]Span, len(spans))
	last := spans[0]
	for _, s := range spans {
		byID[s.ID] = s
		if end(s).After(end(last)) || (end(s).Equal(end(last)) && s.ID < last.ID) {
			last = s
		}
	}
	path := []string{last.ID}
	seen := map[string]bool{last.ID: true}
	for cur := last; ; {
		var next *Span
		for _, id := range deps(cur.ID) {
			d, ok := byID[id]
			if !ok || seen[id] || end(d).After(cur.Start.Add(slack)) {
				continue
			}
			if next == nil || end(d).After(end(*next)) || (end(d).Equal(end(*next)) && d.ID < next.ID) {
				next = &d
			}
		}
		if next == nil {
			break
		}
		seen[next.ID] = true
		path = append(path, next.ID)
		cur = *next
	}
	slices.Reverse(path)
	return path
}
