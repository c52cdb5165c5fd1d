package render

import (
	"bytes"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
