package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
)

// migration is one numbered step of the index layout, from the layout of the step before it.
type migration struct {
	version int
	// what names the step, for a failure's message.
	what  string
	stmts []string
	// convert, when set, runs after stmts, in the same transaction: what SQL alone cannot carry
	// over from the layout before.
	convert func(ctx context.Context, tx *sql.Tx) error
}

// migrations make the index, in order: a writer that opens an index of an older version applies
// the steps above it, inside the transaction that opens it (so that a reader sees the index before
// them or after them, never halfway), and stamps it with the last one's version (see readVersion).
// SchemaVersion is the last step's version. A released step is never changed: a new layout is a
// new step at the end, and a step that removes what readers need moves oldestReadable up to it.
//
// The index files stamped version 1 were written before the steps were numbered, and the vx of that
// time patched steps 2 and 3 into them as it opened them, without changing the stamp: a version-1
// file may already hold what those steps make, so they make it only where it is missing.
var migrations = []migration{
	{1, "create the tables", tablesV1, nil},
	// The indexes the history readers (vx last, vx cache stats, the MCP history tools) lean on.
	{2, "index the history", []string{
		// A window of recent runs read without touching the table: per run, its executions by
		// status (and task name, for a run history narrowed to one), with what the statistics use;
		// a row whose sandbox_violations is not '[]' did not pass, so it is listed.
		`CREATE INDEX IF NOT EXISTS executions_by_run ON executions (run_id, status, task, task_id, duration_ms, user_cpu_ms, sys_cpu_ms, peak_rss, sandbox_violations)`,
		// The last 24 hours of cache use: the executions of a status since a time, counted in the index.
		`CREATE INDEX IF NOT EXISTS executions_by_status ON executions (status, started_ms)`,
		// The cache's entries and size, whole or of one project; it covers the first layout's
		// cache_entries_by_project, which no write should maintain beside it.
		`CREATE INDEX IF NOT EXISTS cache_entries_by_project_size ON cache_entries (project, size)`,
		`DROP INDEX IF EXISTS cache_entries_by_project`,
	}, nil},
	// key_outcomes: the flaky tasks of the whole history (see flaky.go), filled once from it.
	{3, "keep the outcomes of each cache key", []string{keyOutcomesTable, keyOutcomesFill, keyOutcomesTrigger}, nil},
	// The scheduler's memory model: what each task reserved from the run's budget, and the budget
	// with its source, so that vx last shows them as the run's own summary did.
	{4, "keep the memory reservations", []string{
		`ALTER TABLE executions ADD COLUMN reserved_bytes INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE runs ADD COLUMN memory_budget INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE runs ADD COLUMN memory_source TEXT NOT NULL DEFAULT ''`,
	}, nil},
	// What a full hit reads before it runs, kept small. The scheduler's estimates read each task's
	// last command runs (RecentCommandRuns): through executions_by_task that scan walked past
	// every hit in the history, which grows by a row per task per run; this index holds only the
	// command runs, with what the estimates read. The stat cache moves to a row per folder
	// (filestats.go): a run loads thousands of rows, not one per file; its per-file rows are
	// carried over (an upgrade on a large repo would otherwise hash every file again once). New
	// cache entries pack their output listing (entries.go); older ones keep their JSON.
	{5, "index the command runs; pack the stat cache and the output listings", []string{
		`CREATE INDEX IF NOT EXISTS executions_command_runs ON executions (task_id, run_id, ord, status, duration_ms, peak_rss)
			WHERE status IN ` + ranStatuses,
		`CREATE TABLE IF NOT EXISTS stat_folders (folder TEXT PRIMARY KEY, rows BLOB NOT NULL)`,
		// A cache entry's output listing packed (entries.go): a full hit reads one a task.
		`ALTER TABLE cache_entries ADD COLUMN listing BLOB`,
	}, statsByFolder},
	// How long each task waited for another vx process that was running it (the task lock), so
	// that vx last answers it as the run's own summary did.
	{6, "keep how long each task waited for another run", []string{
		`ALTER TABLE executions ADD COLUMN waited_ms INTEGER NOT NULL DEFAULT 0`,
	}, nil},
	// How many output files each hit restored, so that vx last shows a hit that restored none.
	{7, "keep the files each hit restored", []string{
		`ALTER TABLE executions ADD COLUMN restored_files INTEGER`,
	}, nil},
	// The outcomes of each key are upserted by the writer of executions (recordOutcomes), once per
	// task and key in a batch: the trigger made SQLite journal every execution inserted.
	{8, "upsert the outcomes of cache keys without a trigger", []string{
		`DROP TRIGGER IF EXISTS key_outcomes_record`,
	}, nil},
	// The executions of a project are found through executions_by_task, by the range of its task
	// ids (projectRange): executions_by_project put each recorded execution at another place of
	// one more index, a third of what recording a full hit cost.
	{9, "find a project's executions by its task ids", []string{
		`DROP INDEX IF EXISTS executions_by_project`,
	}, nil},
	// A run's tags (vx run --tag key=value), and how many attempts of each task failed before the
	// one recorded (vx run --retry, exec.retries): a task that passed after a failure is flaky.
	{10, "keep a run's tags and each task's failed attempts", []string{
		`ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '{}'`,
		`ALTER TABLE executions ADD COLUMN failed_attempts INTEGER NOT NULL DEFAULT 0`,
		// The few executions that passed after failed attempts, found without reading the others.
		`CREATE INDEX IF NOT EXISTS executions_retried ON executions (run_id) WHERE failed_attempts > 0`,
	}, nil},
	// Why a task that ran and passed stored no cache entry (a link its outputs may not hold, its
	// inputs changed while it ran), and whether --force made it run, so that vx last, vx why and
	// the history tools answer them as the run's own summary did. A forced run keeps its status
	// (miss): every statistic of the runs that passed counts it.
	{11, "keep why a task was not cached, and whether it was forced", []string{
		`ALTER TABLE executions ADD COLUMN not_cached TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE executions ADD COLUMN forced INTEGER NOT NULL DEFAULT 0`,
	}, nil},
	// The cache entries live in the shared store every checkout of the repository uses: setUp
	// carries them, the blobs, the command runs and the kept failure logs there first
	// (importLegacy), then this step drops them from the checkout's index.
	{12, "move the cache entries to the shared store", []string{
		`DROP TABLE IF EXISTS cache_entries`,
	}, nil},
	// The estimates carried from another machine (vx history import, carried.go): what the
	// scheduler plans a task from until it ran here.
	{13, "keep the estimates carried from another machine", []string{carriedTable}, nil},
	// Where each task's command ran (remote execution): a fallback to local is visible.
	// An index an older vx downgraded in place may hold the column already: it is added only
	// where it is missing.
	{14, "keep where each task ran", nil, addExecutorColumn},
	// Where each run ran (its commit and branch, CI, system, vx's version), for vx last.
	{15, "keep where each run ran", nil, func(ctx context.Context, tx *sql.Tx) error {
		return addColumn(ctx, tx, "runs", "context", `TEXT NOT NULL DEFAULT '{}'`)
	}},
	// Whether a task's outputs stayed remote (vx run --download): its row says nothing landed.
	{16, "keep whether a task's outputs stayed remote", nil, func(ctx context.Context, tx *sql.Tx) error {
		return addColumn(ctx, tx, "executions", "outputs_remote", `INTEGER NOT NULL DEFAULT 0`)
	}},
	// A task's history is found through the runs, each run's row of the task in the primary key:
	// executions_by_task put each task's newest row at the end of that task's range, one leaf a
	// task, so that a full hit of thousands of tasks rewrote nearly every leaf of it, and closing
	// the index copied and synced them (docs/performance.md, "G2's full hit again").
	{17, "find a task's history through its runs", []string{
		`DROP INDEX IF EXISTS executions_by_task`,
	}, nil},
}

