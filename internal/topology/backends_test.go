package topology

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/snapshot"
)

func TestBackendResolution(t *testing.T) {
	g := loadGraph(t, "backends.yaml")
	gw := GatewayRef("infra", "gw")
	type want struct {
		kind    string
		ref     Ref
		group   string
		weight  int32
		found   bool // XBackend or Service resolved
		problem *BackendProblem
	}
	fails := func(i int, p *BackendProblem) *RuleProblem {
		return &RuleProblem{Why: RuleBackendFails, BackendRef: i, Backend: p}
	}
	route := HTTPRouteRef("app", "backends")
	denied := &BackendProblem{Why: BrokenRefNotPermitted, Ref: ServiceRef("svc-ns", "private"), Route: route}
	wrongFrom := &BackendProblem{Why: BrokenRefNotPermitted, Ref: ServiceRef("svc-other", "hidden"), Route: route}
	missing := &BackendProblem{Why: BrokenServiceNotFound, Ref: ServiceRef("app", "nope")}
	kindOmitted := Ref{Group: "agentic.networking.x-k8s.io", Kind: "Service", Namespace: "app", Name: "external"}
	ghost := &BackendProblem{Why: BrokenXBackendNotFound, Ref: XBackendRef("app", "ghost")}
	brokenSvc := &BackendProblem{Why: BrokenServiceNotFound, Ref: ServiceRef("app", "no-such-svc"), Of: XBackendRef("app", "broken")}
	bucket := Ref{Group: "example.com", Kind: "Bucket", Namespace: "app", Name: "b1"}
	wrongGroup := Ref{Group: "example.com", Kind: "Service", Namespace: "app", Name: "local"}
	unsupported := func(r Ref) *BackendProblem { return &BackendProblem{Why: BrokenKindUnsupported, Ref: r} }
	tests := []struct {
		rule        string
		backends    []want
		ruleProblem *RuleProblem
		redirect    bool
	}{
		{rule: "local", backends: []want{{BackendService, ServiceRef("app", "local"), "", 1, true, nil}}},
		{rule: "core-group", backends: []want{{BackendService, ServiceRef("app", "local"), "core", 1, true, nil}}},
		{rule: "cross-granted", backends: []want{{BackendService, ServiceRef("svc-ns", "shared"), "", 1, true, nil}}},
		{rule: "cross-denied", backends: []want{{BackendService, ServiceRef("svc-ns", "private"), "", 1, true, denied}},
			ruleProblem: fails(0, denied)},
		{rule: "cross-any-name", backends: []want{{BackendService, ServiceRef("svc-open", "anything"), "", 1, true, nil}}},
		{rule: "cross-wrong-from", backends: []want{{BackendService, ServiceRef("svc-other", "hidden"), "", 1, true, wrongFrom}},
			ruleProblem: fails(0, wrongFrom)},
		{rule: "missing-svc", backends: []want{{BackendService, ServiceRef("app", "nope"), "", 1, false, missing}},
			ruleProblem: fails(0, missing)},
		// XBackend: any namespace without a ReferenceGrant, group not checked.
		{rule: "xb-cross", backends: []want{{BackendXBackend, XBackendRef("xb-ns", "remote"), "agentic.networking.x-k8s.io", 1, true, nil}}},
		{rule: "xb-any-group", backends: []want{{BackendXBackend, XBackendRef("xb-ns", "remote"), "example.com", 1, true, nil}}},
		// kind omitted with a non-core group: the API server defaults kind to Service (the
		// HTTPRoute CRD), so the translator sees a Service of another group: unsupported.
		// (Its XBackend path for an empty kind, backend.go:70-80, is never taken.)
		{rule: "xb-kind-omitted", backends: []want{{BackendUnsupported, kindOmitted, "agentic.prototype.x-k8s.io", 1, false,
			unsupported(kindOmitted)}}, ruleProblem: fails(0, unsupported(kindOmitted))},
		{rule: "xb-missing", backends: []want{{BackendXBackend, XBackendRef("app", "ghost"), "agentic.networking.x-k8s.io", 1, false, ghost}},
			ruleProblem: fails(0, ghost)},
		{rule: "xb-broken-service", backends: []want{{BackendXBackend, XBackendRef("app", "broken"), "agentic.networking.x-k8s.io", 1, true,
			brokenSvc}}, ruleProblem: fails(0, brokenSvc)},
		{rule: "unsupported", backends: []want{{BackendUnsupported, bucket, "example.com", 1, false,
			unsupported(bucket)}}, ruleProblem: fails(0, unsupported(bucket))},
		{rule: "service-wrong-group", backends: []want{{BackendUnsupported, wrongGroup, "example.com", 1, false,
			unsupported(wrongGroup)}}, ruleProblem: fails(0, unsupported(wrongGroup))},
		// weight 0 skipped, default 1.
		{rule: "weights", backends: []want{
			{BackendService, ServiceRef("app", "local"), "", 3, true, nil},
			{BackendService, ServiceRef("svc-ns", "shared"), "", 1, true, nil},
		}},
		// a broken backendRef with weight 0 still breaks the rule.
		{rule: "weight0-missing", backends: []want{{BackendService, ServiceRef("app", "local"), "", 1, true, nil}},
			ruleProblem: fails(1, ghost)},
		{rule: "all-zero", ruleProblem: &RuleProblem{Why: RuleNoWeight}},
		{rule: "no-backends", ruleProblem: &RuleProblem{Why: RuleNoWeight}},
		{rule: "redirect", redirect: true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			res, err := g.Route(RouteRequest{Gateway: gw, Host: "b.example.com", Method: "GET", Path: "/" + tt.rule})
			if err != nil {
				t.Fatal(err)
			}
			if res.Route == nil || res.RuleName != tt.rule {
				t.Fatalf("routed to rule %q (%+v)", res.RuleName, res.Miss)
			}
			if res.Redirect != tt.redirect {
				t.Errorf("redirect = %v", res.Redirect)
			}
			if !reflect.DeepEqual(res.RuleProblem, tt.ruleProblem) {
				t.Errorf("rule problem = %+v, want %+v", res.RuleProblem, tt.ruleProblem)
			}
			if len(res.Backends) != len(tt.backends) {
				t.Fatalf("backends = %+v, want %d", res.Backends, len(tt.backends))
			}
			for i, w := range tt.backends {
				b := res.Backends[i]
				if b.Kind != w.kind || b.Ref != w.ref || b.Group != w.group || b.Weight != w.weight {
					t.Errorf("backend %d = %s %#v group %q weight %d, want %s %#v group %q weight %d",
						i, b.Kind, b.Ref, b.Group, b.Weight, w.kind, w.ref, w.group, w.weight)
				}
				found := b.XBackend != nil || b.Service != nil
				if found != w.found {
					t.Errorf("backend %d resolved = %v, want %v", i, found, w.found)
				}
				if b.XBackend != nil && (b.Kind != BackendXBackend || b.XBackend.Name != w.ref.Name || b.XBackend.Namespace != w.ref.Namespace) {
					t.Errorf("backend %d: wrong XBackend %s/%s", i, b.XBackend.Namespace, b.XBackend.Name)
				}
				if b.Service != nil && (b.Kind != BackendService || b.Service.Name != w.ref.Name || b.Service.Namespace != w.ref.Namespace) {
					t.Errorf("backend %d: wrong Service %s/%s", i, b.Service.Namespace, b.Service.Name)
				}
				if !reflect.DeepEqual(b.Problem, w.problem) {
					t.Errorf("backend %d problem = %+v, want %+v", i, b.Problem, w.problem)
				}
			}
		})
	}
}

