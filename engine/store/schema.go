package store

// schema creates the index. Times are Unix milliseconds, file times nanoseconds; lists are JSON.
var schema = []string{
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

// readIndexes are the indexes the history readers (vx last, vx cache stats, the MCP history tools)
// lean on. They are not part of the layout the schema version names: a writer creates the missing
// ones each time it opens the index, so an index recorded before they existed keeps its history
// and gains them at the next vx run or vx cache prune, and SQLite keeps them current on every
// write after that, whichever vx writes. A reader never creates them; where they are missing it
// answers the same, only slower.
var readIndexes = []struct{ name, columns string }{
	// A window of recent runs read without touching the table: per run, its executions by status
	// (and task name, for a run history narrowed to one), with what the statistics use; a row whose
	// sandbox_violations is not '[]' did not pass, so it is listed.
	{"executions_by_run", `executions (run_id, status, task, task_id, duration_ms, user_cpu_ms, sys_cpu_ms, peak_rss, sandbox_violations)`},
	// The last 24 hours of cache use: the executions of a status since a time, counted in the index.
	{"executions_by_status", `executions (status, started_ms)`},
	// The cache's entries and size, whole or of one project.
	{"cache_entries_by_project_size", `cache_entries (project, size)`},
}

// droppedIndexes are indexes an earlier layout had that a readIndexes entry now covers (it starts
// with the same columns); a writer drops them so that no write maintains both.
var droppedIndexes = []string{"cache_entries_by_project"}