// addExecutorColumn adds executions.executor where the table lacks it.
func addExecutorColumn(ctx context.Context, tx *sql.Tx) error {
	return addColumn(ctx, tx, "executions", "executor", `TEXT NOT NULL DEFAULT ''`)
}

// addColumn adds the column name, declared as decl, to table where the table lacks it: an index an
// older vx downgraded in place may hold it already.
func addColumn(ctx context.Context, tx *sql.Tx, table, name, decl string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `ALTER TABLE `+table+` ADD COLUMN `+name+` `+decl)
	return err
}

// statsByFolder moves the per-file stat cache rows of the first layout (file_stats) into
// stat_folders, and drops them.
func statsByFolder(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT path, size, mtime_ns, ctime_ns, ino, hash, recorded_ns FROM file_stats`)
	if err != nil {
		return fmt.Errorf("read file_stats: %w", err)
	}
	stats := map[string]FileStat{}
	for rows.Next() {
		var rel string
		var f FileStat
		var ino int64
		if err := rows.Scan(&rel, &f.Size, &f.MtimeNs, &f.CtimeNs, &ino, &f.Hash, &f.RecordedNs); err != nil {
			rows.Close()
			return fmt.Errorf("read file_stats: %w", err)
		}
		f.Ino = uint64(ino)
		stats[rel] = f
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read file_stats: %w", err)
	}
	for dir, files := range byFolder(stats) {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO stat_folders (folder, rows) VALUES (?, ?)`, dir, encodeStats(files)); err != nil {
			return fmt.Errorf("write stat_folders: %w", err)
		}
	}
	_, err = tx.ExecContext(ctx, `DROP TABLE file_stats`)
	return err
}