func TestPathsAndBackendIndex(t *testing.T) {
	g := loadGraph(t, "backends.yaml")
	gw := GatewayRef("infra", "gw")
	var got []string
	for _, p := range g.Paths(gw) {
		s := p.Listener + " " + p.Route.Namespace + "/" + p.Route.Name + " " + p.RuleName + " " + p.Backend.Kind + ":" + p.Backend.Ref.Namespace + "/" + p.Backend.Ref.Name
		if p.RuleProblem != nil {
			s += " 500"
		}
		got = append(got, s)
	}
	want := []string{
		"http app/backends local Service:app/local",
		"http app/backends core-group Service:app/local",
		"http app/backends cross-granted Service:svc-ns/shared",
		"http app/backends cross-denied Service:svc-ns/private 500",
		"http app/backends cross-any-name Service:svc-open/anything",
		"http app/backends cross-wrong-from Service:svc-other/hidden 500",
		"http app/backends missing-svc Service:app/nope 500",
		"http app/backends xb-cross XBackend:xb-ns/remote",
		"http app/backends xb-any-group XBackend:xb-ns/remote",
		"http app/backends xb-kind-omitted Unsupported:app/external 500",
		"http app/backends xb-missing XBackend:app/ghost 500",
		"http app/backends xb-broken-service XBackend:app/broken 500",
		"http app/backends unsupported Unsupported:app/b1 500",
		"http app/backends service-wrong-group Unsupported:app/local 500",
		"http app/backends weights Service:app/local",
		"http app/backends weights Service:svc-ns/shared",
		"http app/backends weight0-missing Service:app/local 500",
		"http app/backends all-zero None:/ 500",
		"http app/backends no-backends None:/ 500",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	tests := []struct {
		xb   Ref
		want []Ref
	}{
		{XBackendRef("xb-ns", "remote"), []Ref{gw}},
		{XBackendRef("app", "external"), nil},     // kind defaulted to Service: unsupported, reaches no XBackend
		{XBackendRef("app", "broken"), []Ref{gw}}, // reached, even though the rule answers 500
		{XBackendRef("app", "ghost"), nil},
		{Ref{Group: "agentic.prototype.x-k8s.io", Kind: "XBackend", Namespace: "xb-ns", Name: "remote"}, []Ref{gw}},
		{Ref{Kind: "Service", Namespace: "xb-ns", Name: "remote"}, nil},
	}
	for _, tt := range tests {
		if got := g.GatewaysOfBackend(tt.xb); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("GatewaysOfBackend(%v) = %v, want %v", tt.xb, got, tt.want)
		}
	}
	// lookups
	if g.XBackend(XBackendRef("xb-ns", "remote")) == nil || g.Service(ServiceRef("svc-ns", "shared")) == nil ||
		g.HTTPRoute(HTTPRouteRef("app", "backends")) == nil || g.Gateway(gw) == nil {
		t.Error("lookup of an existing object failed")
	}
	if g.XBackend(ServiceRef("svc-ns", "shared")) != nil || g.Service(XBackendRef("xb-ns", "remote")) != nil || g.Gateway(HTTPRouteRef("infra", "gw")) != nil {
		t.Error("lookup across kinds succeeded")
	}
}

