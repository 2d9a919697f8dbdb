package workspace

import (
	"slices"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/suggest"
)

// DidYouMean is the hint a refusal of word ends with, " (did you mean X?)", X the known word
// nearest it; "" when none is near.
func DidYouMean(word string, known []string) string {
	if best, ok := suggest.Closest(word, known); ok {
		return " (did you mean " + best + "?)"
	}
	return ""
}

// TaskNames lists the task names the workspace's projects declare, sorted, each once.
func TaskNames(ws *graph.Workspace) []string {
	var names []string
	for _, p := range ws.Projects {
		for name := range p.Tasks {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// projectNames lists the workspace's project names.
func projectNames(ws *graph.Workspace) []string {
	names := make([]string, 0, len(ws.Projects))
	for _, p := range ws.Projects {
		names = append(names, p.Name)
	}
	return names
}

// projectTags lists the tags the workspace's projects carry, each once.
func projectTags(ws *graph.Workspace) []string {
	var tags []string
	for _, p := range ws.Projects {
		tags = append(tags, p.Tags...)
	}
	slices.Sort(tags)
	return slices.Compact(tags)
}
