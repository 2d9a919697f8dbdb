package prune

import (
	"fmt"
	"time"

	"github.com/vzn/vx/engine/bytesize"
	"github.com/vzn/vx/engine/graph"
)

// The defaults of cacheRetention: entries unused for DefaultMaxAge go, and the store keeps at most
// DefaultMaxSize, or a tenth of the disk holding it where that is less, so that a laptop's disk
// never fills with cache entries.
const (
	DefaultMaxAge  = 30 * 24 * time.Hour
	DefaultMaxSize = 10_000_000_000
	// diskShare is the share of its disk the default lets a store take: 1/diskShare.
	diskShare = 10
)

// Limits are what a retention prune evicts: entries last used longer ago than MaxAge, then the
// least recently used until the rest fit in MaxSize bytes.
type Limits struct {
	MaxAge  time.Duration
	MaxSize int64
}

// Retention answers the limits the workspace's cacheRetention sets for the store at storeDir (the
// defaults where it sets none); ok is false for cacheRetention: false.
func Retention(ws *graph.Workspace, storeDir string) (l Limits, ok bool, err error) {
	l = Limits{MaxAge: DefaultMaxAge, MaxSize: DefaultMaxSize}
	if disk := diskSize(storeDir); disk > 0 {
		l.MaxSize = min(l.MaxSize, disk/diskShare)
	}
	cr := ws.CacheRetention
	if cr == nil {
		return l, true, nil
	}
	if cr.Off {
		return Limits{}, false, nil
	}
	if cr.Age > 0 {
		l.MaxAge = cr.Age
	}
	if cr.MaxSize != "" {
		if l.MaxSize, err = bytesize.Parse(cr.MaxSize, bytesize.Positive); err != nil {
			return Limits{}, false, fmt.Errorf("cacheRetention.maxSize: %w", err)
		}
	}
	return l, true, nil
}
