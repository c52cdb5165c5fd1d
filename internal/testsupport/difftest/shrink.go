package difftest

import (
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Fields names where Shrink looks inside objects: Lists are paths to lists whose items
// it drops one at a time, Maps paths to maps whose keys it drops one at a time (in key
// order, so that a shrink is the same every run).
type Fields struct {
	Lists [][]string
	Maps  [][]string
}

// ErrNotReproduced is Shrink's answer when the objects given do not fail to begin with.
var ErrNotReproduced = errors.New("the disagreement does not reproduce on its own")

// Shrink reduces objs to a smaller set that still fails: it drops whole objects, then
// the list items and map keys at fields, one at a time, keeping each drop after which
// fails still holds, and repeats until no drop is kept. fails is given a copy of its
// own each time. objs is not changed.
func Shrink(objs []*unstructured.Unstructured, fields Fields, fails func([]*unstructured.Unstructured) bool) ([]*unstructured.Unstructured, error) {
	cur := deepCopy(objs)
	try := func(next []*unstructured.Unstructured) bool {
		if fails(deepCopy(next)) {
			cur = next
			return true
		}
		return false
	}
	if !fails(deepCopy(cur)) {
		return nil, ErrNotReproduced
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(cur); i++ {
			next := deepCopy(cur)
			if try(slices.Delete(next, i, i+1)) {
				changed = true
				i--
			}
		}
		for oi := range cur {
			for _, path := range fields.Lists {
				for i := 0; ; i++ {
					items, ok, _ := unstructured.NestedSlice(cur[oi].Object, path...)
					if !ok || i >= len(items) {
						break
					}
					next := deepCopy(cur)
					_ = unstructured.SetNestedSlice(next[oi].Object, slices.Delete(items, i, i+1), path...)
					if try(next) {
						changed = true
						i--
					}
				}
			}
			for _, path := range fields.Maps {
				m, ok, _ := unstructured.NestedMap(cur[oi].Object, path...)
				if !ok {
					continue
				}
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				for _, k := range keys {
					next := deepCopy(cur)
					unstructured.RemoveNestedField(next[oi].Object, append(slices.Clone(path), k)...)
					if try(next) {
						changed = true
					}
				}
			}
		}
	}
	return cur, nil
}

func deepCopy(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	return out
}
