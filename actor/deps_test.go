package actor_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// engineOnly are the modules only vx's engine needs: the server core must build without them.
var engineOnly = []string{"modernc.org/sqlite", "github.com/evanw/esbuild", "github.com/dop251/goja"}

// The JSON-RPC core and the tool framework import nothing of the engine: `go list -deps` of the
// actor package names no SQLite, esbuild or goja package.
func TestActorDoesNotCarryTheEngine(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the dependencies: %v", err)
	}
	cmd := exec.CommandContext(context.Background(), goTool, "list", "-deps", "github.com/vzn/vx/actor")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps listed nothing")
	}
	for _, dep := range deps {
		for _, mod := range engineOnly {
			if dep == mod || strings.HasPrefix(dep, mod+"/") {
				t.Errorf("actor depends on %s", dep)
			}
		}
	}
}
