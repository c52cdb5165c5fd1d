package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// The garbage collector's policy for a short-lived command (bench/README.md, "GC
// policy", has the measurements): collect when the heap has grown by 400% rather than
// Go's default 100%, as most of what agpol allocates while reading its input is
// garbage soon after, bounded by a soft memory limit past which the collector runs as
// often as it must. The limit follows the input: at least minMemoryLimit, and
// memoryPerInputByte times the bytes of input read (files; a live read keeps the
// minimum), so that an input whose live heap passes the minimum still leaves the
// collector about the room Go's defaults would. The limit also keeps room for the heap
// to grow by its live size after each collection (headroom): a command whose live heap
// comes near the limit (matrix holds every cell) would otherwise be collected every few
// MB allocated, more often than under Go's defaults. GOGC and GOMEMLIMIT, when set,
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

	mu sync.Mutex
	// headroom is the largest limit a collection asked for (heapMemory.headroom), 0
	// before one.
	headroom int64
	// unwatched ends watch (a test's policy).
	unwatched atomic.Bool
}

// setGCPolicy applies the policy; getenv reads the environment.
func setGCPolicy(getenv func(string) string) *gcPolicy {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	p := &gcPolicy{followInput: getenv("GOMEMLIMIT") == ""}
	if p.followInput {
		debug.SetMemoryLimit(memoryLimit(0))
		p.watch()
	}
	return p
}

// watch calls afterGC once after every collection, for the life of the process: a
// cleanup runs when the collector has found its object unreachable, and arms the next.
func (p *gcPolicy) watch() {
	type sentinel struct{ _ [16]byte } // not a tiny allocation: collected on its own
	runtime.AddCleanup(new(sentinel), func(p *gcPolicy) {
		if p.unwatched.Load() {
			return
		}
		p.afterGC(readHeap())
		p.watch()
	}, p)
}

// afterGC raises the limit to leave room for the live heap to double.
func (p *gcPolicy) afterGC(h heapMemory) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if want := h.headroom(); want > p.headroom {
		p.headroom = want
		p.setLimit()
	}
}

// setLimit sets the larger of the input's limit and the headroom; p.mu held.
func (p *gcPolicy) setLimit() {
	debug.SetMemoryLimit(max(memoryLimit(p.inputBytes.Load()), p.headroom))
}

// heapMemory is what the runtime reports of its memory after a collection.
type heapMemory struct {
	// live is the heap the last collection marked live; heap all heap memory held
	// (objects, free and unused spans not returned to the OS); total all memory the
	// runtime holds, as the memory limit counts it (mapped less returned).
	live, heap, total int64
}

// headroom is the limit that lets the heap grow by its live size before the next
// collection, with the runtime's other memory (stacks, metadata) where it is: what
// GOGC=100 gives a heap without a limit.
func (h heapMemory) headroom() int64 {
	return h.total - h.heap + 2*h.live
}

// readHeap reads heapMemory from runtime/metrics.
func readHeap() heapMemory {
	s := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(s)
	v := func(i int) int64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(s[i].Value.Uint64())
	}
	return heapMemory{live: v(0), heap: v(1) + v(2) + v(3), total: v(4) - v(5)}
}

// inputRead is told that a load read n more bytes of input (for diff, the files its
// two inputs share are counted once): the limit follows the input read so far.
func (p *gcPolicy) inputRead(n int64) {
	if p == nil || !p.followInput {
		return
	}
	p.inputBytes.Add(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLimit()
}

// memoryLimit is the soft memory limit for inputBytes bytes of input.
func memoryLimit(inputBytes int64) int64 {
	return max(minMemoryLimit, memoryPerInputByte*inputBytes)
}
