package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
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
