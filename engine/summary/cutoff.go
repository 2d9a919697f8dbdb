package summary

// CacheSourceRemoteAction is the cacheSource of an early-cutoff hit: a task whose own key missed
// (an upstream's key moved) and whose Action, which holds its upstreams' output digests, the
// remote engine's Action Cache held, since those outputs stayed byte-identical.
const CacheSourceRemoteAction = "remote-action"

// FromRemote reports whether a hit's cacheSource is a remote one: the shared remote cache by
// vx's key, or the engine's Action Cache by the Action digest.
func FromRemote(source string) bool {
	return source == CacheSourceRemote || source == CacheSourceRemoteAction
}
