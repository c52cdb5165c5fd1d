package render

import (
	"bytes"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
)

// TestObjectListJSON: the same bytes as kubectl's JSON printer of the whole list.
func TestObjectListJSON(t *testing.T) {
	objs := func() []*unstructured.Unstructured {
		return []*unstructured.Unstructured{
			{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "a", "namespace": "ns",
				"managedFields": []any{map[string]any{"manager": "kubectl"}}, "annotations": map[string]any{"x": "<b> & c"}},
				"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}, "empty": map[string]any{}, "none": []any{}, "f": 1.5, "n": nil}}},
			{Object: map[string]any{"apiVersion": "agentic.networking.x-k8s.io/v1alpha1", "kind": "XBackend", "metadata": map[string]any{"name": "b"}}},
		}
	}
	for _, tc := range []struct {
		name string
		n    int
		show bool
	}{{"empty", 0, false}, {"one", 1, false}, {"two", 2, false}, {"two, managed fields shown", 2, true}} {
		t.Run(tc.name, func(t *testing.T) {
			list := &unstructured.UnstructuredList{Object: map[string]any{
				"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}}}
			for _, u := range objs()[:tc.n] {
				list.Items = append(list.Items, *u)
			}
			if list.Items == nil {
				list.Items = []unstructured.Unstructured{}
			}
			var p printers.ResourcePrinter = &printers.JSONPrinter{}
			if !tc.show {
				p = &printers.OmitManagedFieldsPrinter{Delegate: p}
			}
			var want, got bytes.Buffer
			if err := p.PrintObj(list, &want); err != nil {
				t.Fatal(err)
			}
			rest := objs()[:tc.n]
			err := ObjectListJSON(&got, !tc.show, func() *unstructured.Unstructured {
				if len(rest) == 0 {
					return nil
				}
				u := rest[0]
				rest = rest[1:]
				return u
			})
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("got:\n%s\nwant:\n%s", got.String(), want.String())
			}
		})
	}
}

// TestListedJSONInspect: the items ListedJSONInspect encodes as the objects are read
// make the same bytes as kubectl's JSON printer of the whole list, without changing
// the objects read; objects of other kinds, or that the selector leaves out, are not
// encoded.
func TestListedJSONInspect(t *testing.T) {
	objs := func() []*unstructured.Unstructured {
		return []*unstructured.Unstructured{
			{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "a", "namespace": "ns",
				"managedFields": []any{map[string]any{"manager": "kubectl"}}, "labels": map[string]any{"team": "x"}},
				"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}, "empty": map[string]any{}, "f": 1.5, "n": nil}}},
			{Object: map[string]any{"apiVersion": "agentic.networking.x-k8s.io/v1alpha1", "kind": "XBackend", "metadata": map[string]any{"name": "b", "namespace": "ns"}}},
		}
	}
	kinds := map[schema.GroupKind]bool{{Kind: "Service"}: true, {Group: "agentic.networking.x-k8s.io", Kind: "XBackend"}: true}
	for _, show := range []bool{false, true} {
		list := &unstructured.UnstructuredList{Object: map[string]any{
			"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}}}
		for _, u := range objs() {
			list.Items = append(list.Items, *u)
		}
		var p printers.ResourcePrinter = &printers.JSONPrinter{}
		if !show {
			p = &printers.OmitManagedFieldsPrinter{Delegate: p}
		}
		var want, got bytes.Buffer
		if err := p.PrintObj(list, &want); err != nil {
			t.Fatal(err)
		}
		inspect := ListedJSONInspect(kinds, Selector{}, !show)
		read := objs()
		var items [][]byte
		for _, u := range read {
			b, ok := inspect(u).(encodedItem)
			if !ok {
				t.Fatalf("%s not encoded", u.GetName())
			}
			items = append(items, b)
		}
		if !reflect.DeepEqual(read, objs()) {
			t.Errorf("show %v: the objects read were changed", show)
		}
		err := objectListJSON(&got, func() ([]byte, bool, error) {
			if len(items) == 0 {
				return nil, false, nil
			}
			b := items[0]
			items = items[1:]
			return b, true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("show %v: got:\n%s\nwant:\n%s", show, got.String(), want.String())
		}
	}
	team, err := labels.Parse("team=x")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		kinds map[schema.GroupKind]bool
		sel   Selector
		want  []bool
	}{
		{"other kinds", map[schema.GroupKind]bool{{Kind: "Service"}: true}, Selector{}, []bool{true, false}},
		{"other namespace", kinds, Selector{Namespace: "other"}, []bool{false, false}},
		{"labels", kinds, Selector{Labels: team}, []bool{true, false}},
	} {
		inspect := ListedJSONInspect(tc.kinds, tc.sel, true)
		for i, u := range objs() {
			if _, got := inspect(u).(encodedItem); got != tc.want[i] {
				t.Errorf("%s: %s encoded %v, want %v", tc.name, u.GetName(), got, tc.want[i])
			}
		}
	}
}
