package snapshot

import (
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestSource(t *testing.T) {
	for _, c := range []struct {
		src            Source
		str            string
		isFile, stored bool
	}{
		{Source{File: "a.yaml", Line: 3}, "a.yaml:3", true, false},
		{Source{File: "a.yaml"}, "a.yaml", true, false},
		{Source{File: "snap.yaml", Line: 1, Stored: true}, "snap.yaml:1", true, true},
		{Source{Cluster: "kind-dev"}, "cluster:kind-dev", false, true},
		{Source{}, "cluster", false, true},
	} {
		if got := c.src.String(); got != c.str {
			t.Errorf("%+v: String() = %q, want %q", c.src, got, c.str)
		}
		if c.src.IsFile() != c.isFile || c.src.AsStored() != c.stored {
			t.Errorf("%+v: IsFile %v AsStored %v, want %v %v", c.src, c.src.IsFile(), c.src.AsStored(), c.isFile, c.stored)
		}
	}
}

func TestHeader(t *testing.T) {
	u := obj(t, "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g, namespace: ns}\n")
	h := HeaderOf(u)
	if h != (Header{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway", Namespace: "ns", Name: "g"}) {
		t.Errorf("HeaderOf = %+v", h)
	}
	for _, c := range []struct {
		apiVersion string
		want       schema.GroupVersionKind
	}{
		{"gateway.networking.k8s.io/v1", schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "K"}},
		{"v1", schema.GroupVersionKind{Version: "v1", Kind: "K"}},
		{"a/b/c", schema.GroupVersionKind{}},
	} {
		if got := (Header{APIVersion: c.apiVersion, Kind: "K"}).GroupVersionKind(); got != c.want {
			t.Errorf("GroupVersionKind of %q = %v, want %v", c.apiVersion, got, c.want)
		}
	}
}

// TestRawHeld: a Raw given its object returns it, and copies of it from Fresh.
func TestRawHeld(t *testing.T) {
	u := obj(t, "apiVersion: v1\nkind: Service\nmetadata: {name: s, annotations: {a: b}}\n")
	r := NewRaw(u)
	if r.Object() != u || r.Decoded() != u {
		t.Fatal("a held object is not returned as is")
	}
	if h, ok := r.Header(); !ok || h.Name != "s" {
		t.Errorf("Header = %+v, %v", h, ok)
	}
	if a := r.Annotations(); a["a"] != "b" {
		t.Errorf("Annotations = %v", a)
	}
	f := r.Fresh()
	if f == u || !reflect.DeepEqual(f.Object, u.Object) {
		t.Fatal("Fresh of a held object is not a copy of it")
	}
	f.SetName("changed")
	if u.GetName() != "s" {
		t.Error("changing Fresh's copy changed the object")
	}
	empty := NewRaw(nil)
	if empty.Object() != nil || empty.Fresh() != nil || empty.Annotations() != nil {
		t.Error("an empty Raw returns an object")
	}
	if _, ok := empty.Header(); ok {
		t.Error("an empty Raw has a header")
	}
	var none *Raw
	if none.Object() != nil || none.Decoded() != nil || none.Fresh() != nil || none.Annotations() != nil {
		t.Error("a nil Raw returns an object")
	}
	if _, ok := none.Header(); ok {
		t.Error("a nil Raw has a header")
	}
}

// TestRawLazy: a lazy Raw decodes once, on the first Object call from any goroutine,
// and answers Header, Annotations and Fresh from its reader until then.
func TestRawLazy(t *testing.T) {
	const doc = "apiVersion: v1\nkind: Service\nmetadata: {name: s, annotations: {a: b}}\n"
	var decodes, freshes atomic.Int32
	l := Lazy{
		Decode: func() *unstructured.Unstructured { decodes.Add(1); return obj(t, doc) },
		Fresh:  func() *unstructured.Unstructured { freshes.Add(1); return obj(t, doc) },
		Header: func() Header { return Header{APIVersion: "v1", Kind: "Service", Name: "recorded"} },
		Annotations: func() map[string]string {
			return map[string]string{"recorded": "yes"}
		},
	}
	r := NewLazyRaw(l)
	if h, _ := r.Header(); h.Name != "recorded" {
		t.Errorf("Header before decoding = %+v, want the recorded one", h)
	}
	if a := r.Annotations(); a["recorded"] != "yes" {
		t.Errorf("Annotations before decoding = %v, want the recorded ones", a)
	}
	if f := r.Fresh(); f == nil || f.GetName() != "s" || freshes.Load() != 1 {
		t.Errorf("Fresh before decoding = %v (%d fresh decodes)", f, freshes.Load())
	}
	if r.Decoded() != nil || decodes.Load() != 0 {
		t.Fatal("the object was decoded before Object was called")
	}
	var wg sync.WaitGroup
	got := make([]*unstructured.Unstructured, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = r.Object() }()
	}
	wg.Wait()
	for _, u := range got {
		if u != got[0] {
			t.Fatal("Object returned two different pointers")
		}
	}
	if decodes.Load() != 1 || r.Decoded() != got[0] {
		t.Errorf("%d decodes, Decoded %p; want 1 and %p", decodes.Load(), r.Decoded(), got[0])
	}
	// Once decoded, the object answers, not the reader's records.
	if h, _ := r.Header(); h.Name != "s" {
		t.Errorf("Header after decoding = %+v, want the object's", h)
	}
	if a := r.Annotations(); a["a"] != "b" {
		t.Errorf("Annotations after decoding = %v, want the object's", a)
	}
	if f := r.Fresh(); f == got[0] || f.GetName() != "s" || freshes.Load() != 1 {
		t.Errorf("Fresh after decoding is not a copy of the object (%d fresh decodes)", freshes.Load())
	}

	plain := LazyRaw(func() *unstructured.Unstructured { return obj(t, doc) })
	if h, ok := plain.Header(); !ok || h.Name != "s" || plain.Decoded() == nil {
		t.Errorf("LazyRaw without records: Header %+v, %v; decoded %v", h, ok, plain.Decoded() != nil)
	}
}