// Manifests given as files are a part of a cluster: a backend object they lack is
// assumed to exist (noted), not a 500; a missing ReferenceGrant still refuses.
func TestBackendsAssumedInPartialSnapshot(t *testing.T) {
	g := BuildGraph(loadPartial(t, "backends.yaml"))
	byRule := map[string]BackendTarget{}
	for _, p := range g.Paths(GatewayRef("infra", "gw")) {
		if p.Route != nil && p.Route.Name == "backends" {
			byRule[p.RuleName] = p.Backend
		}
	}
	if b := byRule["xb-missing"]; b.Problem != nil || b.Assumed.Why != AssumedXBackend || b.Assumed.Ref != b.Ref {
		t.Errorf("xb-missing: problem %+v, assumed %+v; want no problem and an assumption", b.Problem, b.Assumed)
	}
	// The input carries Services of namespace app: a Service of app it lacks is missing.
	for _, rule := range []string{"missing-svc", "xb-broken-service"} {
		b, ok := byRule[rule]
		if !ok {
			t.Fatalf("no path for rule %s", rule)
		}
		if b.Assumed.Why != "" || b.Problem == nil || b.Problem.Why != BrokenServiceNotInInput || b.Problem.Ref.Namespace != "app" {
			t.Errorf("%s: problem %+v, assumed %+v; want BackendNotFound", rule, b.Problem, b.Assumed)
		}
	}
	if b := byRule["unsupported"]; b.Problem == nil {
		t.Errorf("unsupported kind must stay a problem in a partial snapshot")
	}
}

