//go:build tools

// Package jaeger pins Jaeger v1.75.0, the trace store the OpenTelemetry export test starts: a
// module of its own, so that vx's go.mod never carries Jaeger's dependencies. Build it with
// `go build -o BIN github.com/jaegertracing/jaeger/cmd/jaeger` from this folder.
package jaeger

import _ "github.com/jaegertracing/jaeger/cmd/jaeger"
