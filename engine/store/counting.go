package store

import (
	"context"
	"database/sql/driver"
	"errors"

	"github.com/vzn/vx/engine/counters"
)

// countingConnector opens SQLite connections whose statements count themselves in the Counters
// of the context they run under (counters.From): every statement executed, prepared or not, in a
// transaction or not, passes through one of the two methods below and nothing else changes.
type countingConnector struct{ driver.Connector }

// Connect opens a connection and wraps it.
func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{conn: conn}, nil
}

// sqliteConn is what the SQLite driver's connection implements and database/sql uses.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// countingConn is a connection whose ExecContext and QueryContext, and those of the statements
// it prepares, count a statement.
type countingConn struct{ conn driver.Conn }

func (c *countingConn) full() (sqliteConn, error) {
	if sc, ok := c.conn.(sqliteConn); ok {
		return sc, nil
	}
	return nil, errors.New("sqlite connection lacks a context method")
}

func (c *countingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *countingConn) Close() error { return c.conn.Close() }

func (c *countingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	sc, err := c.full()
	if err != nil {
		return nil, err
	}
	return sc.BeginTx(ctx, opts)
}

func (c *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	sc, err := c.full()
	if err != nil {
		return nil, err
	}
	st, err := sc.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return countingStmt{st}, nil
}

func (c *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	sc, err := c.full()
	if err != nil {
		return nil, err
	}
	counters.From(ctx).Statement()
	return sc.ExecContext(ctx, query, args)
}

func (c *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	sc, err := c.full()
	if err != nil {
		return nil, err
	}
	counters.From(ctx).Statement()
	return sc.QueryContext(ctx, query, args)
}

func (c *countingConn) Ping(ctx context.Context) error {
	sc, err := c.full()
	if err != nil {
		return err
	}
	return sc.Ping(ctx)
}

func (c *countingConn) ResetSession(ctx context.Context) error {
	sc, err := c.full()
	if err != nil {
		return err
	}
	return sc.ResetSession(ctx)
}

func (c *countingConn) IsValid() bool {
	sc, err := c.full()
	return err == nil && sc.IsValid()
}

// sqliteStmt is what the SQLite driver's statement implements and database/sql uses.
type sqliteStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// countingStmt is a prepared statement whose every execution counts a statement.
type countingStmt struct{ driver.Stmt }

func (s countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	st, ok := s.Stmt.(sqliteStmt)
	if !ok {
		return nil, errors.New("sqlite statement lacks a context method")
	}
	counters.From(ctx).Statement()
	return st.ExecContext(ctx, args)
}

func (s countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	st, ok := s.Stmt.(sqliteStmt)
	if !ok {
		return nil, errors.New("sqlite statement lacks a context method")
	}
	counters.From(ctx).Statement()
	return st.QueryContext(ctx, args)
}
