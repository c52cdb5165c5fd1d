package whatif

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
)

func load(t testing.TB, files ...string) *snapshot.Snapshot {
	t.Helper()
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: files})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func allPresets(t testing.TB) []effective.Semantics {
	sems, err := effective.ParsePresets("all")
	if err != nil {
		t.Fatal(err)
	}
	return sems
}

// checkedSemantics are every preset and the API documentation's reading (L7 fields and
// sectionName enforced), which no preset has: under it the listener's port matters.
func checkedSemantics(t testing.TB) []effective.Semantics {
	apiDoc := effective.Reference()
	apiDoc.Name = "api-doc"
	apiDoc.L7Fields, apiDoc.SectionName = effective.Enforced, effective.Enforced
	return append(allPresets(t), apiDoc)
}

// checkAgainstExplain decides every point of the space of s with the engine (classes of
// callers, cached outcomes, explain.Query.Decide) and with explain.Simulator.Explain for the
// identity itself, and fails on any difference.
func checkAgainstExplain(t *testing.T, s *snapshot.Snapshot, ext explain.ExtAuth) int {
	t.Helper()
	e := New(model.New(s), checkedSemantics(t), Options{ExtAuth: ext})
	n := 0
	for _, tg := range e.Targets {
		for _, id := range e.Identities {
			for _, op := range tg.Ops {
				got := e.Decide(tg, id, op)
				res, err := e.Simulator().Explain(explain.Full, e.Request(tg, id.Caller, op))
				if err != nil {
					t.Fatalf("%s %s %s: %v", tg.Label(), id.ID, op.Label(), err)
				}
				if len(res) != len(got.Cells) {
					t.Fatalf("%s: %d results, %d cells", tg.Label(), len(res), len(got.Cells))
				}
				for k, r := range res {
					c := got.Cells[k]
					if want := cellOf(r.Decision); fmt.Sprint(c) != fmt.Sprint(want) {
						t.Errorf("%s | %s | %s | %s:\n got  %+v\n want %+v", tg.Label(), id.ID, op.Label(), r.Semantics, c, want)
					}
					n++
				}
			}
		}
	}
	return n
}

// TestEngineMatchesExplain: the engine decides every point exactly as Explain decides
// that identity's request, on the examples and every simulate scenario, under every
// preset and authorizer answer.
func TestEngineMatchesExplain(t *testing.T) {
	dirs := []string{"../../testdata/examples"}
	m, _ := filepath.Glob("../../testdata/simulate/*/manifests.yaml")
	dirs = append(dirs, m...)
	for _, d := range dirs {
		for _, ext := range []explain.ExtAuth{{}, {Gateway: explain.AnswerAllow, Backend: explain.AnswerDeny}, {Gateway: explain.AnswerDeny, Backend: explain.AnswerAllow}} {
			t.Run(filepath.Base(filepath.Dir(d))+"/"+filepath.Base(d)+"/"+ext.String(), func(t *testing.T) {
				n := checkAgainstExplain(t, load(t, d), ext)
				t.Logf("%d decisions compared", n)
				if n == 0 {
					t.Fatal("no decision compared")
				}
			})
		}
	}
}

