package initplan

import (
	"context"
	"strings"

	"github.com/vzn/vx/engine/git"
)

// gitIgnored answers which of the root-relative paths git ignores in the repository (a folder
// path is asked about as a file inside it, so that a "dist/" pattern matches a folder not built
// yet). Outside a git repository nothing is ignored: vx init then declares no output it cannot
// prove is no user's file.
func (r *repo) gitIgnored(paths []string) map[string]bool {
	out := map[string]bool{}
	if len(paths) == 0 {
		return out
	}
	probes := make([]string, len(paths))
	byProbe := map[string]string{}
	for i, p := range paths {
		probe := strings.TrimSuffix(p, "/**")
		if !hasExtension(probe) {
			probe += "/.vx-probe"
		}
		probes[i] = probe
		byProbe[probe] = p
	}
	// check-ignore exits 1 when no path is ignored: an error here means none (or no repository).
	text, err := git.Run(context.Background(), r.root, append([]string{"check-ignore", "--"}, probes...)...)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if p, ok := byProbe[line]; ok {
			out[p] = true
		}
	}
	return out
}