// tablesV1 are the tables of the first layout. Times are Unix milliseconds, file times nanoseconds;
// lists are JSON.
var tablesV1 = []string{
	`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
	// runs: one row per vx run. status: running, ok, failed, cancelled, interrupted (the process
	// died without finishing its row).
	`CREATE TABLE IF NOT EXISTS runs (
		id TEXT PRIMARY KEY,
		started_ms INTEGER NOT NULL,
		finished_ms INTEGER,
		status TEXT NOT NULL,
		exit_code INTEGER,
		pid INTEGER NOT NULL DEFAULT 0,
		host TEXT NOT NULL DEFAULT '',
		args TEXT NOT NULL DEFAULT '[]',
		requested TEXT NOT NULL DEFAULT '[]',
		task_count INTEGER NOT NULL DEFAULT 0,
		concurrency INTEGER NOT NULL DEFAULT 0
	)`,
	// executions: one row per task of a run, in the order the run finished them.
	`CREATE TABLE IF NOT EXISTS executions (
		run_id TEXT NOT NULL,
		task_id TEXT NOT NULL,
		project TEXT NOT NULL,
		task TEXT NOT NULL,
		ord INTEGER NOT NULL,
		status TEXT NOT NULL,
		exit_code INTEGER,
		started_ms INTEGER NOT NULL DEFAULT 0,
		duration_ms INTEGER NOT NULL DEFAULT 0,
		user_cpu_ms INTEGER NOT NULL DEFAULT 0,
		sys_cpu_ms INTEGER NOT NULL DEFAULT 0,
		peak_rss INTEGER NOT NULL DEFAULT 0,
		hash TEXT NOT NULL DEFAULT '',
		cache_source TEXT NOT NULL DEFAULT '',
		saved_ms INTEGER NOT NULL DEFAULT 0,
		blocked_by TEXT NOT NULL DEFAULT '',
		timed_out INTEGER NOT NULL DEFAULT 0,
		sandbox_violations TEXT NOT NULL DEFAULT '[]',
		not_ready TEXT NOT NULL DEFAULT '[]',
		log_blob TEXT NOT NULL DEFAULT '',
		log_source TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (run_id, task_id)
	)`,
	`CREATE INDEX IF NOT EXISTS executions_by_task ON executions (task_id, run_id)`,
	`CREATE INDEX IF NOT EXISTS executions_by_project ON executions (project, run_id)`,
	// cache_entries: one per cache key whose outputs and log are stored in cas/.
	`CREATE TABLE IF NOT EXISTS cache_entries (
		hash TEXT PRIMARY KEY,
		task_id TEXT NOT NULL,
		project TEXT NOT NULL,
		command TEXT NOT NULL,
		outputs_blob TEXT NOT NULL DEFAULT '',
		outputs TEXT NOT NULL DEFAULT '[]',
		log_blob TEXT NOT NULL DEFAULT '',
		size INTEGER NOT NULL DEFAULT 0,
		duration_ms INTEGER NOT NULL DEFAULT 0,
		exit_code INTEGER NOT NULL DEFAULT 0,
		created_ms INTEGER NOT NULL,
		last_used_ms INTEGER NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS cache_entries_by_task ON cache_entries (task_id, created_ms)`,
	// manifests: the JSON manifest each cache key was computed from (vx why diffs two).
	`CREATE TABLE IF NOT EXISTS manifests (hash TEXT PRIMARY KEY, task_id TEXT NOT NULL, manifest TEXT NOT NULL)`,
	// file_stats: the stat cache, root-relative path → what it looked like when hashed.
	`CREATE TABLE IF NOT EXISTS file_stats (
		path TEXT PRIMARY KEY,
		size INTEGER NOT NULL,
		mtime_ns INTEGER NOT NULL,
		ctime_ns INTEGER NOT NULL,
		ino INTEGER NOT NULL,
		hash TEXT NOT NULL,
		recorded_ns INTEGER NOT NULL
	)`,
}

// migrate applies the migrations above version from, in order, and stamps the index with the last
// one's version.
func migrate(ctx context.Context, tx *sql.Tx, from int) error {
	for _, m := range migrations[from:] {
		for _, stmt := range m.stmts {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.version, m.what, err)
			}
		}
		if m.convert != nil {
			if err := m.convert(ctx, tx); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.version, m.what, err)
			}
		}
	}
	// PRAGMA takes no parameters; the version is a number of ours.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion)); err != nil {
		return fmt.Errorf("stamp version %d: %w", SchemaVersion, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)`,
		strconv.Itoa(SchemaVersion)); err != nil {
		return fmt.Errorf("stamp version %d: %w", SchemaVersion, err)
	}
	return nil
}
