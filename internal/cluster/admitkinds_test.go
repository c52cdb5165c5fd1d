package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agpol/agpol/internal/apis/agentic"
)

const admitRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: %s
  namespace: ns
spec:
  bogus: 1
  parentRefs:
  - name: gw
`

const admitPolicy = `apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata:
  name: p
  namespace: ns
spec:
  bogus: 1
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: Gateway
    name: gw
  action: Allow
  rules:
  - name: r
    authorization:
      type: Inline
      mcp:
        mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS
`

// TestAdmitKinds: a load that admits only XAccessPolicies prunes and defaults them as
// every load does, and types the objects of other kinds as written, whether typed at
// reading (a file read lazily) or held as read (a file with a directive): their unknown
// fields are not listed as dropped, their defaults are not set, and they are counted in
// Unadmitted. Without Admit every object is admitted.
func TestAdmitKinds(t *testing.T) {
	dir := t.TempDir()
	lazy := admitPolicy + "---\n" + fmt.Sprintf(admitRoute, "lazy")
	held := "%YAML 1.1\n---\n" + fmt.Sprintf(admitRoute, "held")
	for name, data := range map[string]string{"a.yaml": lazy, "b.yaml": held} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name       string
		admit      AdmitKinds
		dropped    []string
		unadmitted int
		defaulted  bool
	}{
		{"every kind", nil, []string{"HTTPRoute held spec.bogus", "HTTPRoute lazy spec.bogus", "XAccessPolicy p spec.bogus"}, 0, true},
		{"XAccessPolicy only", AdmitKinds{schema.GroupKind{Group: agentic.GroupName, Kind: agentic.KindXAccessPolicy}: true},
			[]string{"XAccessPolicy p spec.bogus"}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Load(context.Background(), LoadOptions{Files: []string{dir}, DefaultNamespace: "ns", Admit: tc.admit})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Snapshot
			var got []string
			for _, d := range s.DroppedFields() {
				got = append(got, d.Kind+" "+d.Name+" "+d.Path)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.dropped) {
				t.Errorf("dropped %q, want %q", got, tc.dropped)
			}
			if s.Unadmitted != tc.unadmitted {
				t.Errorf("Unadmitted %d, want %d", s.Unadmitted, tc.unadmitted)
			}
			if len(s.HTTPRoutes) != 2 || len(s.XAccessPolicies) != 1 {
				t.Fatalf("%d routes, %d policies: want every object typed", len(s.HTTPRoutes), len(s.XAccessPolicies))
			}
			for _, r := range s.HTTPRoutes {
				// The CRD defaults a parentRef's group.
				if got := r.Spec.ParentRefs[0].Group != nil; got != tc.defaulted {
					t.Errorf("route %s: parentRef group defaulted %v, want %v", r.Name, got, tc.defaulted)
				}
			}
		})
	}
}