// A Service the input lacks is assumed to exist when the input carries no Service of its
// namespace, and is a 500 (BackendNotFound) when it carries others.
func TestMissingService(t *testing.T) {
	backend := func(g *Graph) BackendTarget {
		t.Helper()
		for _, p := range g.Paths(GatewayRef("ms", "gw")) {
			return p.Backend
		}
		t.Fatal("no path")
		return BackendTarget{}
	}
	b := backend(BuildGraph(loadPartial(t, "missing-service.yaml")))
	if b.Problem != nil || b.Assumed != (Assumption{Why: AssumedService, Ref: ServiceRef("ms", "absent")}) {
		t.Errorf("no Services: problem %+v, assumed %+v", b.Problem, b.Assumed)
	}
	b = backend(BuildGraph(loadPartial(t, "missing-service.yaml", "missing-service-other.yaml")))
	if want := (BackendProblem{Why: BrokenServiceNotInInput, Ref: ServiceRef("ms", "absent")}); b.Assumed.Why != "" || b.Problem == nil || *b.Problem != want {
		t.Errorf("other Services: problem %+v, assumed %+v", b.Problem, b.Assumed)
	}
	b = backend(BuildGraph(load(t, "missing-service.yaml")))
	if want := (BackendProblem{Why: BrokenServiceNotFound, Ref: ServiceRef("ms", "absent")}); b.Assumed.Why != "" || b.Problem == nil || *b.Problem != want {
		t.Errorf("complete: problem %+v, assumed %+v", b.Problem, b.Assumed)
	}
}

// A live read refused the Services of a namespace: a Service of that namespace the
// snapshot lacks is assumed to exist, and Assumed says the read was refused; a refusal
// of other namespaces leaves the 500 of a namespace whose Services were read.
func TestMissingServiceReadRefused(t *testing.T) {
	refused := func(ns string, nss ...string) snapshot.Warning {
		return snapshot.Warning{Kind: ServicesResource, Namespace: ns, Namespaces: nss, Message: "cannot list services: forbidden"}
	}
	assumed := Assumption{Why: AssumedServiceRefused, Ref: ServiceRef("ms", "absent")}
	for _, c := range []struct {
		name        string
		other       bool // the snapshot holds another Service of namespace ms
		warning     snapshot.Warning
		wantAssumed Assumption
		wantProblem string // Problem.Why
	}{
		{"refused everywhere", false, refused(""), assumed, ""},
		{"refused in ms", false, refused("ms"), assumed, ""},
		{"refused namespace by namespace, ms among them", true, refused("", "a", "ms"), assumed, ""},
		{"refused in another namespace, ms read", true, refused("", "a"), Assumption{}, BrokenServiceNotInInput},
		{"refused in another namespace", true, refused("a"), Assumption{}, BrokenServiceNotInInput},
		{"another kind refused", true, snapshot.Warning{Kind: "xbackends.agentic.networking.x-k8s.io", Message: "forbidden"}, Assumption{}, BrokenServiceNotInInput},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := []string{"missing-service.yaml"}
			if c.other {
				files = append(files, "missing-service-other.yaml")
			}
			s := loadPartial(t, files...)
			s.Partial, s.Warnings = true, []snapshot.Warning{c.warning}
			g := BuildGraph(s)
			var b BackendTarget
			for _, p := range g.Paths(GatewayRef("ms", "gw")) {
				b = p.Backend
			}
			why := ""
			if b.Problem != nil {
				why = b.Problem.Why
			}
			if b.Assumed != c.wantAssumed || why != c.wantProblem {
				t.Errorf("problem %+v, assumed %+v; want problem %q, assumed %+v", b.Problem, b.Assumed, c.wantProblem, c.wantAssumed)
			}
			// A request naming the Service makes the same assumption.
			if got := g.AssumedBackend(ServiceRef("ms", "absent")); got != c.wantAssumed {
				t.Errorf("AssumedBackend = %+v, want %+v", got, c.wantAssumed)
			}
		})
	}
}
