package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/statedirs"
	"github.com/vzn/vx/engine/store"
)

// CacheInfo is vx info's cache section: the versions this vx reads and writes, the state of the
// checkout's state folder, and where the shared store is and why.
type CacheInfo struct {
	// CacheVersion enters every cache key; SchemaVersion is the index layout.
	CacheVersion  string `json:"cacheVersion"`
	SchemaVersion int    `json:"schemaVersion"`
	// State is absent (no index yet), ok, otherVersion (refused until the next vx run upgrades or resets it) or
	// unreadable; FoundVersion is the schema version on disk.
	State        string `json:"state"`
	FoundVersion string `json:"foundVersion,omitempty"`
	// Dir is the checkout's own state folder (history, stat cache, socket, locks), and
	// DirSource what chose it: default (.vx/ at the root) or env (VX_STATE_DIR).
	Dir       string `json:"dir"`
	DirSource string `json:"dirSource"`
	Error     string `json:"error,omitempty"`
	// SharedDir is the store every checkout of the repository shares (cache entries, blobs,
	// durations and peaks), SharedDirSource what chose it (default, config, flag, env, or "no
	// user cache folder"; "recorded" when the config does not load and the store is the one the
	// checkout's last run used), SharedState its index's state as State says.
	SharedDir       string `json:"sharedDir"`
	SharedDirSource string `json:"sharedDirSource"`
	SharedState     string `json:"sharedState"`
	SharedError     string `json:"sharedError,omitempty"`
	// Notes say what a reader may not expect: VX_CACHE_DIR's change of meaning, a .vx/ of the
	// layout before the shared store that the next run moves.
	Notes []string `json:"notes,omitempty"`
	// Entries and TotalBytes count the cache when the state is ok.
	Entries    int   `json:"entries"`
	TotalBytes int64 `json:"totalBytes"`
	Runs       int   `json:"runs"`
	// Runs24h counts the task executions of the last 24 hours that ran or restored their task (a
	// blocked or skipped one ran nothing), as the original counts them; Hits24h the hits among them.
	Runs24h int `json:"runs24h"`
	Hits24h int `json:"hits24h"`
}

// InfoCache answers vx info's cache section for the state folders dirs, creating nothing. A dirs
// without a shared folder reads the one the checkout's index records.
func InfoCache(ctx context.Context, dirs statedirs.Dirs, getenv func(string) string) (*CacheInfo, error) {
	dir := dirs.Checkout
	s := store.Inspect(ctx, dir)
	out := &CacheInfo{CacheVersion: hasher.CacheVersion, SchemaVersion: store.SchemaVersion, State: s.State,
		FoundVersion: s.FoundVersion, Dir: dir, DirSource: string(dirs.CheckoutSource), Error: s.Error,
		SharedDir: dirs.Shared, SharedDirSource: string(dirs.SharedSource), SharedState: "absent"}
	out.Notes = infoNotes(dirs, getenv)
	if s.State != "ok" && s.State != "absent" {
		return out, nil
	}
	st, err := store.OpenReadOnlyShared(ctx, dir, dirs.Shared)
	if err != nil {
		out.SharedState, out.SharedError = "unreadable", err.Error()
		var ve *store.SharedVersionError
		if errors.As(err, &ve) {
			out.SharedState = "otherVersion"
		}
		return out, nil
	}
	defer st.Close()
	if out.SharedDir == "" {
		out.SharedDir, out.SharedDirSource = st.SharedDir(), "recorded"
	}
	if n := st.LegacyEntries(ctx); n > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%s holds %d cache entries of the layout before the shared store: the next vx run moves them and their blobs into %s",
			dir, n, out.SharedDir))
	}
	if _, err := os.Stat(store.SharedIndexPath(st.SharedDir())); err == nil {
		out.SharedState = "ok"
	}
	if out.Entries, out.TotalBytes, err = st.CacheTotals(ctx, ""); err != nil {
		return nil, err
	}
	if out.Runs, err = st.CountRuns(ctx, time.Unix(0, 0)); err != nil {
		return nil, err
	}
	c, err := st.CountCache(ctx, "", time.Now().Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	out.Runs24h, out.Hits24h = c.ExecutionsSince, c.HitsSince
	return out, nil
}

// infoNotes says what vx info's reader may not expect of the state folders.
func infoNotes(dirs statedirs.Dirs, getenv func(string) string) []string {
	var notes []string
	if getenv != nil && getenv(statedirs.CacheDirEnv) != "" && dirs.SharedSource == statedirs.SourceEnv {
		notes = append(notes, statedirs.CacheDirEnv+" moves only the shared store now; "+statedirs.StateDirEnv+
			" moves a checkout's own state (.vx/)")
	}
	return notes
}

// InfoFlaky answers vx info's flaky tasks for the checkout's state folder dir (none when there is
// no index), their ids and each with its keys, passes and failures (store.FlakyCounts), creating
// nothing; an index of another version is an error naming it.
func InfoFlaky(ctx context.Context, dir string) ([]string, []store.FlakyCount, error) {
	st, err := store.OpenReadOnlyShared(ctx, dir, dir)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	ids, err := FlakyTasks(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	counts, err := st.FlakyCounts(ctx)
	if err != nil {
		return nil, nil, err
	}
	return ids, counts, nil
}
