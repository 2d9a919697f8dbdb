package main

import (
	"errors"
	"strings"

	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

// The stable codes of the JSON error document, the original's: a script branches on them.
const (
	errCodeUsage          = "VX_E_USAGE"
	errCodeUnknownCommand = "VX_E_UNKNOWN_COMMAND"
	errCodeUnknownTask    = "VX_E_UNKNOWN_TASK"
	errCodeUnknownProject = "VX_E_UNKNOWN_PROJECT"
	errCodeConfig         = "VX_E_CONFIG"
	errCodeNoWorkspace    = "VX_E_NO_WORKSPACE"
	errCodeCacheVersion   = "VX_E_CACHE_VERSION"
	errCodeRefused        = "VX_E_REFUSED"
	errCodeInternal       = "VX_E_INTERNAL"
)

// errorCode answers the code of a refusal: err, the message vx printed for it (msg) and its exit
// status. A config that does not load, an index of another version and a refusal are known by
// their types; no workspace, an unknown command, task or project by the message vx words them
// with; any other usage error is VX_E_USAGE, and what is left VX_E_INTERNAL.
func errorCode(err error, msg string, exit int) string {
	var ce *vxerr.ConfigError
	var ve *store.VersionError
	var sve *store.SharedVersionError
	var fe *vxerr.FailureError
	switch {
	case errors.As(err, &ce):
		return errCodeConfig
	case errors.As(err, &ve), errors.As(err, &sve):
		return errCodeCacheVersion
	case errors.As(err, &fe):
		return errCodeRefused
	case strings.HasPrefix(msg, workspace.ErrNoWorkspace.Error()):
		return errCodeNoWorkspace
	case strings.HasPrefix(msg, "unknown command"):
		return errCodeUnknownCommand
	case strings.HasPrefix(msg, "unknown task"):
		return errCodeUnknownTask
	case strings.HasPrefix(msg, "unknown project"):
		return errCodeUnknownProject
	case exit == vxerr.ExitUsage:
		return errCodeUsage
	}
	return errCodeInternal
}
