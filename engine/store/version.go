package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SchemaVersion is the version of the index layout this vx writes: the last migration's. An index
// of an older version is upgraded by the next writer; one of a newer or unknown version is refused
// by readers and reset by the next vx run.
const SchemaVersion = 17

// oldestReadable is the oldest layout this vx's readers read as it is: they count on key_outcomes
// (migration 3) and the memory reservations (migration 4). What migrations 5 and 6 add a reader
// does without: an index that lacks them answers an empty stat cache and the output listings as
// JSON (packedVersion), the command runs by a slower plan, and no task as having waited
// (waitedVersion).
const oldestReadable = 4

// unknownVersion is the version of an index whose stamps this vx cannot place.
const unknownVersion = -1

// VersionError is an index written by another schema version.
type VersionError struct {
	Path  string
	Found string // the version found, "none" when the file holds no version stamp
}

// Error names the file and both versions, and what the next vx run does about it.
func (e *VersionError) Error() string {
	next := "resets"
	if n, err := strconv.Atoi(e.Found); err == nil && n >= 1 && n < SchemaVersion {
		next = "upgrades"
	}
	return fmt.Sprintf("%s has index schema version %s, this vx reads version %d: the next `vx run` %s it",
		e.Path, e.Found, SchemaVersion, next)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// readVersion answers an index's layout version and how messages name it: 0 and "" for a file that
// holds no table yet (a new index, or one another process is creating right now), unknownVersion
// for one whose stamps this vx cannot place.
//
// The version is PRAGMA user_version, and the same number is kept in the meta table's schema row:
// the one stamp the vx before the migrations read, so that it too refuses an index of another
// layout by name rather than misreading it. An index whose user_version is 0 and whose row says 1
// was written by that vx: version 1. Where the two stamps disagree otherwise, no vx kept them
// together: the index is named by its row.
func readVersion(ctx context.Context, q querier) (int, string, error) {
	var version int
	if err := q.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return 0, "", err
	}
	row, err := readSchemaRow(ctx, q)
	if err != nil {
		return 0, "", err
	}
	switch {
	case version > 0 && row == strconv.Itoa(version):
		return version, row, nil
	case version == 0 && row == "1":
		return 1, row, nil
	case row != "":
		return unknownVersion, row, nil
	}
	tables, err := hasTables(ctx, q)
	switch {
	case err != nil:
		// A locked or unreadable index is not a new one (version 0, which a writer would set up).
		return 0, "", err
	case !tables:
		return 0, "", nil
	}
	return unknownVersion, "none", nil
}

// readSchemaRow answers the meta table's schema row, "" when there is no meta table or no row.
func readSchemaRow(ctx context.Context, q querier) (string, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'`).Scan(&n); err != nil {
		return "", err
	}
	if n == 0 {
		return "", nil
	}
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='schema'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func hasTables(ctx context.Context, q querier) (bool, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type='table'`).Scan(&n); err != nil {
		return false, fmt.Errorf("list tables: %w", err)
	}
	return n > 0, nil
}

// setUp brings the index to SchemaVersion inside one write transaction, so that two processes
// opening a fresh folder at once agree: it applies the migrations a new or older index lacks, and
// resets one of a newer or unknown version when reset is set (else it is a *VersionError).
func (s *Store) setUp(ctx context.Context, db *sql.DB, reset bool) error {
	path := IndexPath(s.dir)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer tx.Rollback()
	version, found, err := readVersion(ctx, tx)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	switch {
	case version == SchemaVersion:
		// Nothing to write: the transaction only read.
		return nil
	case version == unknownVersion || version > SchemaVersion:
		if !reset {
			return &VersionError{Path: path, Found: found}
		}
		if err := dropAll(ctx, tx); err != nil {
			return fmt.Errorf("reset %s: %w", path, err)
		}
		s.Reset = "schema version " + found
		version = 0
	}
	verb := "upgrade"
	if version == 0 {
		verb = "create"
	}
	if version > 0 && version < sharedVersion {
		if err := s.importLegacy(ctx, tx, version); err != nil {
			return fmt.Errorf("%s %s: %w", verb, path, err)
		}
	}
	if err := migrate(ctx, tx, version); err != nil {
		return fmt.Errorf("%s %s: %w", verb, path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s %s: %w", verb, path, err)
	}
	return nil
}

// dropAll drops every table of the index, with their indexes and triggers.
func dropAll(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	for _, n := range names {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS "`+strings.ReplaceAll(n, `"`, `""`)+`"`); err != nil {
			return err
		}
	}
	return nil
}
