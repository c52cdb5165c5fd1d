package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/agpol/agpol/internal/snapshot"
)

// TestLoadNeeds: a load with Needs types every object as written, then admits the
// objects Needs names (a document read lazily, one held as read, a List's item) as a
// load admitting every object does: the same typed objects and dropped fields, in input
// order. The others stay as written, counted in Unadmitted. A nil answer admits all.
func TestLoadNeeds(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.yaml": admitPolicy + "---\n" + fmt.Sprintf(admitRoute, "lazy"),
		"b.yaml": "%YAML 1.1\n---\n" + fmt.Sprintf(admitRoute, "held"),
		"c.yaml": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: gateway.networking.k8s.io/v1\n  kind: HTTPRoute\n" +
			"  metadata: {name: listed, namespace: ns}\n  spec: {bogus: 1, parentRefs: [{name: gw}]}\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	load := func(needs func(*snapshot.Snapshot) func(snapshot.Ref) bool) *snapshot.Snapshot {
		t.Helper()
		res, err := Load(context.Background(), LoadOptions{Files: []string{dir}, DefaultNamespace: "ns", Needs: needs})
		if err != nil {
			t.Fatal(err)
		}
		return res.Snapshot
	}
	full := load(nil)
	names := func(names ...string) func(*snapshot.Snapshot) func(snapshot.Ref) bool {
		return func(*snapshot.Snapshot) func(snapshot.Ref) bool {
			return func(r snapshot.Ref) bool { return slices.Contains(names, r.Name) }
		}
	}
	for _, tc := range []struct {
		name       string
		needs      func(*snapshot.Snapshot) func(snapshot.Ref) bool
		admitted   []string
		unadmitted int
	}{
		{"some", names("p", "held", "listed"), []string{"p", "held", "listed"}, 1},
		{"none", names(), nil, 4},
		{"every one", func(*snapshot.Snapshot) func(snapshot.Ref) bool { return nil }, []string{"p", "lazy", "held", "listed"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := load(tc.needs)
			if s.Unadmitted != tc.unadmitted || s.UnadmittedUnread != (tc.unadmitted > 0) {
				t.Errorf("Unadmitted %d (unread %v), want %d", s.Unadmitted, s.UnadmittedUnread, tc.unadmitted)
			}
			var want []snapshot.DroppedField
			for _, d := range full.Dropped {
				if slices.Contains(tc.admitted, d.Name) {
					want = append(want, d)
				}
			}
			if !reflect.DeepEqual(s.Dropped, want) {
				t.Errorf("dropped %+v, want %+v", s.Dropped, want)
			}
			if len(s.HTTPRoutes) != 3 || len(s.XAccessPolicies) != 1 {
				t.Fatalf("%d routes, %d policies: want every object typed", len(s.HTTPRoutes), len(s.XAccessPolicies))
			}
			for i, r := range s.HTTPRoutes {
				admitted := slices.Contains(tc.admitted, r.Name)
				if same := reflect.DeepEqual(r.HTTPRoute, full.HTTPRoutes[i].HTTPRoute); same != admitted {
					t.Errorf("route %s: as a full load admits it %v, want %v", r.Name, same, admitted)
				}
				if r.Origin.Source != full.HTTPRoutes[i].Origin.Source {
					t.Errorf("route %s: source %v, want %v", r.Name, r.Origin.Source, full.HTTPRoutes[i].Origin.Source)
				}
			}
		})
	}
}

// TestLoadNeedsTypesAsAFullLoad: an object that does not type as written (a field of the
// wrong type) but types once admitted (the API server prunes the field, not in its CRD)
// is admitted whatever Needs names, as a load admitting every object reads it.
func TestLoadNeedsTypesAsAFullLoad(t *testing.T) {
	dir := t.TempDir()
	route := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: ns}\n" +
		"spec:\n  parentRefs: [{name: gw}]\n  rules:\n  - sessionPersistence: 5\n"
	if err := os.WriteFile(filepath.Join(dir, "r.yaml"), []byte(route), 0o644); err != nil {
		t.Fatal(err)
	}
	none := func(*snapshot.Snapshot) func(snapshot.Ref) bool { return func(snapshot.Ref) bool { return false } }
	res, err := Load(context.Background(), LoadOptions{Files: []string{dir}, DefaultNamespace: "ns", Needs: none})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Snapshot
	if len(s.HTTPRoutes) != 1 || s.Unadmitted != 0 || len(s.DroppedFields()) != 1 {
		t.Fatalf("%d routes, %d unadmitted, dropped %+v: want the route admitted, its field dropped", len(s.HTTPRoutes), s.Unadmitted, s.DroppedFields())
	}
}
