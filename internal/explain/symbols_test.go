package explain

import (
	"fmt"
	"strings"
	"testing"
)

// TestSymbolsKeepKeys: keys stay what they were, and every string keeps its own symbol.
func TestSymbolsKeepKeys(t *testing.T) {
	var s symbols
	var vals []string
	for i := 0; i < 3000; i++ {
		v := fmt.Sprintf("spiffe://cluster.local/ns/agents-%03d/sa/agent-%d", i/5, i%5)
		if i%500 == 0 {
			v = strings.Repeat("x", 2048+i) // long ones too
		}
		vals = append(vals, v)
	}
	ids := map[uint32]string{}
	for _, v := range vals {
		id := s.intern(v)
		if prev, ok := ids[id]; ok {
			t.Fatalf("symbol %d given to %q and %q", id, prev, v)
		}
		ids[id] = v
	}
	for _, v := range vals {
		id := s.intern(strings.Clone(v))
		if ids[id] != v {
			t.Fatalf("%q looked up as symbol %d, which is %q", v, id, ids[id])
		}
	}
	for k, id := range s.m {
		if ids[id] != k {
			t.Fatalf("key %q of symbol %d changed; it was %q", k, id, ids[id])
		}
	}
}
