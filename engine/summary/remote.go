package summary

// CacheSourceRemote is the cacheSource of a hit restored from the shared remote cache.
const CacheSourceRemote = "remote"

// RemoteCacheRun is what the shared remote cache did in one run (vx run's summary only: the
// index keeps each hit's cacheSource, not the transfers).
type RemoteCacheRun struct {
	// Protocol is bazel or turbo; Mode readwrite, read or off.
	Protocol string `json:"protocol"`
	Mode     string `json:"mode"`
	// Hits are the tasks restored from the server; Uploads the entries it was sent.
	Hits    int `json:"hits"`
	Uploads int `json:"uploads"`
	// Errors counts the requests that failed or answers that were refused (a bad hash or
	// signature); Abandoned the uploads still unfinished when the run's flush ran out.
	Errors    int `json:"errors"`
	Abandoned int `json:"abandoned"`
	// Warning is the first problem, as warned on stderr ("" when none).
	Warning string `json:"warning,omitempty"`
	// Scope is the cache scope the run read and wrote as, "" for the trusted one.
	Scope string `json:"scope,omitempty"`
}
