// Package actortest runs the MCP server core as a real process for tests: a test
// binary whose TestMain calls MaybeServe becomes, when re-executed with
// VX_ACTOR_TEST_SERVER set, an MCP server on its stdio with a handful of test tools
// (echo, sleep, panic, progress, refuse, fail, scalar, run) plus any the caller adds.
// Start launches such a child and speaks raw frames to it.
package actortest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/vzn/vx/actor"
	"github.com/vzn/vx/actor/tool"
)

// Environment variables the child server reads.
const (
	// EnvServer turns a test binary calling MaybeServe into the server.
	EnvServer = "VX_ACTOR_TEST_SERVER"
	// EnvWorkers sets Config.Workers.
	EnvWorkers = "VX_ACTOR_TEST_WORKERS"
	// EnvPageSize sets Config.ToolsPageSize.
	EnvPageSize = "VX_ACTOR_TEST_PAGE_SIZE"
	// EnvMaxLine sets Config.MaxLineBytes.
	EnvMaxLine = "VX_ACTOR_TEST_MAX_LINE"
	// EnvLogLevel sets the server's log level (default "warn").
	EnvLogLevel = "VX_ACTOR_TEST_LOG"
	// EnvEOFGrace sets Config.EOFGrace, as a Go duration ("100ms").
	EnvEOFGrace = "VX_ACTOR_TEST_EOF_GRACE"
)

// Secret is the value the test server's Mask hides as "***".
const Secret = "s3cr3t-value"

// Mask is the test server's Config.Mask.
func Mask(s string) string { return strings.ReplaceAll(s, Secret, "***") }

// MaybeServe returns at once unless EnvServer is set; then it serves MCP on the
// process's stdio, guarded, with Tools and the extra tools given, until EOF or
// SIGTERM/SIGINT, and exits (0 on a clean shutdown). Call it first in TestMain.
func MaybeServe(extra ...tool.Tool) {
	if os.Getenv(EnvServer) == "" {
		return
	}
	os.Exit(Serve(extra...))
}

// Serve serves MCP on the process's stdio as MaybeServe does and returns the exit
// status: a testscript command's main.
func Serve(extra ...tool.Tool) int {
	level, err := zerolog.ParseLevel(envOr(EnvLogLevel, "warn"))
	if err != nil {
		level = zerolog.WarnLevel
	}
	logger := zerolog.New(os.Stderr).Level(level).With().Timestamp().Logger()
	out, err := actor.GuardStdout()
	if err != nil {
		logger.Error().Err(err).Msg("guard stdout")
		return 2
	}
	defer out.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err = actor.Serve(ctx, actor.Config{
		In:            os.Stdin,
		Out:           out,
		Logger:        logger,
		Tools:         tool.NewRegistry(append(Tools(), extra...)...),
		Workers:       envInt(EnvWorkers),
		Mask:          Mask,
		ServerName:    "vx-test",
		ServerVersion: "0.0.0-test",
		MaxLineBytes:  envInt(EnvMaxLine),
		ToolsPageSize: envInt(EnvPageSize),
		EOFGrace:      envDuration(EnvEOFGrace),
	})
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled):
		logger.Info().Msg("stopped by signal")
		return 0
	default:
		logger.Error().Err(err).Msg("serve")
		return 1
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func envInt(key string) int {
	n, _ := strconv.Atoi(os.Getenv(key))
	return n
}

func envDuration(key string) time.Duration {
	d, _ := time.ParseDuration(os.Getenv(key))
	return d
}

func ptr[T any](v T) *T { return &v }

