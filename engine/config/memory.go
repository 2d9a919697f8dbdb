package config

import (
	"context"
	"fmt"
	"math"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// DefaultMemoryLimit bounds how far the Go heap may grow while one config evaluation runs: goja
// has no allocation limit of its own. The sampling here interrupts a config at its position where
// it can; native code that allocates within one call passes it unseen, which is why vx also runs
// the evaluation in a child process under the same bound held by the kernel.
const DefaultMemoryLimit = 1 << 30

// heapMetric is the Go heap's size: its live objects and the dead ones not yet swept. Reading it
// stops nothing, unlike runtime.ReadMemStats.
const heapMetric = "/memory/classes/heap/objects:bytes"

// memorySampleEvery is how often a running evaluation's heap is sampled. A config allocating as
// fast as goja can runs a few megabytes past the bound before the sample that stops it.
const memorySampleEvery = 5 * time.Millisecond

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watch is the one goroutine that may interrupt a running evaluation: at its deadline, when its
// context ends, or when the heap has grown past the memory limit since the evaluation began. It
// is owned by the evaluation (Session.guard) and ended by it, so no interrupt outlives the
// evaluation it was meant for.
type watch struct {
	vm           *goja.Runtime
	limit, start uint64
	stop, done   chan struct{}
}

// startWatch starts watching an evaluation about to run on vm.
func startWatch(ctx context.Context, vm *goja.Runtime, timeout time.Duration, limit uint64) *watch {
	w := &watch{vm: vm, limit: limit, start: heapBytes(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		deadline := time.NewTimer(timeout)
		defer deadline.Stop()
		sample := time.NewTicker(memorySampleEvery)
		defer sample.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-ctx.Done():
				vm.Interrupt("config evaluation cancelled")
				return
			case <-deadline.C:
				vm.Interrupt(fmt.Sprintf("config ran longer than %s and was interrupted", timeout))
				return
			case <-sample.C:
				if !w.allows(0) {
					w.interrupt()
					return
				}
				if w.nextStepMayPass() {
					w.vm.Interrupt(fmt.Sprintf("config used more than a third of the %s memory bound, so that its next step could pass the bound, and was interrupted", formatBytes(w.limit)))
					return
				}
			}
		}
	}()
	return w
}

// end stops the watch and waits for its goroutine: after end no interrupt can come from it.
func (w *watch) end() {
	close(w.stop)
	<-w.done
}

// allows reports whether the heap may grow by more bytes without passing the limit.
func (w *watch) allows(more float64) bool {
	now := heapBytes()
	grown := 0.0
	if now > w.start {
		grown = float64(now - w.start)
	}
	return grown+more <= float64(w.limit)
}

// nextStepMayPass reports whether one more instruction could take the heap past the limit. goja
// cannot interrupt an instruction while it runs, and one instruction allocates at most about twice
// what the evaluation made so far (`s = s + s` copies the largest string there is twice), so the
// growth is stopped at a third of the limit: past that, a concatenation that doubles a string would
// pass the limit in one step, between two samples, where a check of the growth alone lets a
// doubling loop pass the bound twice over (docs/performance.md, "Process start and config
// evaluation").
func (w *watch) nextStepMayPass() bool {
	now := heapBytes()
	return now > w.start && 3*float64(now-w.start) > float64(w.limit)
}

func (w *watch) interrupt() {
	w.vm.Interrupt(fmt.Sprintf("config passed its %s memory bound and was interrupted", formatBytes(w.limit)))
}

