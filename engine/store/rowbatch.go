package store

import (
	"context"
	"database/sql"
	"fmt"
)

// rowsPerStatement is how many rows one multi-row statement of a recorded batch writes: a flush
// of the run's recorder (256 executions) is two full statements, whose text is prepared once for
// the store's life; 128 rows of 29 values stay far below SQLite's limit of bound values (32,766).
const rowsPerStatement = 128

// prepareFullRows prepares, outside any transaction, the full statement sqlOf(rowsPerStatement)
// for the store's life when n rows need one: a transaction holds one of the index's connections,
// and preparing on the index from within it could wait for itself.
func (s *Store) prepareFullRows(ctx context.Context, n int, sqlOf func(rows int) string) error {
	if n < rowsPerStatement {
		return nil
	}
	_, err := s.prepared(ctx, sqlOf(rowsPerStatement))
	return err
}

// execRows writes n rows in tx with statements of up to rowsPerStatement rows each: sqlOf(rows) is
// the statement for rows rows and args(dst, i) appends row i's values to dst. A full statement is
// the store's where prepareFullRows prepared it (reused by every transaction), else, as a
// shorter one, the transaction's own. what names the rows of a statement in its error.
func (s *Store) execRows(ctx context.Context, tx *sql.Tx, n int, sqlOf func(rows int) string,
	args func(dst []any, i int) []any, what func(first, last int) string) error {
	var vals []any
	for start := 0; start < n; start += rowsPerStatement {
		end := min(start+rowsPerStatement, n)
		text := sqlOf(end - start)
		var shared, stmt *sql.Stmt
		if end-start == rowsPerStatement {
			shared = s.stmts.get(text) // prepared by prepareFullRows
		}
		if shared != nil {
			stmt = tx.StmtContext(ctx, shared)
		} else {
			var err error
			if stmt, err = tx.PrepareContext(ctx, text); err != nil {
				return fmt.Errorf("%s: %w", what(start, end-1), err)
			}
		}
		vals = vals[:0]
		for i := start; i < end; i++ {
			vals = args(vals, i)
		}
		_, err := stmt.ExecContext(ctx, vals...)
		stmt.Close() // a transaction's statement; the store's stays prepared
		if err != nil {
			return fmt.Errorf("%s: %w", what(start, end-1), err)
		}
	}
	return nil
}

// valuesRows answers the VALUES part of a statement of rows rows of cols placeholders each.
func valuesRows(rows, cols int) string {
	row := make([]byte, 0, 3*cols+1)
	row = append(row, '(')
	for c := range cols {
		if c > 0 {
			row = append(row, ", "...)
		}
		row = append(row, '?')
	}
	row = append(row, ')')
	out := make([]byte, 0, rows*(len(row)+2))
	for r := range rows {
		if r > 0 {
			out = append(out, ", "...)
		}
		out = append(out, row...)
	}
	return string(out)
}
