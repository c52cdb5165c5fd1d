// Package parallel owns agpol's one way of spreading independent work over the cores:
// For, which calls a function for every index on runtime.GOMAXPROCS goroutines. Callers
// write each result into the slot of its index, so results never depend on the
// schedule and output order stays that of the input.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls f(0) … f(n-1) on runtime.GOMAXPROCS(0) goroutines, taking indexes in order,
// and returns when all calls have returned. f must be safe for concurrent use; each call
// should write only what belongs to its index.
func For(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}
