package initplan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tailscale/hujson"

	"github.com/vzn/vx/engine/vxerr"
)

// readJSON reads a JSON file of the repository into v; turbo.json, nx.json and project.json may hold
// comments and trailing commas (JSONC), which hujson turns into plain JSON first. ok is false when the file does not exist;
// a file that does not parse is a config error naming it.
func readJSON(root, rel string, v any) (ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", rel, err)
	}
	// The newline ends a last-line comment, which hujson would take for a cut-off file.
	std, err := hujson.Standardize(append(data, '\n'))
	if err == nil {
		err = json.Unmarshal(std, v)
	}
	if err != nil {
		return false, &vxerr.ConfigError{File: rel, Msg: fmt.Sprintf("not valid JSON: %v", err)}
	}
	return true, nil
}
