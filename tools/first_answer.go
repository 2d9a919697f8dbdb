package tools

import (
	"encoding/json"

	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/info"
)

// A first answer — a call with no narrowing argument and no cursor — is a summary: it begins with
// the totals and what needs attention and fits summaryChars at any workspace size, the lists it
// windows shown only as far as their heads (listTasks, getRunHistory, getWorkspaceInfo,
// planTasks); the cursor reaches every element, and the narrowing arguments each item's detail.
const (
	// summaryChars is what a summary's text may take: the lists' heads are chosen to fit
	// summaryRoom, which leaves room for the page fields and a hint a tool adds.
	summaryChars = 8000
	summaryRoom  = summaryChars - window.Reserve - 400
	// summaryListChars: lists whose elements together take at most this many characters are
	// answered whole in a summary (a small workspace's first answer is the whole answer).
	summaryListChars = 6000
	// summaryRunRows is how many of its tasks that did not pass a run of a summary lists.
	summaryRunRows = 3
)

// jsonSize is the length of v's JSON; a value that does not encode counts as too large.
func jsonSize(v any) int {
	js, err := json.Marshal(v)
	if err != nil {
		return summaryChars
	}
	return len(js)
}

// headFit answers how many of the first elements of items fit chars characters of JSON, each
// with its comma, and the characters they take.
func headFit[T any](items []T, chars int) (n, used int) {
	for _, it := range items {
		size := jsonSize(it) + 1
		if used+size > chars {
			break
		}
		used += size
		n++
	}
	return n, used
}

// historyLists answers getRunHistory's windowed lists: the runs (invocations), the executions
// (runs) and the task statistics (history). A summary (no project, task or limit) whose lists
// are large lists each run's first few tasks that did not pass (the run's own summary,
// getRunHistory { runId }, has them all) and, on its first page, the newest runs, the most
// recently run tasks' statistics and the newest executions that fit summaryChars; the cursor
// continues every list.
func historyLists(h *history.RunHistory, summary bool) []window.List {
	runs, execs, stats := window.Of("invocations", &h.Runs), window.Of("runs", &h.Executions), window.Of("history", &h.Tasks)
	if !summary || jsonSize(h.Runs)+jsonSize(h.Executions)+jsonSize(h.Tasks) <= summaryListChars {
		return []window.List{runs, execs, stats}
	}
	h.Brief(summaryRunRows)
	room := summaryRoom - jsonSize(history.RunHistory{Limit: h.Limit, Totals: h.Totals, OmittedTasks: h.OmittedTasks})
	// The runs take at most a third of the room, the statistics the next third; the executions
	// what is left.
	nRuns, used := headFit(h.Runs, room/3)
	nStats, usedStats := headFit(h.Tasks, room/3)
	nExecs, _ := headFit(h.Executions, room-used-usedStats)
	return []window.List{runs.Head(max(nRuns, 1)), execs.Head(nExecs), stats.Head(nStats)}
}

// planTaskLists answers planTasks' windowed lists, the critical path and the tasks, ordered as
// planLists orders them. A summary (no filter, no affected) whose lists are large shows on its
// first page the critical path and the predicted misses — what a run would execute, in dependency
// order — that fit summaryChars beside the totals; the cursor lists every task.
func planTaskLists(ans *PlanAnswer, summary bool) []window.List {
	p := ans.Plan
	lists := planLists(p)
	if !summary || jsonSize(p.Tasks)+jsonSize(p.CriticalPath) <= summaryListChars {
		return lists
	}
	base := *p
	base.Tasks, base.CriticalPath = nil, nil
	room := summaryRoom - jsonSize(PlanAnswer{ExitCode: ans.ExitCode, Plan: &base, Counts: ans.Counts})
	// The critical path takes at most a quarter of the room; the misses, listed first, what is left.
	nPath, used := headFit(p.CriticalPath, room/4)
	nTasks, _ := headFit(p.Tasks[:p.Totals.Misses], room-used)
	return []window.List{lists[0].Head(nPath), lists[1].Head(nTasks)}
}

// infoLists answers getWorkspaceInfo's windowed lists: the configs that did not load, the flaky
// tasks in the original's rows and vx's flaky section's task ids (doc's flaky section made a
// pointer, so that the window sees its list). The answer begins with its attention lines and
// totals; where the lists are large, the first page shows the first of each that fit
// summaryChars, and the cursor the rest.
func infoLists(doc *info.Document) []window.List {
	flaky := &info.FlakyReport{}
	f, known := doc.FlakyTasks.Value.(info.FlakyReport)
	if known {
		flaky = &f
		doc.FlakyTasks.Value = flaky
	}
	// A config error is written with the original's path beside its file.
	errSizes := make([]int, len(doc.ConfigErrors))
	for i, e := range doc.ConfigErrors {
		errSizes[i] = jsonSize(e) + len(`,"path":`) + jsonSize(e.File)
	}
	lists := []headed{{window.Of("configErrors", &doc.ConfigErrors), errSizes},
		headedOf(window.Of("flakyTasks", &doc.Facts.FlakyTasks), doc.Facts.FlakyTasks)}
	if known {
		lists = append(lists, headedOf(window.Of("flakyReport.value.tasks", &flaky.Tasks), flaky.Tasks))
	}
	errs, rows, ids := doc.ConfigErrors, doc.Facts.FlakyTasks, flaky.Tasks
	doc.ConfigErrors, doc.Facts.FlakyTasks, flaky.Tasks = nil, nil, nil
	base := jsonSize(doc)
	doc.ConfigErrors, doc.Facts.FlakyTasks, flaky.Tasks = errs, rows, ids
	return summaryLists(base, lists...)
}

// headed is one list of a first answer with the JSON size of each of its elements.
type headed struct {
	list  window.List
	sizes []int
}

// headedOf is list, whose elements are items, with their sizes.
func headedOf[T any](list window.List, items []T) headed {
	sizes := make([]int, len(items))
	for i, it := range items {
		sizes[i] = jsonSize(it)
	}
	return headed{list, sizes}
}

// summaryLists answers the lists of a first answer (no narrowing argument, no cursor) whose
// document without its lists takes base characters: where the lists' elements together are
// small (summaryListChars) they are answered whole; else each list, in the order given (what
// needs attention first), shows the first elements that fit what summaryRoom leaves, and the
// cursor the rest.
func summaryLists(base int, lists ...headed) []window.List {
	out := make([]window.List, len(lists))
	total := 0
	for i, l := range lists {
		out[i] = l.list
		for _, s := range l.sizes {
			total += s + 1
		}
	}
	if total <= summaryListChars {
		return out
	}
	room := summaryRoom - base
	for i, l := range lists {
		n, used := 0, 0
		for _, s := range l.sizes {
			if used+s+1 > room {
				break
			}
			used += s + 1
			n++
		}
		room -= used
		out[i] = l.list.Head(n)
	}
	return out
}
