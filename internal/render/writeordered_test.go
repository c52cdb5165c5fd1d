package render

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"testing"
)

// writeOrdered writes every chunk in order whatever the core that made it, and stops
// at a chunk's error.
func TestWriteOrdered(t *testing.T) {
	fill := func(b []byte, lo, hi int) ([]byte, error) {
		for i := lo; i < hi; i++ {
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, '\n')
		}
		return b, nil
	}
	for _, c := range []struct{ n, per int }{{0, 3}, {1, 3}, {10, 3}, {1000, 7}, {5000, 1}} {
		var want bytes.Buffer
		for i := range c.n {
			fmt.Fprintf(&want, "%d\n", i)
		}
		var got bytes.Buffer
		if err := writeOrdered(&got, c.n, c.per, fill); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("n=%d per=%d: output differs from the items in order", c.n, c.per)
		}
	}
	bad := errors.New("chunk failed")
	var got bytes.Buffer
	err := writeOrdered(&got, 100, 10, func(b []byte, lo, hi int) ([]byte, error) {
		if lo == 50 {
			return b, bad
		}
		return fill(b, lo, hi)
	})
	if !errors.Is(err, bad) {
		t.Fatalf("err = %v, want the chunk's error", err)
	}
	if want := "0\n"; !bytes.HasPrefix(got.Bytes(), []byte(want)) || bytes.Contains(got.Bytes(), []byte("\n50\n")) {
		t.Errorf("output past the failed chunk: %q", got.String())
	}
}
