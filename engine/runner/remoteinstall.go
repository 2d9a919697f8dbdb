package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/vzn/vx/engine/executor/remoteexec"
	"github.com/vzn/vx/engine/graph"
)

// defaultRemotePath is the PATH of a remote command where remote.path sets none.
const defaultRemotePath = "/usr/local/bin:/usr/bin:/bin"

// remoteCommandPath answers the explicit PATH every remote command gets: remote.path, else
// defaultRemotePath.
func remoteCommandPath(cfg *graph.RemoteExec) string {
	if cfg != nil && cfg.Path != "" {
		return cfg.Path
	}
	return defaultRemotePath
}

// remoteInstaller answers the install action of the run's remote tasks, detected when the first
// of them asks: none when the workspace's root holds no lockfile; one carrying the reason when
// its install cannot be made (its tasks then run locally, with the run's one warning).
func (r *runState) remoteInstaller(ex *remoteexec.Executor) *remoteexec.Installer {
	ws := r.opts.Workspace
	detect := func() (*remoteexec.InstallSpec, error) {
		dirs := make([]string, 0, len(ws.Projects))
		for _, p := range ws.Projects {
			dirs = append(dirs, p.Dir)
		}
		return remoteexec.DetectInstall(ws.Root, dirs, func(manager string) (string, error) {
			return managerVersion(manager, r.opts.Getenv("PATH"))
		})
	}
	return &remoteexec.Installer{Detect: detect, Root: ws.Root, Engine: ex.Engine, Client: ex.Client,
		CAS: ex.CAS, Platform: ex.Platform, Path: ex.Path, Home: ex.Home}
}

// managerVersion answers what `manager --version` prints, the manager found on pathList (this
// machine's PATH), within a bound.
func managerVersion(manager, pathList string) (string, error) {
	bin := ""
	for _, dir := range filepath.SplitList(pathList) {
		p := filepath.Join(dir, manager)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			bin = p
			break
		}
	}
	if bin == "" {
		return "", fmt.Errorf("%s is not on PATH", manager)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = append(os.Environ(), "PATH="+pathList)
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", fmt.Errorf("%s --version: %v: %s", bin, err, strings.TrimSpace(string(exit.Stderr)))
		}
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	return strings.TrimSpace(string(out)), nil
}