// randomTopology builds a gateway (https and http listeners) routing to two XBackends
// and a Service, with random policies on the gateway and both backends: Allow,
// ExternalAuth (two authorizer configs, so levels sometimes share one) and v0alpha0,
// rule names from a small pool (collisions), every source shape, and every
// authorization shape (none, Inline methods and params, base methods, CEL, empty, L7
// fields that the listener's port, the request's method and path decide).
func randomTopology(seed int64) string {
	r := rand.New(rand.NewSource(seed))
	pick := func(l ...string) string { return l[r.Intn(len(l))] }
	var b strings.Builder
	b.WriteString(`apiVersion: gateway.networking.k8s.io/v1
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
  - matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: xa}]
  - matches: [{path: {type: PathPrefix, value: /b}}]
    backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb}]
  - matches: [{path: {type: PathPrefix, value: /s}}]
    backendRefs: [{name: svc, port: 80}]
---
apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: xa, namespace: app}
spec: {mcp: {serviceName: svc, port: 80}}
---
apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: xb, namespace: app}
spec: {mcp: {serviceName: svc, port: 80}}
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: app}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: a, namespace: app}
`)
	source := func() string {
		return pick("", "", "    source: {type: ServiceAccount, serviceAccount: {name: a}}\n",
			"    source: {type: ServiceAccount, serviceAccount: {namespace: app, name: b}}\n",
			"    source: {type: SPIFFE, spiffe: spiffe://cluster.local/ns/app/sa/c}\n",
			"    source: {type: SPIFFE, spiffe: spiffe://other.example/w}\n",
			"    source: {type: SPIFFE}\n")
	}
	auth := func() string {
		return pick("",
			"    authorization: {type: Inline, mcp: {methods: [{name: tools/call, params: [t1, t2]}]}}\n",
			"    authorization: {type: Inline, mcp: {methods: [{name: tools}]}}\n",
			"    authorization: {type: Inline, mcp: {methods: [{name: tools/call, params: [t2]}], mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS}}\n",
			"    authorization: {type: Inline, mcp: {mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS}}\n",
			"    authorization: {type: Inline}\n",
			"    authorization: {type: CEL, cel: {expression: \"request.mcp.tool_name in ['t1', 't3']\"}}\n",
			"    authorization: {type: CEL, cel: {expression: \"request.mcp.tool_name.startsWith('t')\"}}\n",
			"    authorization: {type: Inline, mcp: {methods: [{name: tools}]}, ports: [443]}\n",
			"    authorization: {type: Inline, mcp: {mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS}, methods: [POST], paths: [{type: PathPrefix, value: /mcp}]}\n",
			"    authorization: {type: Inline, methods: [GET]}\n")
	}
	targets := []struct{ ns, ref string }{
		{"gw", "{group: gateway.networking.k8s.io, kind: Gateway, name: gw}"},
		{"app", "{group: agentic.networking.x-k8s.io, kind: XBackend, name: xa}"},
		{"app", "{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb}"},
	}
	n := 2 + r.Intn(6)
	for i := 0; i < n; i++ {
		t := targets[r.Intn(len(targets))]
		created := fmt.Sprintf("2026-01-0%dT00:00:00Z", 1+r.Intn(3))
		kind := r.Intn(6)
		if kind == 5 { // v0alpha0
			fmt.Fprintf(&b, "---\napiVersion: agentic.networking.x-k8s.io/v0alpha0\nkind: XAccessPolicy\nmetadata: {name: p%d, namespace: %s, creationTimestamp: %q}\nspec:\n  targetRefs: [%s]\n  rules:\n", i, t.ns, created, t.ref)
			for j := 0; j < 1+r.Intn(2); j++ {
				fmt.Fprintf(&b, "  - name: %s\n    source: {type: ServiceAccount, serviceAccount: {name: %s}}\n", pick("r1", "r2", "r3"), pick("a", "b"))
				b.WriteString(pick("    authorization: {type: InlineTools, tools: [t1]}\n", "    authorization: {type: InlineTools}\n",
					"    authorization: {type: ExternalAuth, externalAuth: {protocol: HTTP, backendRef: {name: authz, port: 80}}}\n", ""))
			}
			continue
		}
		action := "Allow"
		ext := ""
		if kind == 4 {
			action = "ExternalAuth"
			ext = fmt.Sprintf("  externalAuth: {protocol: GRPC, backendRef: {name: authz-%s, port: 9000}, grpc: {}}\n", pick("a", "b"))
		}
		fmt.Fprintf(&b, "---\napiVersion: agentic.networking.x-k8s.io/v1alpha1\nkind: XAccessPolicy\nmetadata: {name: p%d, namespace: %s, creationTimestamp: %q}\nspec:\n  targetRefs: [%s]\n  action: %s\n%s", i, t.ns, created, t.ref, action, ext)
		nr := r.Intn(4)
		if nr == 0 {
			continue
		}
		b.WriteString("  rules:\n")
		used := map[string]bool{}
		for j := 0; j < nr; j++ {
			name := pick("r1", "r2", "r3", "r4")
			if used[name] {
				continue
			}
			used[name] = true
			fmt.Fprintf(&b, "  - name: %s\n%s%s", name, source(), auth())
		}
	}
	return b.String()
}

// TestEngineMatchesExplainRandom compares the engine with Explain on random topologies.
func TestEngineMatchesExplainRandom(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 15
	}
	total := 0
	for seed := int64(1); seed <= int64(n); seed++ {
		s := loadYAML(t, randomTopology(seed))
		for _, ext := range []explain.ExtAuth{{}, {Gateway: explain.AnswerAllow}, {Backend: explain.AnswerDeny, Gateway: explain.AnswerAllow}} {
			total += checkAgainstExplain(t, s, ext)
		}
		if t.Failed() {
			t.Fatalf("seed %d:\n%s", seed, randomTopology(seed))
		}
	}
	t.Logf("%d decisions compared", total)
}
