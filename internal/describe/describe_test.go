package describe

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
)

// objects: Gateway gw/gw (https, http) with an Allow policy; HTTPRoute app/r with /mcp →
// XBackend app/xb (an Allow policy) and /off → Service app/s with weight 0.
const objects = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: gw}
spec:
  gatewayClassName: c
  listeners:
  - {name: https, protocol: HTTPS, port: 443, tls: {mode: Terminate, certificateRefs: [{name: c}]}, allowedRoutes: {namespaces: {from: All}}}
  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: gw}]
  rules:
  - name: mcp
    matches: [{path: {type: PathPrefix, value: /mcp}}]
    backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb}]
  - matches: [{path: {type: PathPrefix, value: /off}}]
    backendRefs: [{name: s, port: 80, weight: 0}]
---
apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: xb, namespace: app}
spec: {mcp: {serviceName: s, port: 80}}
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: app}
spec: {ports: [{port: 80}]}
---
apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: {name: edge, namespace: gw, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  action: Allow
  rules:
  - name: any
    source: {type: ServiceAccount, serviceAccount: {namespace: app, name: agent}}
---
apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: {name: tools, namespace: app, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb}]
  action: Allow
  rules:
  - name: call
    source: {type: ServiceAccount, serviceAccount: {namespace: app, name: agent}}
    authorization: {type: InlineMCP, mcp: {methods: [{name: tools/call}]}}
`

func load(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	f := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(f, []byte(objects), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pathLine is a path in one line: gateway, listener, route, backend and the facts.
func pathLine(p Path) string {
	s := p.Gateway + " " + p.Listener
	if p.Route != "" {
		s += " " + p.Route + "#" + p.RuleName
	}
	if p.BackendKind != "" {
		s += " " + p.BackendKind + " " + p.Backend
	}
	if p.Refused != nil {
		s += " no-backend"
	}
	if p.PlainHTTP {
		s += " plain-http"
	}
	if p.Chain.Backend != nil {
		s += " backend-level"
	}
	return s
}

func TestBuild(t *testing.T) {
	s := load(t)
	tests := []struct {
		kind, ns, name string
		policies       []string
		paths          []string
		note           string // a Note* constant
		err            string
	}{
		{kind: KindGateway, ns: "gw", name: "gw", policies: []string{"gw/edge"},
			paths: []string{
				"gw/gw https app/r#mcp XBackend app/xb backend-level",
				"gw/gw https app/r# no-backend",
				"gw/gw http app/r#mcp XBackend app/xb plain-http backend-level",
				"gw/gw http app/r# no-backend plain-http",
			}},
		{kind: KindXBackend, ns: "app", name: "xb", policies: []string{"app/tools"},
			paths: []string{
				"gw/gw https app/r#mcp XBackend app/xb backend-level",
				"gw/gw http app/r#mcp XBackend app/xb plain-http backend-level",
			}},
		{kind: KindHTTPRoute, ns: "app", name: "r", note: NoteRouteChains,
			paths: []string{
				"gw/gw https app/r#mcp XBackend app/xb backend-level",
				"gw/gw https app/r# no-backend",
				"gw/gw http app/r#mcp XBackend app/xb plain-http backend-level",
				"gw/gw http app/r# no-backend plain-http",
			}},
		{kind: KindGateway, ns: "gw", name: "nope", err: "gateway gw/nope not found"},
		{kind: KindXBackend, ns: "app", name: "nope", err: "xbackend app/nope not found"},
		{kind: "Service", ns: "app", name: "s", err: `cannot describe kind "Service"`},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.name, func(t *testing.T) {
			v, err := Build(model.New(s), effective.Reference(), "cluster.local", tt.kind, tt.ns, tt.name)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var pols []string
			for _, p := range v.Policies {
				pols = append(pols, p.ID)
				if !p.Admission.Effective.Accepted || p.Why != nil {
					t.Errorf("policy %s: admission %+v, not enforced %+v", p.ID, p.Admission.Effective, p.Why)
				}
			}
			if strings.Join(pols, ",") != strings.Join(tt.policies, ",") {
				t.Errorf("policies %v, want %v", pols, tt.policies)
			}
			var paths []string
			for _, p := range v.Paths {
				paths = append(paths, pathLine(p))
			}
			if strings.Join(paths, "\n") != strings.Join(tt.paths, "\n") {
				t.Errorf("paths:\n%s\nwant:\n%s", strings.Join(paths, "\n"), strings.Join(tt.paths, "\n"))
			}
			if tt.note != "" && !slices.ContainsFunc(v.Notes, func(n Note) bool { return n.Why == tt.note }) {
				t.Errorf("notes %+v, want one %s", v.Notes, tt.note)
			}
		})
	}
}

// An object describe does not find comes with suggest's hint.
func TestNotFoundHint(t *testing.T) {
	s := load(t)
	for _, tc := range []struct{ kind, ns, name, want string }{
		{KindGateway, "default", "gw", "gateway default/gw not found; did you mean gw/gw?"},
		{KindXBackend, "app", "r", "xbackend app/r not found; httproute app/r is a route; did you mean agpol describe httproute app/r?"},
		{KindXAccessPolicy, "app", "tool", "xaccesspolicy app/tool not found; did you mean app/tools?"},
		{KindAuthPolicy, "app", "tools", "authpolicy app/tools not found; xaccesspolicy app/tools is an XAccessPolicy; did you mean agpol describe xaccesspolicy app/tools?"},
		{KindHTTPRoute, "x", "nothing", "httproute x/nothing not found"},
	} {
		_, err := List(model.New(s), effective.Reference(), "cluster.local", tc.kind, []string{tc.ns, tc.name}, "")
		if err == nil || err.Error() != tc.want {
			t.Errorf("describe %s %s/%s: %v, want %q", tc.kind, tc.ns, tc.name, err, tc.want)
		}
	}
}
