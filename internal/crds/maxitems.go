package crds

import (
	"fmt"
	"sort"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// LongList is a list of an object longer than its CRD's maxItems allows. The API
// server refuses to create such an object (a "Too many" error,
// k8s.io/kube-openapi pkg/validation/validate/values.go:70, MaxItems), so it cannot exist
// in a cluster.
type LongList struct {
	// Path is the field path of the list, e.g. "spec.rules" or "spec.rules[3].matches".
	Path  string
	Items int
	Max   int64
}

// String is the list as a warning names it.
func (l LongList) String() string {
	return fmt.Sprintf("%s has %d items, the CRD allows at most %d", l.Path, l.Items, l.Max)
}

// LongLists returns the lists of obj (an object of this validator's version, as
// decoded) over their schema's maxItems, sorted by path.
func (v *Validator) LongLists(obj map[string]any) []LongList {
	var out []LongList
	longLists(obj, v.structural, "", &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func longLists(x any, s *structuralschema.Structural, path string, out *[]LongList) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case []any:
		if vv := s.ValueValidation; vv != nil && vv.MaxItems != nil && int64(len(x)) > *vv.MaxItems {
			*out = append(*out, LongList{Path: path, Items: len(x), Max: *vv.MaxItems})
		}
		for i, item := range x {
			longLists(item, s.Items, fmt.Sprintf("%s[%d]", path, i), out)
		}
	case map[string]any:
		for k, val := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if prop, ok := s.Properties[k]; ok {
				longLists(val, &prop, p, out)
			} else if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
				longLists(val, ap.Structural, p, out)
			}
		}
	}
}
