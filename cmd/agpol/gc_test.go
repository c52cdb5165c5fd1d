package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestGCMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name  string
		input int64
		want  int64
	}{
		{"nothing read (a live read)", 0, 512 * mib},
		{"medium, 1.3 MB", 1_300_000, 512 * mib},
		{"large, 11.5 MB", 11_500_000, 512 * mib},
		{"where the minimum ends", 512 * mib / memoryPerInputByte, 512 * mib},
		{"3x large, 34 MB", 34_000_000, memoryPerInputByte * 34_000_000},
		{"the largest input read, 512 MiB", 512 * mib, memoryPerInputByte * 512 * mib},
	} {
		if got := memoryLimit(tc.input); got != tc.want {
			t.Errorf("%s: memoryLimit(%d) = %d, want %d", tc.name, tc.input, got, tc.want)
		}
	}
}

func TestGCPolicy(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	p := setGCPolicy(getenv)
	if got := debug.SetGCPercent(-1); got != gcPercent {
		t.Errorf("GC percent %d, want %d", got, gcPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != minMemoryLimit {
		t.Errorf("memory limit %d, want %d", got, minMemoryLimit)
	}
	// The limit follows the input read by every load: diff's two add up.
	p.inputRead(10 << 20)
	if got := debug.SetMemoryLimit(-1); got != minMemoryLimit {
		t.Errorf("10 MiB read: memory limit %d, want %d", got, minMemoryLimit)
	}
	p.inputRead(20 << 20)
	if got, want := debug.SetMemoryLimit(-1), int64(memoryPerInputByte*30<<20); got != want {
		t.Errorf("10+20 MiB read: memory limit %d, want %d", got, want)
	}
	// Commands run in a test's process: no policy, the limit is left as it is.
	var none *gcPolicy
	none.inputRead(100 << 20)
	if got, want := debug.SetMemoryLimit(-1), int64(memoryPerInputByte*30<<20); got != want {
		t.Errorf("no policy: memory limit %d, want %d", got, want)
	}

	// Set in the environment (the runtime read them at start): left as they are.
	env["GOGC"], env["GOMEMLIMIT"] = "50", "1GiB"
	debug.SetGCPercent(50)
	debug.SetMemoryLimit(1 << 30)
	p = setGCPolicy(getenv)
	p.inputRead(100 << 20)
	if got := debug.SetGCPercent(-1); got != 50 {
		t.Errorf("GOGC=50: GC percent %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("GOMEMLIMIT=1GiB: memory limit %d", got)
	}
}
