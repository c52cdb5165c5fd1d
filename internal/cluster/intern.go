// Interning the short strings that objects repeat.

package cluster

import (
	"sync"
)

// maxInterned is the longest string interned: longer ones (descriptions, CEL
// expressions, certificates) are seldom repeated.
const maxInterned = 64

func (c *converter) str(s string) string {
	if c.strings == nil || len(s) > maxInterned {
		return s
	}
	if x, ok := c.strings[s]; ok {
		return x
	}
	if c.shared != nil {
		s = c.shared.intern(s)
	}
	c.strings[s] = s
	return s
}

// internTable interns strings across the files parsed in parallel. A plain map under a
// mutex: each file's own table (converter.strings) answers most lookups, so this one is
// asked once per distinct string of a file, and holds fewer bytes per string than a
// sync.Map.
type internTable struct {
	mu sync.Mutex
	m  map[string]string
}

func (t *internTable) intern(s string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if x, ok := t.m[s]; ok {
		return x
	}
	t.m[s] = s
	return s
}
