package store

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache holds the statements of one database, each prepared once for the database's life
// and closed with it.
type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// prepare answers query prepared on db, preparing it on first use.
func (c *stmtCache) prepare(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.stmts == nil {
		c.stmts = map[string]*sql.Stmt{}
	}
	c.stmts[query] = st
	return st, nil
}

// get answers query if it is prepared, without preparing it.
func (c *stmtCache) get(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts[query]
}

// close closes every statement prepared; a later prepare starts afresh.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
}
