package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
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
	defer p.unwatched.Store(true)
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

func TestGCHeadroom(t *testing.T) {
	const mib = 1 << 20
	// Room for the live heap to double, the runtime's other memory where it is.
	h := heapMemory{live: 300 * mib, heap: 450 * mib, total: 520 * mib}
	if got, want := h.headroom(), int64(70*mib+600*mib); got != want {
		t.Errorf("headroom %d MiB, want %d MiB", got/mib, want/mib)
	}

	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	p := &gcPolicy{followInput: true}
	p.inputRead(1 << 20)
	if got := debug.SetMemoryLimit(-1); got != minMemoryLimit {
		t.Fatalf("limit %d, want the minimum", got)
	}
	// A small live heap leaves the input's limit.
	p.afterGC(heapMemory{live: 50 * mib, heap: 80 * mib, total: 100 * mib})
	if got := debug.SetMemoryLimit(-1); got != minMemoryLimit {
		t.Errorf("small heap: limit %d MiB, want the minimum", got/mib)
	}
	// A live heap near the limit raises it (matrix on large: 300 MB live).
	p.afterGC(h)
	if got := debug.SetMemoryLimit(-1); got != h.headroom() {
		t.Errorf("heap near the limit: limit %d MiB, want %d MiB", got/mib, h.headroom()/mib)
	}
	// The limit is never lowered by a later, smaller heap, nor by reading more input.
	p.afterGC(heapMemory{live: 10 * mib, heap: 20 * mib, total: 30 * mib})
	p.inputRead(1 << 20)
	if got := debug.SetMemoryLimit(-1); got != h.headroom() {
		t.Errorf("after a smaller heap: limit %d MiB, want %d MiB", got/mib, h.headroom()/mib)
	}
	// The input's limit wins when larger.
	p.inputRead(100 << 20)
	if got, want := debug.SetMemoryLimit(-1), memoryLimit(102<<20); got != want {
		t.Errorf("after 102 MiB read: limit %d MiB, want %d MiB", got/mib, want/mib)
	}
}

func TestGCWatchRuns(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	p := &gcPolicy{followInput: true}
	p.watch()
	defer p.unwatched.Store(true)
	for range 50 {
		runtime.GC()
		p.mu.Lock()
		h := p.headroom
		p.mu.Unlock()
		if h > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no collection reached the policy")
}
