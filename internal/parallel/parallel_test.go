package parallel

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestFor(t *testing.T) {
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 7, 1000} {
			out := make([]int, n)
			var calls atomic.Int64
			For(n, func(i int) { out[i] = i * i; calls.Add(1) })
			if int(calls.Load()) != n {
				t.Errorf("GOMAXPROCS %d, n %d: %d calls", procs, n, calls.Load())
			}
			for i, v := range out {
				if v != i*i {
					t.Fatalf("GOMAXPROCS %d, n %d: out[%d] = %d", procs, n, i, v)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}

// TestOrdered: every result is emitted once, in index order, whatever the order the
// calls finish in; no more than 2 × Workers(n) results wait to be emitted; an error of
// emit is returned and ends the calls.
func TestOrdered(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 7, 1000} {
			var made, emitted, most atomic.Int64
			want := 0
			err := Ordered(n, func(w, i int) int {
				if w < 0 || w >= Workers(n) {
					t.Errorf("worker %d of %d", w, Workers(n))
				}
				if i%3 == 0 {
					time.Sleep(50 * time.Microsecond) // later indexes finish first
				}
				ahead := made.Add(1) - emitted.Load()
				for {
					m := most.Load()
					if ahead <= m || most.CompareAndSwap(m, ahead) {
						break
					}
				}
				return i
			}, func(v int) error {
				if v != want {
					t.Fatalf("GOMAXPROCS %d, n %d: emitted %d, want %d", procs, n, v, want)
				}
				want++
				emitted.Add(1)
				return nil
			})
			if err != nil || want != n {
				t.Errorf("GOMAXPROCS %d, n %d: %d emitted, err %v", procs, n, want, err)
			}
			if m := most.Load(); m > int64(2*Workers(n)) {
				t.Errorf("GOMAXPROCS %d, n %d: %d results waited at once, more than %d", procs, n, m, 2*Workers(n))
			}
		}
		stopAt := errors.New("stop")
		var calls atomic.Int64
		err := Ordered(1000, func(_, i int) int { calls.Add(1); return i }, func(v int) error {
			if v == 10 {
				return stopAt
			}
			return nil
		})
		if err != stopAt || calls.Load() > int64(11+2*Workers(1000)) {
			t.Errorf("GOMAXPROCS %d: err %v after %d calls", procs, err, calls.Load())
		}
		runtime.GOMAXPROCS(prev)
	}
}
