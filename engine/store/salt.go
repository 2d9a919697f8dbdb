package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/vzn/vx/engine/atomicfile"
)

// saltFile holds the workspace's random salt for what is stored or printed about a secret.
const saltFile = "secret-salt"

// Salt answers the state folder's secret salt: 32 random bytes kept in dir, made on first use
// when create is set. Without create and without a salt it answers a fresh random salt that is
// not kept (a reader stores nothing, so nothing needs to compare with it later).
func Salt(dir string, create bool) ([]byte, error) {
	path := filepath.Join(dir, saltFile)
	if data, err := os.ReadFile(path); err == nil {
		if salt, err := hex.DecodeString(strings.TrimSpace(string(data))); err == nil && len(salt) >= 16 {
			return salt, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("make a secret salt: %w", err)
	}
	if !create {
		return salt, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create state folder: %w", err)
	}
	// Linked rather than renamed: of two runs making a salt at once, the first one kept wins.
	err := atomicfile.WriteFile(path, []byte(hex.EncodeToString(salt)+"\n"), atomicfile.NoReplace())
	if errors.Is(err, fs.ErrExist) {
		return Salt(dir, false)
	}
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return salt, nil
}
