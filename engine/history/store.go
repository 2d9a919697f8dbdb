package history

import "github.com/vzn/vx/engine/store"

// Store names the folder an answer was read from, so that an agent in one of several worktrees
// knows whose it is: "shared:" and the store every checkout of the repository shares (cache
// entries, blobs), or "checkout:" and this checkout's own state folder (its history).
type Store string

// The prefixes of a Store.
const (
	StoreShared   = "shared:"
	StoreCheckout = "checkout:"
)

// sharedStore names st's shared store.
func sharedStore(st *store.Store) Store { return Store(StoreShared + st.SharedDir()) }

// checkoutStore names st's checkout folder.
func checkoutStore(st *store.Store) Store { return Store(StoreCheckout + st.Dir()) }
