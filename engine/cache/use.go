package cache

import (
	"fmt"
	"strings"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
)

// Use says which layers of the cache a run reads and writes: vx run --cache=local:rw,remote:r,
// --no-cache, --force. The zero value reads and writes the local store, and the remote cache as
// its mode says.
type Use struct {
	NoLocalRead, NoLocalWrite   bool
	NoRemoteRead, NoRemoteWrite bool
}

// LocalRead reports whether the run reads the local store.
func (u Use) LocalRead() bool { return !u.NoLocalRead }

// LocalWrite reports whether the run writes entries to the local store.
func (u Use) LocalWrite() bool { return !u.NoLocalWrite }

// RemoteRead reports whether the run may read the remote cache (where its mode reads).
func (u Use) RemoteRead() bool { return !u.NoRemoteRead }

// RemoteWrite reports whether the run may write the remote cache (where its mode writes).
func (u Use) RemoteWrite() bool { return !u.NoRemoteWrite }

// NoCache is the Use of vx run --no-cache: nothing is read or written.
var NoCache = Use{NoLocalRead: true, NoLocalWrite: true, NoRemoteRead: true, NoRemoteWrite: true}

// ParseUse reads the value of vx run --cache: a comma-separated list of LAYER:ACCESS, LAYER local
// or remote, ACCESS r, w, rw or off ("local:rw,remote:r"). A layer the list leaves out is neither
// read nor written (as Turborepo's --cache reads it). remoteMode is the mode the remote cache is
// resolved with (graph.RemoteRead, graph.RemoteReadWrite or graph.RemoteOff; a write-only remote
// resolves as read-write with its reads off).
func ParseUse(spec string) (u Use, remoteMode string, err error) {
	u = NoCache
	remoteMode = graph.RemoteOff
	seen := map[string]bool{}
	for item := range strings.SplitSeq(spec, ",") {
		layer, access, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			return Use{}, "", vxerr.Usagef("--cache=%s: %q: want LAYER:ACCESS, such as local:rw or remote:r", spec, item)
		}
		if seen[layer] {
			return Use{}, "", vxerr.Usagef("--cache=%s: %s is named twice", spec, layer)
		}
		seen[layer] = true
		read, write, err := parseAccess(access)
		if err != nil {
			return Use{}, "", vxerr.Usagef("--cache=%s: %s:%s: %v", spec, layer, access, err)
		}
		switch layer {
		case "local":
			u.NoLocalRead, u.NoLocalWrite = !read, !write
		case "remote":
			u.NoRemoteRead, u.NoRemoteWrite = !read, !write
			remoteMode = remoteModeOf(read, write)
		default:
			return Use{}, "", vxerr.Usagef("--cache=%s: unknown layer %q: want local or remote", spec, layer)
		}
	}
	return u, remoteMode, nil
}

// parseAccess reads r, w, rw or off.
func parseAccess(access string) (read, write bool, err error) {
	switch access {
	case "rw", "wr":
		return true, true, nil
	case "r":
		return true, false, nil
	case "w":
		return false, true, nil
	case "off", "":
		return false, false, nil
	}
	return false, false, fmt.Errorf("want r, w, rw or off")
}

// remoteModeOf is the remote mode a run resolves its remote cache with for its access.
func remoteModeOf(read, write bool) string {
	switch {
	case write:
		return graph.RemoteReadWrite
	case read:
		return graph.RemoteRead
	}
	return graph.RemoteOff
}

// Writes reports whether the run's remote cache takes uploads (its mode is read-write).
func (r RemoteConfig) Writes() bool { return r.settings.Mode == graph.RemoteReadWrite }

// Reads reports whether the run has a remote cache it reads (its mode is not off).
func (r RemoteConfig) Reads() bool {
	return r.settings.Mode == graph.RemoteRead || r.settings.Mode == graph.RemoteReadWrite
}
