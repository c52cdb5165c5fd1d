package main

import (
	"runtime/debug"
	"sync/atomic"
)

// The garbage collector's policy for a short-lived command (bench/README.md, "GC
// policy", has the measurements): collect when the heap has grown by 400% rather than
// Go's default 100%, as most of what agpol allocates while reading its input is
// garbage soon after, bounded by a soft memory limit past which the collector runs as
// often as it must. The limit follows the input: at least minMemoryLimit, and
// memoryPerInputByte times the bytes of input read (files; a live read keeps the
// minimum), so that an input whose live heap passes the minimum still leaves the
// collector about the room Go's defaults would. GOGC and GOMEMLIMIT, when set,
// override each part.
const (
	gcPercent      = 400
	minMemoryLimit = 512 << 20
	// memoryPerInputByte is the peak memory per byte of input of lint, the command
	// with the largest live heap on one input, under Go's defaults (GOGC=100, no
	// limit): 978 MB for the 34 MB of 3x large (a live heap of 374 MB), 29 bytes a
	// byte (bench/README.md, "GC policy").
	memoryPerInputByte = 30
)

// installedGC is the policy main installed; nil when commands run in a test's process,
// whose collector is left as it is.
var installedGC *gcPolicy

// A gcPolicy raises the memory limit as loads read their input.
type gcPolicy struct {
	// followInput is false when GOMEMLIMIT set the limit.
	followInput bool
	inputBytes  atomic.Int64
}

// setGCPolicy applies the policy; getenv reads the environment.
func setGCPolicy(getenv func(string) string) *gcPolicy {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	p := &gcPolicy{followInput: getenv("GOMEMLIMIT") == ""}
	if p.followInput {
		debug.SetMemoryLimit(memoryLimit(0))
	}
	return p
}

// inputRead is told that a load read n more bytes of input (for diff, the files its
// two inputs share are counted once): the limit follows the input read so far.
func (p *gcPolicy) inputRead(n int64) {
	if p == nil || !p.followInput {
		return
	}
	debug.SetMemoryLimit(memoryLimit(p.inputBytes.Add(n)))
}

// memoryLimit is the soft memory limit for inputBytes bytes of input.
func memoryLimit(inputBytes int64) int64 {
	return max(minMemoryLimit, memoryPerInputByte*inputBytes)
}
