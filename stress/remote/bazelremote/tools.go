//go:build tools

// Package bazelremote pins bazel-remote v2.6.2, the server the remote cache tests and benchmark
// start: a module of its own, so that vx's go.mod never carries bazel-remote's dependencies.
// Build it with `go build -o BIN github.com/buchgr/bazel-remote/v2` from this folder.
package bazelremote

import _ "github.com/buchgr/bazel-remote/v2"