// formatBytes renders a limit as people write it: 1 GiB, 64 MiB, 1500 bytes.
func formatBytes(n uint64) string {
	for _, u := range []struct {
		size uint64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Bytes a built-in's result is estimated to take: a character of a goja string (UTF-16 unless all
// ASCII), an element of an array, and a string element an array holds (its header, boxed).
const (
	bytesPerChar         = 2
	bytesPerElement      = 24
	bytesPerSplitElement = 48
)

// amplifiers are the built-ins that make a value many times larger than their arguments in one
// native call — `'ab'.repeat(2**25).split("")` takes gigabytes inside split — and the estimate of
// their result's size. goja interrupts JavaScript only between instructions, never inside a
// built-in, so these are checked before they run: one whose result would pass the memory limit
// interrupts the evaluation instead of running.
var amplifiers = []struct {
	proto, method string
	estimate      func(call goja.FunctionCall) float64
}{
	{"String", "repeat", func(call goja.FunctionCall) float64 {
		return float64(stringLength(call.This)) * integerArg(call, 0) * bytesPerChar
	}},
	{"String", "padStart", padEstimate},
	{"String", "padEnd", padEstimate},
	{"String", "split", func(call goja.FunctionCall) float64 {
		n := stringLength(call.This)
		sep := call.Argument(0)
		if goja.IsUndefined(sep) {
			return 0
		}
		parts := float64(n + 1) // an empty separator (or a pattern) may cut between every character
		if s, ok := sep.(goja.String); ok && s.Length() > 0 {
			parts = float64(n/s.Length() + 1)
		}
		if limit := call.Argument(1); !goja.IsUndefined(limit) {
			parts = math.Min(parts, float64(uint32(limit.ToInteger())))
		}
		return parts*bytesPerSplitElement + float64(n)*bytesPerChar
	}},
	{"String", "concat", func(call goja.FunctionCall) float64 {
		n := stringLength(call.This)
		for _, a := range call.Arguments {
			n += stringLength(a)
		}
		return float64(n) * bytesPerChar
	}},
	{"Array", "concat", func(call goja.FunctionCall) float64 {
		n := arrayLength(call.This)
		for _, a := range call.Arguments {
			n += max(arrayLength(a), 1)
		}
		return n * bytesPerElement
	}},
	{"Array", "join", func(call goja.FunctionCall) float64 {
		obj, ok := call.This.(*goja.Object)
		if !ok || obj.ClassName() != "Array" {
			return 0
		}
		n := arrayLength(obj)
		sep := 1
		if s, ok := call.Argument(0).(goja.String); ok {
			sep = s.Length()
		}
		chars := n * float64(sep)
		// Only the elements that are strings already (converting another would run JavaScript);
		// one string may stand in many elements (`new Array(n).fill(s).join('')`).
		for i := 0; i < int(n) && i < 1<<20; i++ {
			chars += float64(stringLength(obj.Get(strconv.Itoa(i))))
		}
		return chars * bytesPerChar
	}},
	{"String", "replaceAll", func(call goja.FunctionCall) float64 { return replaceEstimate(call, true) }},
	{"String", "replace", func(call goja.FunctionCall) float64 { return replaceEstimate(call, false) }},
	{"Array", "fill", func(call goja.FunctionCall) float64 {
		obj, ok := call.This.(*goja.Object)
		if !ok || obj.ClassName() != "Array" { // another object's length may be a getter
			return 0
		}
		return float64(obj.Get("length").ToInteger()) * bytesPerElement
	}},
}

// arrayLength is the length of an array, 0 for anything else (whose length may be a getter).
func arrayLength(v goja.Value) float64 {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return 0
	}
	return float64(obj.Get("length").ToInteger())
}

// replaceEstimate is a replacement's result when the pattern and the replacement are strings:
// each occurrence of the pattern replaced (all of them, each gap between characters for an empty
// one, or the first) takes the replacement's length.
func replaceEstimate(call goja.FunctionCall, all bool) float64 {
	this, ok := call.This.(goja.String)
	if !ok {
		return 0
	}
	pattern, ok := call.Argument(0).(goja.String)
	repl, rok := call.Argument(1).(goja.String)
	if !ok || !rok || repl.Length() <= pattern.Length() {
		return 0
	}
	hits := 1
	if all {
		hits = this.Length() + 1
		if p := pattern.String(); p != "" {
			hits = strings.Count(this.String(), p)
		}
	}
	return float64(this.Length()+hits*(repl.Length()-pattern.Length())) * bytesPerChar
}

func padEstimate(call goja.FunctionCall) float64 { return integerArg(call, 0) * bytesPerChar }

// stringLength is the length of a string primitive, 0 for anything else (whose conversion would
// run JavaScript).
func stringLength(v goja.Value) int {
	if s, ok := v.(goja.String); ok {
		return s.Length()
	}
	return 0
}

// integerArg is argument i as a non-negative count, 0 when it is not a finite number.
func integerArg(call goja.FunctionCall, i int) float64 {
	v := call.Argument(i)
	if _, isObj := v.(*goja.Object); isObj { // valueOf would run JavaScript
		return 0
	}
	f := v.ToFloat()
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0
	}
	return math.Trunc(f)
}

// guardAmplifiers wraps each amplifier of vm so that it checks the running evaluation's watch
// before it runs. An estimate under a sixty-fourth of the limit is not checked: the sampling
// catches growth of that size, and reading the heap on every small call would cost more.
func (s *Session) guardAmplifiers() {
	for _, a := range amplifiers {
		proto, ok := s.vm.Get(a.proto).(*goja.Object)
		if !ok {
			continue
		}
		protoObj, ok := proto.Get("prototype").(*goja.Object)
		if !ok {
			continue
		}
		builtin, ok := goja.AssertFunction(protoObj.Get(a.method))
		if !ok {
			continue
		}
		estimate := a.estimate
		guarded := s.vm.ToValue(func(call goja.FunctionCall) goja.Value {
			if w := s.watch; w != nil {
				if est := estimate(call); est >= float64(w.limit)/64 && !w.allows(est) {
					// The interrupt stops the evaluation at its next instruction; nothing
					// sees what this returns.
					w.interrupt()
					return goja.Undefined()
				}
			}
			v, err := builtin(call.This, call.Arguments...)
			if err != nil {
				panic(err) // a throw stays catchable; an interrupt goes on up
			}
			return v
		})
		_ = protoObj.DefineDataProperty(a.method, guarded, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
}
