package difftest

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// EnvInt reads a positive integer from the environment variable name; def when it is
// unset, not a number or not positive.
func EnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// SeedFromEnv reads the seed a test is asked to look at (TestShrink, TestDump) from
// the environment variable name: t is skipped when it is unset and fails when it is
// not a number.
func SeedFromEnv(t testing.TB, name string) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Skipf("set %s=seed", name)
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return i
}

// Seeds runs run for the seeds first..first+n-1 on GOMAXPROCS workers, each with a
// worker of its own made by start (and closed after, when it is an io.Closer), and
// returns the results in seed order, whatever order the workers finished in. The
// first error, by seed, is returned with its seed.
func Seeds[W, R any](first, n int, start func() (W, error), run func(w W, seed int) (R, error)) ([]R, error) {
	results := make([]R, n)
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		w, err := start()
		if err != nil {
			wg.Wait()
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c, ok := any(w).(io.Closer); ok {
				defer c.Close()
			}
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				results[k], errs[k] = run(w, first+k)
			}
		}()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", first+k, err)
		}
	}
	return results, nil
}
