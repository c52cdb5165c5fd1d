package explain

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
)

// baseTopology: Gateway gw/gw (https 443, http 80), HTTPRoute app/r with /mcp → XBackend
// app/xb and /svc → Service app/svc, /split → xb (weight 1) and xb2 (weight 1).
const baseTopology = `
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
  - matches: [{path: {type: PathPrefix, value: /mcp}}]
    backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb}]
  - matches: [{path: {type: PathPrefix, value: /svc}}]
    backendRefs: [{name: svc, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /split}}]
    backendRefs:
    - {group: agentic.networking.x-k8s.io, kind: XBackend, name: xb, weight: 1}
    - {group: agentic.networking.x-k8s.io, kind: XBackend, name: xb2, weight: 1}
` + baseBackends

// baseBackends: XBackends app/xb and app/xb2 (MCP on Service app/s), Services app/svc and app/s.
const baseBackends = `---
apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: xb, namespace: app}
spec: {mcp: {serviceName: s, port: 80}}
---
apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: xb2, namespace: app}
spec: {mcp: {serviceName: s, port: 80}}
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: app}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: app}
spec: {ports: [{port: 80}]}
`

// policy renders an XAccessPolicy; target is "gw" (Gateway gw/gw) or "xb"/"xb2" (XBackend in app).
func policy(name, target, action, created, body string) string {
	ns, ref := "gw", "{group: gateway.networking.k8s.io, kind: Gateway, name: gw}"
	if target != "gw" {
		ns, ref = "app", "{group: agentic.networking.x-k8s.io, kind: XBackend, name: "+target+"}"
	}
	if created == "" {
		created = "2026-01-01T00:00:00Z"
	}
	s := fmt.Sprintf(`
---
apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: {name: %s, namespace: %s, creationTimestamp: "%s"}
spec:
  targetRefs: [%s]
`, name, ns, created, ref)
	if action != "" {
		s += "  action: " + action + "\n"
	}
	if action == "ExternalAuth" {
		s += "  externalAuth: {protocol: GRPC, backendRef: {name: authz-" + name + ", port: 9000}, grpc: {}}\n"
	}
	return s + indent(body, "  ")
}

func indent(s, pre string) string {
	s = strings.Trim(s, "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func loadYAML(t testing.TB, docs ...string) *snapshot.Snapshot {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "in.yaml")
	if err := os.WriteFile(f, []byte(strings.Join(docs, "\n---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{f}})
	if err != nil {
		t.Fatalf("loading: %v", err)
	}
	return s
}

func sem(t *testing.T, name string) effective.Semantics {
	t.Helper()
	s, err := effective.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sa(name string) Caller {
	return Caller{Kind: CallerServiceAccount, Namespace: "agents", Name: name}
}

// call is a tools/call of tool from sa:agents/<who> straight to XBackend app/xb.
func call(who, tool string) *Request {
	r := &Request{Name: "t", From: sa(who), Gateway: &NamespacedName{"gw", "gw"}, Listener: "https",
		Backend: &NamespacedName{"app", "xb"}, MCP: &MCP{Method: "tools/call", Tool: tool}}
	if who == "" {
		// Without a client certificate the caller fails the HTTPS listener's handshake
		// (TestHandshake): it reaches the policies over plain HTTP.
		r.From, r.Listener = Caller{Kind: CallerAnonymous}, "http"
	}
	return r
}

func mcpReq(who, method string) *Request {
	r := call(who, "")
	r.MCP.Method = method
	return r
}

func httpReq(who, method string, headers map[string]string) *Request {
	r := call(who, "")
	r.MCP = nil
	r.HTTP.Method, r.HTTP.Headers = method, headers
	return r
}

type want struct{ decision, level, by string }

func decideOne(t *testing.T, s *snapshot.Snapshot, se effective.Semantics, r *Request) *Result {
	t.Helper()
	res, err := New(model.New(s), []effective.Semantics{se}, "cluster.local").Explain(Full, r)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	if len(res) != 1 {
		t.Fatalf("want one result, got %d", len(res))
	}
	return res[0]
}

func check3(t *testing.T, got *Result, w want) {
	t.Helper()
	if got.Verdict != w.decision || got.Level != w.level || got.DecidedBy != w.by {
		var tr []string
		for _, s := range got.Trace {
			tr = append(tr, fmt.Sprintf("%+v", s))
		}
		t.Errorf("got %s/%s/%s, want %s/%s/%s (%s)\n%s", got.Verdict, got.Level, got.DecidedBy, w.decision, w.level, w.by,
			got.Reason, strings.Join(tr, "\n"))
	}
}
