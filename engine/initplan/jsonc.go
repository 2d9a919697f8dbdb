package initplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vzn/vx/engine/vxerr"
)

// readJSON reads a JSON file of the repository into v; turbo.json, nx.json and project.json may hold
// comments and trailing commas, so those are removed first. ok is false when the file does not exist;
// a file that does not parse is a config error naming it.
func readJSON(root, rel string, v any) (ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", rel, err)
	}
	if err := json.Unmarshal(stripJSONC(data), v); err != nil {
		return false, &vxerr.ConfigError{File: rel, Msg: fmt.Sprintf("not valid JSON: %v", err)}
	}
	return true, nil
}

// stripJSONC turns JSON with comments into JSON: // and /* */ comments and commas before a closing
// bracket or brace go; strings are left alone.
func stripJSONC(src []byte) []byte {
	out := make([]byte, 0, len(src))
	inString := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			out = append(out, c)
			switch c {
			case '\\':
				if i+1 < len(src) {
					i++
					out = append(out, src[i])
				}
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			if i < len(src) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			i += end + 3
		case c == ']' || c == '}':
			// Drop a trailing comma: the last non-space byte written.
			j := len(out) - 1
			for j >= 0 && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
				j--
			}
			if j >= 0 && out[j] == ',' {
				out = append(out[:j], out[j+1:]...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}
