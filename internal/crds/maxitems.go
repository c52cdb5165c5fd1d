package crds

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

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
	v.limitsOnce.Do(func() { v.limits = limitsOf(v.structural) })
	var out []LongList
	var path []pathStep
	longLists(obj, v.limits, &path, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// listLimits is the part of a structural schema that leads to a maxItems: a node for
// each schema that has one or has one below it, nil for every other schema, so that
// LongLists walks only the fields that can hold a list with a limit.
type listLimits struct {
	schema *structuralschema.Structural
	// max is the schema's maxItems (nil for none).
	max *int64
	// items, props and additional are the limits of the list's items, of the object's
	// properties (only those with limits) and of its additionalProperties.
	items      *listLimits
	props      map[string]*listLimits
	additional *listLimits
}

// limitsOf returns the limits of s, nil when no list at or below s has a maxItems.
func limitsOf(s *structuralschema.Structural) *listLimits {
	if s == nil {
		return nil
	}
	n := &listLimits{schema: s, items: limitsOf(s.Items)}
	if vv := s.ValueValidation; vv != nil && vv.MaxItems != nil {
		n.max = vv.MaxItems
	}
	for k := range s.Properties {
		prop := s.Properties[k]
		if l := limitsOf(&prop); l != nil {
			if n.props == nil {
				n.props = map[string]*listLimits{}
			}
			n.props[k] = l
		}
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
		n.additional = limitsOf(ap.Structural)
	}
	if n.max == nil && n.items == nil && n.props == nil && n.additional == nil {
		return nil
	}
	return n
}

// pathStep is one step of a field path: a key, or an index.
type pathStep struct {
	key     string
	index   int
	isIndex bool
}

// pathString is the field path of steps, as "spec.rules[3].matches".
func pathString(steps []pathStep) string {
	var b strings.Builder
	for _, s := range steps {
		if s.isIndex {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return b.String()
}

func longLists(x any, l *listLimits, path *[]pathStep, out *[]LongList) {
	if l == nil {
		return
	}
	switch x := x.(type) {
	case []any:
		if l.max != nil && int64(len(x)) > *l.max {
			*out = append(*out, LongList{Path: pathString(*path), Items: len(x), Max: *l.max})
		}
		if l.items == nil {
			return
		}
		for i, item := range x {
			*path = append(*path, pathStep{index: i, isIndex: true})
			longLists(item, l.items, path, out)
			*path = (*path)[:len(*path)-1]
		}
	case map[string]any:
		if l.additional == nil {
			// Only properties can lead to a limit: look them up instead of every key.
			for k, pl := range l.props {
				if val, ok := x[k]; ok {
					*path = append(*path, pathStep{key: k})
					longLists(val, pl, path, out)
					*path = (*path)[:len(*path)-1]
				}
			}
			return
		}
		for k, val := range x {
			var next *listLimits
			if _, isProp := l.schema.Properties[k]; isProp {
				next = l.props[k]
			} else {
				next = l.additional
			}
			if next != nil {
				*path = append(*path, pathStep{key: k})
				longLists(val, next, path, out)
				*path = (*path)[:len(*path)-1]
			}
		}
	}
}
