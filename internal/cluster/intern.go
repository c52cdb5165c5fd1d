// Interning the short strings that objects repeat.

package cluster

import (
	"sync"
)

// maxInterned is the longest string interned: longer ones (descriptions, CEL
// expressions, certificates) are seldom repeated.
const maxInterned = 64

// intern returns the file's copy of s. What it buys: peak RSS of `agpol get xap -A -o name`
// on bench/run.sh's large topology (18k objects) is 255–259 MB with it, 261–265 MB without
// (2 runs each, 2026-11-25). Parsing takes it as a plain func(string) string
// (yamlnode.Convert). Typed objects keep the values (and the keys of
// label maps) of every object, and most are the same few words (API versions, kinds,
// namespaces, enum values) over and over: each file has its own table (strings), and
// the strings it has not seen are interned over all the files read, which are parsed
// in parallel (shared).
func (r *fileReader) intern(s string) string {
	if r.strings == nil || len(s) > maxInterned {
		return s
	}
	if x, ok := r.strings[s]; ok {
		return x
	}
	if r.shared != nil {
		s = r.shared.intern(s)
	}
	r.strings[s] = s
	return s
}

// internTable interns strings across the files parsed in parallel. A plain map under a
// mutex: each file's own table (fileReader.strings) answers most lookups, so this one is
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
