package graph

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CacheRetention is the workspace's `cacheRetention`: how much the cache store keeps. A prune
// after a run (in the background) and `vx cache prune` without limits evict what it says.
type CacheRetention struct {
	// Off is `cacheRetention: false`: nothing is evicted but by `vx cache prune` with limits.
	Off bool `json:"off,omitempty"`
	// MaxSize is maxSize as declared ("10GB", or a number of bytes), "" for the default.
	MaxSize string `json:"maxSize,omitempty"`
	// MaxAge is maxAge as declared ("30d"), "" for the default; Age is it read.
	MaxAge string        `json:"maxAge,omitempty"`
	Age    time.Duration `json:"-"`
}

// ParseAge reads an age such as 90m, 12h, 7d or 2w.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("age %q: want a duration such as 12h, 7d or 2w", s)
	if s == "" {
		return 0, bad
	}
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if mult, ok := unit[s[len(s)-1]]; ok {
		n, err := strconv.ParseFloat(s[:len(s)-1], 64)
		if err != nil || n < 0 {
			return 0, bad
		}
		return time.Duration(n * float64(mult)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, bad
	}
	return d, nil
}
