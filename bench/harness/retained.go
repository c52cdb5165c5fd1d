package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/agpol/agpol/bench/stages"
)

// retainedParts are the parts what stays live is counted in, in the order printed. Each
// live byte is counted in one part, by the stack that allocated it (classify).
var retainedParts = []string{"typed", "objects", "files", "cel", "engine", "graph", "other", "init"}

// retained runs the pipeline (load, routing graph, admission, every chain) with every
// allocation recorded, then prints what is still live, by part, as key=value bytes:
//
//	typed    the typed objects: sigs.k8s.io/gateway-api's, k8s.io/api's and agpol's API
//	         types, as snapshot.Decode makes them (short strings interned)
//	objects  what the snapshot keeps beside them: origins, headers, indexes
//	files    the input's bytes, kept to decode an object again when asked for it
//	cel      cel-go: environments and compiled programs
//	engine   the rest of effective.Engine: admission, levels, chains
//	graph    the routing graph (topology)
//	other    the rest of agpol's allocations
//	init     what the program's packages allocate before main (library tables)
//
// and runtime_bytes: the resident set of the idle process less its program pages, its
// heap and the heap profile (the Go runtime's own memory). Run it with
// GODEBUG=memprofilerate=1, so that allocations made before main are recorded too; it
// sets the rate itself otherwise. Recording every allocation makes the run some 20 times
// slower: its times mean nothing.
func retained(args []string) error {
	fs := newFlagSet("retained")
	dir := fs.String("dir", "", "manifest directory")
	_ = fs.Parse(args)
	if runtime.MemProfileRate != 1 {
		runtime.MemProfileRate = 1
		fmt.Fprintln(os.Stderr, "harness retained: GODEBUG=memprofilerate=1 not set: what packages allocate before main is undercounted")
	}
	files, size, err := manifests(*dir)
	if err != nil {
		return err
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	// The runtime's own memory: not the heap, nor the heap profile's buckets.
	idleRuntime := anonRSS() - int64(ms.HeapAlloc) - int64(ms.BuckHashSys)

	s, err := stages.Load(files)
	if err != nil {
		return err
	}
	r, err := stages.PipelineFrom(s)
	if err != nil {
		return err
	}
	runtime.GC()
	runtime.GC() // the heap profile holds what the last completed cycle found live
	parts := map[string]int64{}
	for _, rec := range memRecords() {
		parts[classify(rec.Stack())] += rec.InUseBytes()
	}
	runtime.KeepAlive(r)
	var total int64
	var b strings.Builder
	for _, p := range retainedParts {
		total += parts[p]
		fmt.Fprintf(&b, " %s_bytes=%d", p, parts[p])
	}
	fmt.Printf("input_bytes=%d live_bytes=%d runtime_bytes=%d%s\n", size, total, idleRuntime, b.String())
	return nil
}

// memRecords is the heap profile: one record per allocating stack.
func memRecords() []runtime.MemProfileRecord {
	n, _ := runtime.MemProfile(nil, false)
	for {
		recs := make([]runtime.MemProfileRecord, n+64)
		m, ok := runtime.MemProfile(recs, false)
		if ok {
			return recs[:m]
		}
		n = m
	}
}

// classify names the part of an allocation by its stack.
func classify(stack []uintptr) string {
	var fns []string
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		fns = append(fns, f.Function)
		if !more {
			break
		}
	}
	return classifyFuncs(fns)
}

// classifyFuncs names the part of an allocation by the functions of its stack, innermost
// first: cel-go anywhere in it, else a typed decoding, else the innermost of agpol's
// functions; without any, what main or a package's initialization allocated.
func classifyFuncs(fns []string) string {
	for _, fn := range fns {
		if strings.HasPrefix(fn, "github.com/google/cel-go/") {
			return "cel"
		}
	}
	if typedDecode(fns) {
		return "typed"
	}
	const agpol = "github.com/agpol/agpol/internal/"
	for _, fn := range fns {
		pkg, ok := strings.CutPrefix(fn, agpol)
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(pkg, "cluster.readLimited"), strings.HasPrefix(pkg, "cluster.readFile"):
			return "files"
		case strings.HasPrefix(pkg, "snapshot."), strings.HasPrefix(pkg, "cluster."):
			return "objects"
		case strings.HasPrefix(pkg, "topology."):
			return "graph"
		case strings.HasPrefix(pkg, "effective."):
			return "engine"
		}
		return "other"
	}
	for _, fn := range fns {
		if fn == "runtime.main" && !containsInit(fns) {
			return "other" // allocated by main itself
		}
	}
	return "init"
}

// typedDecode reports whether a stack decodes a typed object (snapshot.Decode).
func typedDecode(fns []string) bool {
	for _, fn := range fns {
		if fn == "github.com/agpol/agpol/internal/snapshot.Decode" {
			return true
		}
	}
	return false
}

func containsInit(fns []string) bool {
	for _, fn := range fns {
		if fn == "runtime.doInit1" || strings.HasSuffix(fn, ".init") || strings.Contains(fn, ".init.") {
			return true
		}
	}
	return false
}

// anonRSS is the resident set less the pages mapped from files (RssAnon).
func anonRSS() int64 { return statusBytes("RssAnon") }
