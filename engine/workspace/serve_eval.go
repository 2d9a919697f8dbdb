package workspace

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/vzn/vx/engine/config"
)

// ServeEval is the child side of Isolation: it reads its request from stdin, puts itself under
// the request's memory bound (joining the memory cgroup made for it, or setting its own
// RLIMIT_AS), evaluates and resolves the workspace, and writes its answer to stdout. What the
// config prints goes to console; a line naming the config file goes to steps as each step begins
// and ends, for the parent's deadline. It answers the process's exit status: 0 whenever an answer
// was written, the config's error included.
func ServeEval(ctx context.Context, stdin io.Reader, stdout, console, steps io.Writer) int {
	var req evalRequest
	if err := gob.NewDecoder(stdin).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "vx %s: read request: %v\n", EvalConfigArg, err)
		return 2
	}
	if err := applyMemoryBound(req); err != nil {
		fmt.Fprintf(os.Stderr, "vx %s: %v\n", EvalConfigArg, err)
		return 2
	}
	c, names, err := evalInProcess(ctx, evalSetup{
		root: req.Root, cacheDir: req.CacheDir, version: req.Version, console: console,
		getenv: func(string) string { return "" }, skip: setOf(req.Skip),
		timeout: req.Timeout, memoryLimit: req.MemoryLimit,
		step: func(file string) { fmt.Fprintln(steps, file) },
		discovery: func(start bool) {
			if start {
				fmt.Fprintln(steps, discoveryMark)
			} else {
				fmt.Fprintln(steps, ConfigFileName)
			}
		},
	})
	w := bufio.NewWriter(stdout)
	enc := gob.NewEncoder(w)
	if err != nil {
		err = enc.Encode(&evalOutcome{Err: toEvalError(err), SecretNames: names})
	} else {
		err = enc.Encode(&evalOutcome{})
		if err == nil {
			err = encodeLoaded(enc, c)
		}
	}
	if err = errors.Join(err, w.Flush()); err != nil {
		fmt.Fprintf(os.Stderr, "vx %s: write answer: %v\n", EvalConfigArg, err)
		return 1
	}
	return 0
}

func setOf(list []string) map[string]bool {
	if len(list) == 0 {
		return nil
	}
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}

// evalSetup is what one evaluation of a workspace needs, in process or in a child.
type evalSetup struct {
	root, cacheDir, version string
	console                 io.Writer
	getenv                  func(string) string
	skip                    map[string]bool
	timeout                 time.Duration
	memoryLimit             uint64
	step                    func(file string)
	// discovery, when set, is called as the search for project folders starts and ends.
	discovery func(start bool)
	// dataOnly evaluates only a config that is data, within the bounds of an evaluation in
	// process, and answers config.ErrNotData for any other (see config.Options.DataOnly).
	dataOnly bool
}

// evalInProcess evaluates and resolves the workspace in this process. On an error it answers
// the names of the secrets met before it, for masking.
func evalInProcess(ctx context.Context, s evalSetup) (*loaded, []string, error) {
	// The workspace's config file is stamped before it is read as well as after (newLoaded).
	before := map[string]stamp{}
	configFile := filepath.Join(s.root, ConfigFileName)
	before[configFile] = stampOf(configFile)
	b := &build{root: s.root, cacheDir: s.cacheDir, getenv: s.getenv, skip: s.skip, discovery: s.discovery, dataOnly: s.dataOnly}
	b.sess = config.NewSession(config.Options{
		Root: s.root, CacheDir: s.cacheDir, Console: s.console, Version: s.version,
		Timeout: s.timeout, MemoryLimit: s.memoryLimit, Step: s.step, DataOnly: s.dataOnly,
	})
	ws, err := b.load(ctx)
	if err != nil {
		return nil, slices.Sorted(maps.Keys(b.secretNames)), err
	}
	return newLoaded(s.version, s.root, b, ws, before), nil, nil
}
