package initplan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestInstallStepUsesTheRepositorysPackageManager(t *testing.T) {
	for _, c := range []struct {
		name    string
		pm      string
		pkg     *packageJSON
		globs   []string
		files   []string // created at the root
		want    string
		wantAdd []string
	}{
		{"npm, no lockfile yet", "npm", &packageJSON{}, nil, nil, "npm install -D @vzn/vx @vzn/vx-mcp", []string{"package.json", "package-lock.json"}},
		{"pnpm workspace", "pnpm", &packageJSON{}, []string{"packages/*"}, []string{"pnpm-workspace.yaml", "pnpm-lock.yaml"}, "pnpm add -D -w @vzn/vx @vzn/vx-mcp", []string{"package.json", "pnpm-lock.yaml"}},
		{"pnpm, one package", "pnpm", &packageJSON{}, nil, nil, "pnpm add -D @vzn/vx @vzn/vx-mcp", []string{"package.json", "pnpm-lock.yaml"}},
		{"yarn 1 workspaces", "yarn", &packageJSON{}, []string{"packages/*"}, []string{"yarn.lock"}, "yarn add -D -W @vzn/vx @vzn/vx-mcp", []string{"package.json", "yarn.lock"}},
		{"yarn 4 by packageManager", "yarn", &packageJSON{PackageManager: "yarn@4.9.1"}, []string{"packages/*"}, nil, "yarn add -D @vzn/vx @vzn/vx-mcp", []string{"package.json", "yarn.lock"}},
		{"yarn berry by .yarnrc.yml", "yarn", &packageJSON{}, []string{"packages/*"}, []string{".yarnrc.yml"}, "yarn add -D @vzn/vx @vzn/vx-mcp", []string{"package.json", "yarn.lock"}},
		{"bun, binary lockfile", "bun", &packageJSON{}, nil, []string{"bun.lockb"}, "bun add -d @vzn/vx @vzn/vx-mcp", []string{"package.json", "bun.lockb"}},
		{"already a dev dependency", "npm", &packageJSON{DevDependencies: map[string]string{"@vzn/vx": "^0.1.0"}}, nil, nil, "", nil},
		{"already a dependency", "pnpm", &packageJSON{Dependencies: map[string]string{"@vzn/vx": "0.1.0"}}, nil, nil, "", nil},
		{"no package.json", "npm", nil, nil, nil, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range c.files {
				if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := &repo{root: root, rootPkg: c.pkg, pm: c.pm, globs: c.globs}
			if got := installStep(r); got != c.want {
				t.Errorf("install step %q, want %q", got, c.want)
			}
			if c.want != "" {
				// Before the packages are published, the same command adds them from npm/dist.
				if add := unpublishedSteps(r)[2]; !strings.Contains(add, "; "+strings.TrimSuffix(c.want, vxPackages)+"$d/vzn-vx-[0-9]*.tgz ") {
					t.Errorf("the step adding the packages from npm/dist: %q, want %q's command", add, c.want)
				}
				if got := installedFiles(r); !slices.Equal(got, c.wantAdd) {
					t.Errorf("files to commit %v, want %v", got, c.wantAdd)
				}
			}
		})
	}
}
