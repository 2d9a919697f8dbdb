package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// startProfile writes a CPU profile of this vx process to the file VX_CPUPROFILE names, and an
// execution trace (`go tool trace`) to the file VX_TRACE names, for the engine's benchmarks
// (docs/performance.md); it answers the function that ends them. Without the variables it does
// nothing.
func startProfile(getenv func(string) string) func() {
	var stops []func()
	if path := getenv("VX_CPUPROFILE"); path != "" {
		if stop := startFile("VX_CPUPROFILE", path, pprof.StartCPUProfile, pprof.StopCPUProfile); stop != nil {
			stops = append(stops, stop)
		}
	}
	if path := getenv("VX_TRACE"); path != "" {
		if stop := startFile("VX_TRACE", path, trace.Start, trace.Stop); stop != nil {
			stops = append(stops, stop)
		}
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// startFile creates path and starts a recorder writing to it; it answers what stops the recorder
// and closes the file, or nil (having said why on stderr) when either fails.
func startFile(name, path string, start func(w io.Writer) error, stop func()) func() {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vx: %s: %v\n", name, err)
		return nil
	}
	if err := start(f); err != nil {
		fmt.Fprintf(os.Stderr, "vx: %s: %v\n", name, err)
		f.Close()
		return nil
	}
	return func() {
		stop()
		f.Close()
	}
}
