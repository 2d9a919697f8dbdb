package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// sqliteCmd is the script command `sqlite FILE SQL`: it runs SQL on the SQLite file FILE (of the
// shared store or a checkout's index) and prints each row of a query, its columns tab-separated.
func sqliteCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sqlite FILE SQL")
	}
	err := sqliteRun(ts, ts.MkAbs(args[0]), args[1])
	if neg != (err != nil) {
		ts.Fatalf("sqlite %s: %v", args[0], err)
	}
}

func sqliteRun(ts *testscript.TestScript, file, query string) error {
	db, err := sql.Open("sqlite", file)
	if err != nil {
		return err
	}
	defer db.Close()
	if !strings.HasPrefix(strings.ToUpper(strings.TrimSpace(query)), "SELECT") {
		_, err := db.Exec(query)
		return err
	}
	rows, err := db.Query(query)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			parts[i] = fmt.Sprint(v)
		}
		fmt.Fprintln(ts.Stdout(), strings.Join(parts, "\t"))
	}
	return rows.Err()
}

// legacyStateCmd is the script command `legacystate CHECKOUT SHARED`: it turns a checkout's state
// folder and the shared store its runs wrote into the layout of the vx before the shared store
// (schema 9): the cache entries in the checkout's index.db, the blobs in its cas/, no shared store.
func legacyStateCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: legacystate CHECKOUT SHARED")
	}
	checkout, shared := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	ts.Check(legacyState(checkout, shared))
}

func legacyState(checkout, shared string) error {
	db, err := sql.Open("sqlite", filepath.Join(checkout, "index.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{
		`ATTACH DATABASE '` + filepath.Join(shared, "entries.db") + `' AS shared`,
		`CREATE TABLE cache_entries (hash TEXT PRIMARY KEY, task_id TEXT NOT NULL, project TEXT NOT NULL, command TEXT NOT NULL,
			outputs_blob TEXT NOT NULL DEFAULT '', outputs TEXT NOT NULL DEFAULT '[]', log_blob TEXT NOT NULL DEFAULT '',
			size INTEGER NOT NULL DEFAULT 0, duration_ms INTEGER NOT NULL DEFAULT 0, exit_code INTEGER NOT NULL DEFAULT 0,
			created_ms INTEGER NOT NULL, last_used_ms INTEGER NOT NULL, listing BLOB)`,
		`INSERT INTO cache_entries SELECT hash, task_id, project, command, outputs_blob, outputs, log_blob, size, duration_ms,
			exit_code, created_ms, last_used_ms, listing FROM shared.cache_entries`,
		`DETACH DATABASE shared`,
		`DELETE FROM meta WHERE key = 'shared_dir'`,
		`PRAGMA user_version = 11`,
		`UPDATE meta SET value = '11' WHERE key = 'schema'`,
	} {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(shared, "cas"), filepath.Join(checkout, "cas")); err != nil {
		return err
	}
	return os.RemoveAll(shared)
}

// scriptCondition answers the scripts' own conditions: [root], the test runs as root (who alone may
// give a folder to another user).
func scriptCondition(cond string) (bool, error) {
	if cond == "root" {
		return os.Geteuid() == 0, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}