func TestOrigin(t *testing.T) {
	u := obj(t, "apiVersion: v1\nkind: Service\nmetadata: {name: s, annotations: {a: b}}\n")
	raw := NewRaw(u)
	o := NewOrigin(Source{File: "f"}, raw)
	if o.Object() != u || o.Raw() != raw || o.Annotations()["a"] != "b" || o.Fresh().GetName() != "s" {
		t.Error("an Origin does not answer from its Raw")
	}
	if h, ok := o.Header(); !ok || h.Name != "s" {
		t.Errorf("Header = %+v, %v", h, ok)
	}
	var none Origin
	if none.Object() != nil || none.Raw() != nil || none.Annotations() != nil || none.Fresh() != nil {
		t.Error("an empty Origin returns an object")
	}
	if _, ok := none.Header(); ok {
		t.Error("an empty Origin has a header")
	}
}

// positions is a PositionResolver of fixed answers.
type positions map[string][2]int

func (p positions) Position(src Source, path string) (int, int, bool) {
	lc, ok := p[src.File+" "+path]
	return lc[0], lc[1], ok
}

func TestFieldPosition(t *testing.T) {
	s := &Snapshot{Positions: positions{"a.yaml spec.rules[1]": {12, 5}}}
	obj := Source{File: "a.yaml", Line: 3, Column: 1}
	for _, c := range []struct {
		name string
		s    *Snapshot
		src  Source
		path string
		want Source
	}{
		{"a field found", s, obj, "spec.rules[1]", Source{File: "a.yaml", Line: 12, Column: 5}},
		{"a field not found: the object's position", s, obj, "spec.nothere", obj},
		{"no path: the object's position", s, obj, "", obj},
		{"a live object", s, Source{Cluster: "c"}, "spec.rules[1]", Source{Cluster: "c"}},
		{"no resolver", &Snapshot{}, obj, "spec.rules[1]", obj},
		{"no snapshot", nil, obj, "spec.rules[1]", obj},
	} {
		if got := c.s.FieldPosition(c.src, c.path); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestSnapshotLists(t *testing.T) {
	var s Snapshot
	docs := []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: ns1}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: s1, namespace: ns}\n",
		"apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g, namespace: ns}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: s2, namespace: ns}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d2}\n",
	}
	for i, d := range docs {
		if err := s.Add(obj(t, d), Source{File: "f.yaml", Doc: i}); err != nil {
			t.Fatal(err)
		}
	}
	if s.Len() != 4 {
		t.Errorf("Len = %d, want 4", s.Len())
	}
	if got := s.SkippedKinds(); !reflect.DeepEqual(got, []string{"ConfigMap", "Deployment.apps"}) || s.Skipped["Deployment.apps"] != 2 {
		t.Errorf("SkippedKinds = %v (%v)", got, s.Skipped)
	}
	// Kind by kind in the order of the Snapshot's fields, each kind in load order.
	var order []int
	for _, o := range s.Objects() {
		order = append(order, o.Source.Doc)
	}
	if !reflect.DeepEqual(order, []int{2, 1, 3, 0}) {
		t.Errorf("Objects in documents %v, want [2 1 3 0] (gateway, services, namespace)", order)
	}
	s.Warnf("kind %s: %d", "X", 3)
	if len(s.Warnings) != 1 || s.Warnings[0].Message != "kind X: 3" {
		t.Errorf("Warnings = %+v", s.Warnings)
	}
}
