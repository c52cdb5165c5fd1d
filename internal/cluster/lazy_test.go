package cluster

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/snapshot"
)

// readStdin reads data as stdin.
func readStdin(data []byte, lim *Limits) ([]RawObject, *FilePositions, error) {
	return ReadFiles(FileOptions{Filenames: []string{"-"}, Stdin: bytes.NewReader(data), Limits: lim})
}

// sameAsHeld checks that objects read from files and decoded again on demand are what
// holding every object as read gives: the same objects (namespaces defaulted), the same
// identities, the same typed snapshot or Build error, and the same field positions.
// It reports whether the documents holding objects were parsed alone (not as a stream).
func sameAsHeld(t *testing.T, data []byte, lim *Limits) (alone bool) {
	t.Helper()
	// Held: every object decoded before namespaces are defaulted and Build types them,
	// which is how every object used to be handled.
	held, heldPos, err := readStdin(data, lim)
	if err != nil {
		return false
	}
	for _, o := range held {
		o.Object()
	}
	DefaultNamespace(held, "dflt")
	heldSnap, heldErr := Build(held, heldPos, "files")

	lazy, pos, err := readStdin(data, lim)
	if err != nil {
		t.Fatalf("second read failed: %v", err)
	}
	DefaultNamespace(lazy, "dflt")
	for i, o := range lazy {
		if got, want := o.Ref(), snapshot.RefOf(held[i].Object()); got != want {
			t.Errorf("object %d: identity %+v, want %+v", i, got, want)
		}
	}
	lazySnap, lazyErr := Build(lazy, pos, "files")
	if fmt.Sprint(lazyErr) != fmt.Sprint(heldErr) {
		t.Fatalf("Build error %v, want %v", lazyErr, heldErr)
	}
	// Header, Annotations and Fresh answer as the held object does, without leaving the object decoded.
	for i, o := range lazy {
		undecoded := o.r.raw.Decoded() == nil
		h, ok := o.r.raw.Header()
		if want := snapshot.HeaderOf(held[i].Object()); !ok || h != want {
			t.Errorf("object %d: header %+v, want %+v", i, h, want)
		}
		if got, want := o.r.raw.Annotations(), held[i].Object().GetAnnotations(); !reflect.DeepEqual(got, want) {
			t.Errorf("object %d: annotations %v, want %v", i, got, want)
		}
		fresh := o.r.raw.Fresh()
		if want := held[i].Object(); !reflect.DeepEqual(fresh, want) {
			t.Errorf("object %d fresh:\n%v\nwant\n%v", i, fresh, want)
		}
		if _, isDoc := o.r.lazy.(*docRef); undecoded && isDoc && o.r.raw.Decoded() != nil {
			t.Errorf("object %d: decoded by Header, Annotations or Fresh", i)
		}
		if fresh != nil && fresh == o.r.raw.Decoded() {
			t.Errorf("object %d: Fresh returned the object Object holds", i)
		}
	}
	for i, o := range lazy {
		if got, want := o.Object(), held[i].Object(); !reflect.DeepEqual(got, want) {
			t.Errorf("object %d decoded again:\n%v\nwant\n%v", i, got, want)
		}
	}
	if heldErr != nil {
		return false
	}
	sameSnapshot(t, lazySnap, heldSnap)

	// Positions: parsed alone versus the whole stream.
	whole := newFilePositions()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if dec.Decode(&n) != nil {
			break
		}
		whole.whole["<stdin>"] = append(whole.whole["<stdin>"], &n)
	}
	paths := []string{"", "metadata", "metadata.name", "spec", "spec.rules[0]", "spec.rules[1].name", "spec.ports[1].port", "items[0]", "spec.x.y"}
	for _, o := range lazySnap.Objects() {
		for _, p := range paths {
			l1, c1, ok1 := pos.Position(o.Source, p)
			l2, c2, ok2 := whole.Position(o.Source, p)
			if l1 != l2 || c1 != c2 || ok1 != ok2 {
				t.Errorf("%s %q: position %d:%d %v, want %d:%d %v", o.Source, p, l1, c1, ok1, l2, c2, ok2)
			}
		}
	}

	alone = true
	f := pos.files["<stdin>"]
	for _, o := range lazy {
		d := f.docs[o.Source.Doc]
		if o.r.lazy == nil || !d.ok {
			alone = false
			continue
		}
		if _, ok := f.parseAlone(d); !ok {
			alone = false
		}
	}
	return alone
}

