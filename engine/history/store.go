package history

import "github.com/vzn/vx/engine/store"

// Store names the folder an answer was read from, so that an agent in one of several worktrees
// knows whose it is.
type Store struct {
	// Scope is "shared" (the store every checkout of the repository shares: cache entries,
	// blobs) or "checkout" (this checkout's own history).
	Scope string `json:"scope"`
	// Dir is the folder.
	Dir string `json:"dir"`
}

// The scopes of Store.
const (
	ScopeShared   = "shared"
	ScopeCheckout = "checkout"
)

// sharedStore names st's shared store.
func sharedStore(st *store.Store) Store { return Store{Scope: ScopeShared, Dir: st.SharedDir()} }

// checkoutStore names st's checkout folder.
func checkoutStore(st *store.Store) Store { return Store{Scope: ScopeCheckout, Dir: st.Dir()} }