// Tools returns the test tools.
func Tools() []tool.Tool {
	objectOut := json.RawMessage(`{"type":"object"}`)
	anyObject := json.RawMessage(`{"type":"object"}`)
	type echoAnswer struct {
		Args     json.RawMessage `json:"args"`
		Revision string          `json:"revision"`
	}
	type sleepArgs struct {
		MS           int  `json:"ms"`
		IgnoreCancel bool `json:"ignoreCancel"`
	}
	type progressArgs struct {
		Steps int `json:"steps"`
		MS    int `json:"ms"`
	}
	type runArgs struct {
		MS int `json:"ms"`
	}
	return []tool.Tool{
		tool.New(tool.Tool{
			Name: "echo", Title: "Echo", Description: "Answers its arguments.",
			InputSchema:  json.RawMessage(`{"type":"object","additionalProperties":{}}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"args":{"type":"object"}},"required":["args"]}`),
			Annotations:  tool.Annotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
		}, func(_ context.Context, c *tool.Call, args json.RawMessage) (echoAnswer, error) {
			return echoAnswer{args, c.ProtocolVersion}, nil
		}),
		tool.New(tool.Tool{
			Name: "sleep", Title: "Sleep", Description: "Sleeps ms milliseconds, or until cancelled unless ignoreCancel.",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"},"ignoreCancel":{"type":"boolean"}}}`),
			OutputSchema: objectOut,
			Annotations:  tool.Annotations{ReadOnlyHint: ptr(true), IdempotentHint: ptr(true)},
		}, func(ctx context.Context, _ *tool.Call, a sleepArgs) (map[string]int, error) {
			t := time.NewTimer(time.Duration(a.MS) * time.Millisecond)
			defer t.Stop()
			if a.IgnoreCancel {
				<-t.C
			} else {
				select {
				case <-t.C:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return map[string]int{"slept": a.MS}, nil
		}),
		tool.New(tool.Tool{Name: "panic", Description: "Panics.", Annotations: readOnly},
			func(context.Context, *tool.Call, json.RawMessage) (any, error) {
				panic("tool panicked on purpose: " + Secret)
			}),
		tool.New(tool.Tool{
			Name: "progress", Title: "Progress", Description: "Reports steps of progress, ms apart.",
			InputSchema: anyObject, OutputSchema: objectOut, Annotations: readOnly,
		}, func(ctx context.Context, c *tool.Call, a progressArgs) (map[string]int, error) {
			for i := 1; i <= a.Steps; i++ {
				c.Progress(float64(i), float64(a.Steps), fmt.Sprintf("step %d %s", i, Secret))
				c.Progress(float64(i)-0.5, float64(a.Steps), "not increasing: dropped")
				select {
				case <-time.After(time.Duration(a.MS) * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return map[string]int{"steps": a.Steps}, nil
		}),
		tool.New(tool.Tool{Name: "refuse", Description: "Refuses, quoting the secret.", Annotations: readOnly},
			func(context.Context, *tool.Call, json.RawMessage) (any, error) {
				return nil, tool.Refusef("argument %q must be %s", "task", Secret)
			}),
		tool.New(tool.Tool{Name: "fail", Description: "Fails with an error quoting the secret.", Annotations: readOnly},
			func(context.Context, *tool.Call, json.RawMessage) (any, error) {
				return nil, fmt.Errorf("config failed to load: token %s", Secret)
			}),
		tool.New(tool.Tool{Name: "scalar", Description: "Answers a number, not an object.", Annotations: readOnly},
			func(context.Context, *tool.Call, json.RawMessage) (any, error) { return 42, nil }),
		// run stands for runTasks: it carries no annotations, so it counts as a tool that may change
		// things (MCP's default), which the end of stdin cancels at once.
		tool.New(tool.Tool{
			Name: "run", Description: "Reports progress 1, then runs ms milliseconds or until cancelled.", InputSchema: anyObject,
			AlwaysLoad: true, TaskSupport: "optional",
		}, func(ctx context.Context, c *tool.Call, a runArgs) (any, error) {
			c.Progress(1, 0, "running")
			t := time.NewTimer(time.Duration(a.MS) * time.Millisecond)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return map[string]int{"ran": a.MS}, nil
		}),
	}
}

// readOnly is the hint of a test tool that changes nothing: the end of stdin lets
// it finish and be answered.
var readOnly = tool.Annotations{ReadOnlyHint: ptr(true)}
