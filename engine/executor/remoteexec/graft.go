package remoteexec

import (
	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/remote"
)

// graft adds the upstream outputs of an input root (by digest, from their cache entries'
// listings) to inputs, but a path inputs hold already, and answers the blobs the engine must hold
// for them: read from the workspace file the output was restored to (Source), else from the
// local blob store, else none (an output that stayed remote, which only the engine holds).
func (e *Executor) graft(inputs []Input, grafted []executor.GraftedInput) ([]Input, []remote.Blob) {
	seen := make(map[string]bool, len(inputs))
	for _, in := range inputs {
		seen[in.Path] = true
	}
	var blobs []remote.Blob
	for _, g := range grafted {
		if seen[g.Path] {
			continue
		}
		seen[g.Path] = true
		if g.Link != "" {
			inputs = append(inputs, Input{Path: g.Path, Target: g.Link})
			continue
		}
		inputs = append(inputs, Input{Path: g.Path, Digest: Digest{Hash: g.Hash, Size: g.Size}, Executable: g.Executable})
		b := remote.Blob{Hash: g.Hash, Size: g.Size, Path: g.Source}
		if b.Path == "" && e.CAS != nil && e.CAS.Has(g.Hash) {
			b.Path = e.CAS.Path(g.Hash)
		}
		blobs = append(blobs, b)
	}
	return inputs, blobs
}
