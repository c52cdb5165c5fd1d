// Package parallel owns agpol's way of spreading independent work over the cores: For,
// which calls a function for every index on runtime.GOMAXPROCS goroutines (callers write
// each result into the slot of its index), and Ordered, which hands the results of
// such calls to one consumer in index order with only a few of them made ahead. Either
// way results never depend on the schedule and output order stays that of the input.
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
	workers := Workers(n)
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

// Ordered calls work(w, i) for i = 0 … n-1 on runtime.GOMAXPROCS(0) goroutines and
// emit(v) with each result on the calling goroutine, in index order, as soon as the
// results before it are emitted. w is the index of the goroutine making the call, below
// Workers(n): state kept per goroutine is indexed by it. At most 2 × Workers(n) results
// are made and not yet emitted, so memory does not grow with n. The first error of emit
// stops it: Ordered returns that error once the calls under way have returned, and
// no other index starts after their goroutines see it. work must be safe for concurrent use.
func Ordered[T any](n int, work func(w, i int) T, emit func(v T) error) error {
	workers := Workers(n)
	if workers <= 1 {
		for i := range n {
			if err := emit(work(0, i)); err != nil {
				return err
			}
		}
		return nil
	}
	window := 2 * workers
	// Result i goes to slot i % window: the indexes started and not yet emitted are
	// fewer than window (a worker takes a token to start one, emit gives it back), so
	// no two of them share a slot, and a send never waits.
	slots := make([]chan T, window)
	tokens := make(chan struct{}, window)
	for k := range slots {
		slots[k] = make(chan T, 1)
		tokens <- struct{}{}
	}
	stop := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-tokens:
				}
				select {
				case <-stop:
					return
				default:
				}
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				slots[i%window] <- work(w, i)
			}
		}()
	}
	var err error
	for i := range n {
		if err = emit(<-slots[i%window]); err != nil {
			break
		}
		tokens <- struct{}{}
	}
	close(stop)
	wg.Wait()
	return err
}

// Workers is how many goroutines For and Ordered use for n calls.
func Workers(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n)) }
