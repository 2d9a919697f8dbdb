package tools

import (
	"testing"

	"github.com/vzn/vx/engine/store"
)

// getCacheStats' runCountLast24h and getWorkspaceInfo's runs24h count task executions, as the
// original's do (its history holds a row per task run), not vx runs: two runs of three tasks are
// six; a run that only blocked its task ran nothing and adds none. The project scope counts the
// project's executions.
func TestCountsOfTheLast24hAreExecutions(t *testing.T) {
	d, _, _ := answersDeps(t,
		[]fixedRun{{"a#build", store.StatusMiss, 0}, {"a#test", store.StatusMiss, 0}, {"b#build", store.StatusMiss, 0}},
		[]fixedRun{{"a#build", store.StatusHit, 0}, {"a#test", store.StatusFailed, 1}, {"b#build", store.StatusHit, 0}},
		[]fixedRun{{"b#test", store.StatusBlocked, 0}},
	)
	stats := answer(t, d.getCacheStats(), `{}`)
	if stats["runCountLast24h"] != 6.0 || stats["runs24h"] != 6.0 || stats["hitCountLast24h"] != 2.0 || stats["hitRate24h"] != 0.333 {
		t.Errorf("getCacheStats = runCountLast24h %v, runs24h %v, hitCountLast24h %v, hitRate24h %v; want 6 executions, 2 hits, 0.333",
			stats["runCountLast24h"], stats["runs24h"], stats["hitCountLast24h"], stats["hitRate24h"])
	}
	if a := answer(t, d.getCacheStats(), `{"scope":{"project":"a"}}`); a["runCountLast24h"] != 4.0 || a["hitCountLast24h"] != 1.0 {
		t.Errorf("getCacheStats of a = runCountLast24h %v, hitCountLast24h %v; want 4 and 1", a["runCountLast24h"], a["hitCountLast24h"])
	}
	if info := answer(t, d.getWorkspaceInfo(), `{}`); info["runs24h"] != 6.0 || info["hits24h"] != 2.0 {
		t.Errorf("getWorkspaceInfo = runs24h %v, hits24h %v; want 6 executions and 2 hits", info["runs24h"], info["hits24h"])
	}
}