// sameSnapshot compares two snapshots: every typed object field by field, its source,
// and its object as read.
func sameSnapshot(t *testing.T, got, want *snapshot.Snapshot) {
	t.Helper()
	gv, wv := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for i := 0; i < gv.NumField(); i++ {
		name := gv.Type().Field(i).Name
		g, w := gv.Field(i), wv.Field(i)
		if name == "Positions" {
			continue
		}
		if g.Kind() != reflect.Slice || g.Type().Elem().Kind() != reflect.Pointer {
			if !reflect.DeepEqual(g.Interface(), w.Interface()) {
				t.Errorf("%s: %v, want %v", name, g.Interface(), w.Interface())
			}
			continue
		}
		if g.Len() != w.Len() {
			t.Errorf("%s: %d objects, want %d", name, g.Len(), w.Len())
			continue
		}
		for j := 0; j < g.Len(); j++ {
			gx, wx := reflect.New(g.Type().Elem().Elem()).Elem(), reflect.New(g.Type().Elem().Elem()).Elem()
			gx.Set(g.Index(j).Elem())
			wx.Set(w.Index(j).Elem())
			go_, wo := gx.FieldByName("Origin").Interface().(snapshot.Origin), wx.FieldByName("Origin").Interface().(snapshot.Origin)
			if go_.Source != wo.Source || !reflect.DeepEqual(go_.Object(), wo.Object()) {
				t.Errorf("%s[%d]: origin %v %v, want %v %v", name, j, go_.Source, go_.Object(), wo.Source, wo.Object())
			}
			gx.FieldByName("Origin").Set(reflect.Zero(gx.FieldByName("Origin").Type()))
			wx.FieldByName("Origin").Set(reflect.Zero(wx.FieldByName("Origin").Type()))
			if !reflect.DeepEqual(gx.Interface(), wx.Interface()) {
				t.Errorf("%s[%d]: typed\n%+v\nwant\n%+v", name, j, gx.Interface(), wx.Interface())
			}
		}
	}
}

