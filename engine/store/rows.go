package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// scanner is what a row scanner reads from: a *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// preparedQuery is a querier of one prepared statement: the query text it is given is ignored.
type preparedQuery struct{ stmt *sql.Stmt }

func (p preparedQuery) QueryRowContext(ctx context.Context, _ string, args ...any) *sql.Row {
	return p.stmt.QueryRowContext(ctx, args...)
}

func (p preparedQuery) QueryContext(ctx context.Context, _ string, args ...any) (*sql.Rows, error) {
	return p.stmt.QueryContext(ctx, args...)
}

func (p preparedQuery) ExecContext(ctx context.Context, _ string, args ...any) (sql.Result, error) {
	return p.stmt.ExecContext(ctx, args...)
}

// queryAll runs query and scans every row with scan; what names the rows in an error ("runs").
func queryAll[T any](ctx context.Context, db querier, what string, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return out, nil
}

// scanString reads a row of one text column.
func scanString(sc scanner) (string, error) {
	var s string
	err := sc.Scan(&s)
	return s, err
}

// jsonColumn decodes a JSON list column into dst. vx writes these columns itself, inside the
// transaction that writes the row, so text that does not decode is a damaged index: the error
// names the column and the row's key rather than answering an empty list in silence. An empty
// value (a NULL read as "") is an empty list.
func jsonColumn(raw, column, row string, dst any) error {
	if raw == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(raw), dst); err != nil {
		return fmt.Errorf("%s of %s: %w", column, row, err)
	}
	return nil
}
