package store

// IsCorrupt reports whether err says the index is not a database or is damaged: an index that
// no read can use until it is set aside, which the next Open with ResetOtherVersion does.
func IsCorrupt(err error) bool { return err != nil && isCorrupt(err) }