func TestDecodedAgainIsAsRead(t *testing.T) {
	policy := func(name string) string {
		return "apiVersion: agentic.prototype.x-k8s.io/v1alpha1\nkind: XAccessPolicy\nmetadata:\n  name: " + name +
			"\nspec:\n  targetRefs:\n  - group: agentic.prototype.x-k8s.io\n    kind: XBackend\n    name: b\n  rules:\n  - name: r0\n    source:\n      type: ServiceAccount\n      serviceAccount:\n        name: sa\n  - name: r1\n    source:\n      type: ServiceAccount\n      serviceAccount:\n        name: sb\n"
	}
	svc := "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: ns1\n  labels: {a: b}\nspec:\n  ports:\n  - port: 80\n  - port: 443\n"
	tests := []struct {
		name  string
		data  string
		alone bool // every document with objects parses alone
	}{
		{"documents", policy("a") + "---\n" + svc + "---\n" + policy("c"), true},
		{"leading marker and comments", "# head\n---\n" + policy("a") + "# between\n\n---\n# inside\n" + svc, true},
		{"empty and null documents", "---\n---\n" + policy("a") + "---\nnull\n---\n" + svc + "---\n", true},
		{"document end markers", policy("a") + "...\n---\n" + svc + "...\n", true},
		{"indented first document", "  apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n---\n" + svc, true},
		{"flow mapping on the marker line", svc + "--- {apiVersion: v1, kind: Service, metadata: {name: t}}\n--- {apiVersion: v1, kind: Service, metadata: {name: u}}\n", true},
		{"tagged and anchored roots", svc + "--- !!map\napiVersion: v1\nkind: Service\nmetadata: {name: t}\n--- &root\napiVersion: v1\nkind: Service\nmetadata: {name: u}\n", true},
		{"anchors, aliases and merge keys", svc + "---\napiVersion: v1\nkind: Service\nmetadata: &m\n  name: t\n  labels: &l {x: v}\nspec:\n  selector:\n    <<: *l\n    z: w\n", true},
		{"block scalars with markers inside", svc + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: |\n    ---\n    b: 1\n    ...\n", true},
		{"leading byte order mark", "\uFEFF" + svc + "---\n" + policy("a"), true},
		{"JSON", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"j"}}`, true},
		{"crlf", strings.ReplaceAll(policy("a")+"---\n"+svc, "\n", "\r\n"), true},
		{"tabs and unicode", svc + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: \"é\t\"\n  annotations: {ünï: \"ç\"}\n", true},
		{"lists", "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(svc, "\n"), "\n", "\n  ") +
			"\n- apiVersion: v1\n  kind: ServiceAccount\n  metadata: {name: sa}\n---\napiVersion: v1\nkind: ServiceList\nitems: [{apiVersion: v1, kind: Namespace, metadata: {name: nn}}]\n", true},
		{"unknown kinds", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n---\n" + svc, true},
		// Objects held as read, typed by Build.
		{"namespace that is not a string", "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: 5}\n---\n" + svc, false},
		{"object that does not type", svc + "---\napiVersion: v1\nkind: Service\nmetadata: {name: t}\nspec: {ports: [{port: x}]}\n", false},
		// Files whose documents are not parsed alone.
		{"directive", "%YAML 1.1\n---\n" + svc + "---\n" + policy("a"), false},
		{"lone carriage return", svc + "---\napiVersion: v1\rkind: Service\rmetadata: {name: t}\n", false},
		{"next line", svc + "---\napiVersion: v1\nkind: Service\nmetadata: {name: \"t\u0085\"}\n", false},
		{"byte order mark inside", svc + "---\napiVersion: v1\nkind: Service\nmetadata: {name: \"t\uFEFF\"}\n", false},
		// An alias to an anchor of an earlier document (yaml/v3 keeps anchors across
		// documents): parsing it alone fails, and the stream is parsed instead.
		{"alias across documents", "apiVersion: v1\nkind: Service\nmetadata: {name: s, labels: &l {a: b}}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: t, labels: *l}\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := readStdin([]byte(tt.data), nil); err != nil {
				t.Fatalf("input does not read: %v", err)
			}
			if got := sameAsHeld(t, []byte(tt.data), nil); got != tt.alone {
				t.Errorf("parsed alone = %v, want %v", got, tt.alone)
			}
		})
	}
}

// The examples and test manifests, read from their files, decode again as read.
func TestDecodedAgainIsAsReadFiles(t *testing.T) {
	var files []string
	for _, dir := range []string{"testdata", "../../testdata", "../topology/testdata"} {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 10 {
		t.Fatalf("found %d manifest files", len(files))
	}
	read := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := readStdin(data, nil); err != nil {
			continue // files that test errors
		}
		read++
		t.Run(f, func(t *testing.T) { sameAsHeld(t, data, nil) })
	}
	if read < 10 {
		t.Fatalf("only %d files read", read)
	}
}

// Nothing decodes an object again before it is asked for: not defaulting namespaces,
// not writing a snapshot (which decodes each object without keeping it), not Build.
func TestDecodedOnlyWhenAsked(t *testing.T) {
	data := []byte("apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n")
	objs, pos, err := readStdin(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	DefaultNamespace(objs, "ns")
	var out bytes.Buffer
	if err := WriteSnapshot(&out, objs); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "namespace: ns") != 2 {
		t.Errorf("snapshot lacks the defaulted namespaces:\n%s", out.String())
	}
	s, err := Build(objs, pos, "files")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Services) != 2 || s.Services[1].Namespace != "ns" {
		t.Fatalf("typed %d services, want 2 in ns", len(s.Services))
	}
	for i, o := range objs {
		if o.r.lazy == nil || o.r.raw.Decoded() != nil {
			t.Errorf("object %d decoded before it was asked for", i)
		}
	}
	// Building again types the objects again: two snapshots never share a typed object,
	// and they share the object as read.
	s2, err := Build(objs, pos, "files")
	if err != nil {
		t.Fatal(err)
	}
	if s2.Services[0] == s.Services[0] || !reflect.DeepEqual(s2.Services[0].Service, s.Services[0].Service) {
		t.Error("two Builds share a typed object, or type it differently")
	}
	if s2.Services[0].Object() != s.Services[0].Object() {
		t.Error("two Builds hold different objects as read")
	}
}

func TestDecodedAgainConcurrently(t *testing.T) {
	data := []byte("apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n")
	objs, pos, err := readStdin(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	DefaultNamespace(objs, "ns")
	s, err := Build(objs, pos, "files")
	if err != nil {
		t.Fatal(err)
	}
	origin := s.Services[1].Origin
	got := make([]*unstructured.Unstructured, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = origin.Object()
		}()
	}
	wg.Wait()
	for _, u := range got {
		if u != got[0] {
			t.Fatal("callers got different objects")
		}
	}
	if got[0].GetName() != "b" || got[0].GetNamespace() != "ns" {
		t.Errorf("decoded %s/%s, want ns/b", got[0].GetNamespace(), got[0].GetName())
	}
	if objs[1].Object() != got[0] {
		t.Error("the RawObject and the snapshot's Origin hold different objects")
	}
}

// A caller that edits an object before Build sees its edit typed, as when every
// object was held as read.
func TestEditBeforeBuild(t *testing.T) {
	data := []byte("apiVersion: v1\nkind: Service\nmetadata: {name: a}\n")
	objs, _, err := readStdin(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	objs[0].Object().SetLabels(map[string]string{"edited": "yes"})
	DefaultNamespace(objs, "ns")
	s, err := Build(objs, nil, "files")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Services[0]; got.Labels["edited"] != "yes" || got.Namespace != "ns" {
		t.Errorf("typed %s/%s labels %v, want ns/a with the edit", got.Namespace, got.Name, got.Labels)
	}
}
