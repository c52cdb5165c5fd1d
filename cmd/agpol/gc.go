package main

import (
	"runtime/debug"
)

// The garbage collector's policy for a short-lived command (bench/README.md, "GC
// policy", has the measurements): collect when the heap has grown by 400% rather than
// Go's default 100%, as most of what agpol allocates while reading its input is
// garbage soon after, bounded by a soft memory limit past which the collector runs as
// often as it must. GOGC and GOMEMLIMIT, when set, override each part.
const (
	gcPercent   = 400
	memoryLimit = 512 << 20
)

// setGCPolicy applies the policy; getenv reads the environment.
func setGCPolicy(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}
