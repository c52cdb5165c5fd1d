package render

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/topology"
)

// Each routing outcome's sentence, from topology's codes and names.
func TestRoutingWhySentences(t *testing.T) {
	gw := topology.GatewayRef("infra", "gw")
	route := topology.HTTPRouteRef("app", "r")
	kindFoo := topology.Ref{Group: "example.com", Kind: "Foo", Namespace: "app", Name: "f"}
	ghost := &topology.BackendProblem{Why: topology.BrokenXBackendNotFound, Ref: topology.XBackendRef("app", "ghost")}
	for _, c := range []struct{ got, want string }{
		{RouteMissText(&topology.RouteMiss{Why: topology.MissNoListener, Gateway: gw, Host: "a.example.com"}),
			`no listener of Gateway infra/gw accepts host "a.example.com"`},
		{RouteMissText(&topology.RouteMiss{Why: topology.MissNoListener, Gateway: gw, Port: 80, Host: "a.example.com", PlainHTTPPort: 80}),
			`no listener of Gateway infra/gw on port 80 accepts host "a.example.com" (port 80 is plain HTTP: its single filter chain still accepts the request, gateway-level policies run, then 404)`},
		{RouteMissText(&topology.RouteMiss{Why: topology.MissListenerNotProgrammed, Gateway: gw, Listener: "one", NotProgrammed: &topology.NotProgrammed{Why: topology.NotProgrammedProtocol, Protocol: "TCP"}}),
			"listener one of Gateway infra/gw carries no routes: listener protocol TCP carries no HTTPRoutes"},
		{RouteMissText(&topology.RouteMiss{Why: topology.MissListenerPort, Gateway: gw, Listener: "one", ListenerPort: 80, Port: 8080}),
			"listener one of Gateway infra/gw is on port 80, not 8080"},
		{RouteMissText(&topology.RouteMiss{Why: topology.MissListenerHost, Gateway: gw, Listener: "one", ListenerHost: "api.example.com", Host: "b.example.com"}),
			`listener one of Gateway infra/gw (hostname api.example.com) does not accept host "b.example.com"`},
		{RouteMissText(&topology.RouteMiss{Why: topology.MissNoListenerNamed, Gateway: gw, Listener: "nope"}),
			"Gateway infra/gw has no listener named nope"},
		{RouteMissText(&topology.RouteMiss{Why: topology.MissNoHost, Gateway: gw, Port: 80, Host: "b.example.com"}),
			`no route attached to Gateway infra/gw on port 80 serves host "b.example.com" (404)`},
		{RouteMissText(&topology.RouteMiss{Why: topology.MissNoHostIsolated, Gateway: gw, Listener: "http", Host: "b.example.com"}),
			`no route attached to listener http of Gateway infra/gw serves host "b.example.com" (listeners are isolated: the most specific listener takes the request) (404)`},
		{RouteMissText(&topology.RouteMiss{Why: topology.MissNoRule, Gateway: gw, Routes: []string{"app/a", "app/b"}, VirtualHost: "*", Method: "POST", Path: "/x?y=1"}),
			"no rule of HTTPRoute app/a, app/b (host *) matches POST /x?y=1 (404)"},
		{BackendProblemText(&topology.BackendProblem{Why: topology.BrokenRefNotPermitted, Ref: topology.ServiceRef("svc", "s"), Route: route}),
			"cross-namespace reference from HTTPRoute app/r to Service svc/s is not permitted by a ReferenceGrant in namespace svc (RefNotPermitted)"},
		{BackendProblemText(ghost), "XBackend app/ghost not found (BackendNotFound)"},
		{BackendProblemText(&topology.BackendProblem{Why: topology.BrokenServiceNotFound, Ref: topology.ServiceRef("app", "s")}),
			"Service app/s not found (BackendNotFound)"},
		{BackendProblemText(&topology.BackendProblem{Why: topology.BrokenServiceNotFound, Ref: topology.ServiceRef("app", "s"), Of: topology.XBackendRef("app", "x")}),
			"Service app/s of XBackend app/x not found (BackendNotFound)"},
		{BackendProblemText(&topology.BackendProblem{Why: topology.BrokenServiceNotInInput, Ref: topology.ServiceRef("app", "s"), Of: topology.XBackendRef("app", "x")}),
			"Service app/s of XBackend app/x not found: the input carries the Services of namespace app, not this one (BackendNotFound)"},
		{BackendProblemText(&topology.BackendProblem{Why: topology.BrokenXBackendKind, Ref: topology.XBackendRef("app", "x"), DataPlane: topology.DataPlaneIstio}),
			"unsupported backend kind XBackend on a Gateway of the istio data plane: only kube-agentic-networking serves XBackends (InvalidKind)"},
		{BackendProblemText(&topology.BackendProblem{Why: topology.BrokenKindUnsupported, Ref: kindFoo}), "unsupported backend kind Foo (InvalidKind)"},
		{RuleProblemText(&topology.RuleProblem{Why: topology.RuleBackendFails, BackendRef: 1, Backend: ghost}),
			"route rule answers 500: backendRefs[1]: XBackend app/ghost not found (BackendNotFound)"},
		{RuleProblemText(&topology.RuleProblem{Why: topology.RuleNoWeight}), "route rule answers 500: no backendRef with a weight above 0"},
		{NoBackendProblem(&topology.NoBackend{Why: topology.NoBackendRef, Backend: ghost}), "XBackend app/ghost not found (BackendNotFound)"},
		{NoBackendProblem(&topology.NoBackend{Why: topology.NoBackendRedirect}), ""},
		{NoBackendProblem(&topology.NoBackend{Why: topology.NoBackendNoRoute}), ""},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}

// Every code topology gives a routing outcome (the constants of routingwhy.go and
// nobackend.go) has a sentence in render: a new code without one fails here.
func TestRoutingWhyCodesHaveSentences(t *testing.T) {
	codes := topologyConsts(t, "../topology/routingwhy.go", "../topology/nobackend.go")
	if len(codes) < 20 {
		t.Fatalf("found %d codes in topology, want the Miss*, Broken*, Rule* and NoBackend* constants", len(codes))
	}
	for name, why := range codes {
		var text, fallback string
		switch {
		case strings.HasPrefix(name, "Miss"):
			text, fallback = RouteMissText(&topology.RouteMiss{Why: why}), why
		case strings.HasPrefix(name, "Broken"):
			text, fallback = BackendProblemText(&topology.BackendProblem{Why: why}), why
		case strings.HasPrefix(name, "Rule"):
			text, fallback = RuleProblemText(&topology.RuleProblem{Why: why}), "route rule answers 500: "+why
		case strings.HasPrefix(name, "NoBackend"):
			nb := &topology.NoBackend{Why: why, Rule: &topology.RuleProblem{Why: topology.RuleNoWeight},
				Backend: &topology.BackendProblem{Why: topology.BrokenXBackendNotFound}}
			text, fallback = NoBackendSentence(nb), why
		default:
			t.Errorf("constant %s (%q): not of a family render knows; give it a sentence and a case here", name, why)
			continue
		}
		if text == fallback || text == "" {
			t.Errorf("%s (%q) has no sentence in render: %q", name, why, text)
		}
	}
}

// topologyConsts is the string constants declared in files, by name.
func topologyConsts(t *testing.T, files ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: constant %s is not a string literal", file, n.Name)
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[n.Name] = v
				}
			}
		}
	}
	return out
}
