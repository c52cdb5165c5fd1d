package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestGCPolicy(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	setGCPolicy(getenv)
	if got := debug.SetGCPercent(-1); got != gcPercent {
		t.Errorf("GC percent %d, want %d", got, gcPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != memoryLimit {
		t.Errorf("memory limit %d, want %d", got, memoryLimit)
	}
	// Set in the environment (the runtime read them at start): left as they are.
	env["GOGC"], env["GOMEMLIMIT"] = "50", "1GiB"
	debug.SetGCPercent(50)
	debug.SetMemoryLimit(1 << 30)
	setGCPolicy(getenv)
	if got := debug.SetGCPercent(-1); got != 50 {
		t.Errorf("GOGC=50: GC percent %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("GOMEMLIMIT=1GiB: memory limit %d", got)
	}
}
