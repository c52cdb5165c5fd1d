package crds

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// naiveLongLists is LongLists written as the plain walk of the whole object beside its
// schema: the reference the pruned walk of LongLists must agree with.
func naiveLongLists(x any, s *structuralschema.Structural, path string, out *[]LongList) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case []any:
		if vv := s.ValueValidation; vv != nil && vv.MaxItems != nil && int64(len(x)) > *vv.MaxItems {
			*out = append(*out, LongList{Path: path, Items: len(x), Max: *vv.MaxItems})
		}
		for i, item := range x {
			naiveLongLists(item, s.Items, fmt.Sprintf("%s[%d]", path, i), out)
		}
	case map[string]any:
		for k, val := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if prop, ok := s.Properties[k]; ok {
				naiveLongLists(val, &prop, p, out)
			} else if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
				naiveLongLists(val, ap.Structural, p, out)
			}
		}
	}
}

func list(n int, item func(i int) any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = item(i)
	}
	return out
}

// TestLongListsNested: lists over maxItems at the top of the spec and nested in list
// items are found with their paths (and only those), as the plain walk finds them.
func TestLongListsNested(t *testing.T) {
	v, err := Lookup(schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"})
	if err != nil {
		t.Fatal(err)
	}
	match := func(int) any { return map[string]any{"path": map[string]any{"value": "/"}} }
	rule := func(i int) any {
		r := map[string]any{"matches": list(2, match)}
		if i == 3 {
			r["matches"] = list(65, match)
			r["filters"] = list(17, func(int) any { return map[string]any{"type": "RequestHeaderModifier"} })
		}
		return r
	}
	obj := map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": "r", "namespace": "ns", "labels": map[string]any{"": "x"}},
		"spec": map[string]any{
			"hostnames": list(17, func(i int) any { return fmt.Sprintf("h%d.example", i) }),
			"rules":     list(17, rule),
			"unknown":   list(100, func(int) any { return "x" }),
		},
	}
	got := v.LongLists(obj)
	var want []LongList
	naiveLongLists(obj, v.structural, "", &want)
	sort.Slice(want, func(i, j int) bool { return want[i].Path < want[j].Path })
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LongLists:\n got %v\nwant %v", got, want)
	}
	paths := []string{}
	for _, l := range got {
		paths = append(paths, l.Path)
	}
	if fmt.Sprint(paths) != "[spec.hostnames spec.rules spec.rules[3].filters spec.rules[3].matches]" {
		t.Errorf("paths %v", paths)
	}
}
