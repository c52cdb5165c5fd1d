package effective

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/topology"
)

// Enforcement: what the data plane does with each policy, target by target.
func TestEnforcement(t *testing.T) {
	gw := func(name, class string) string {
		return fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %s, namespace: a}\nspec:\n  gatewayClassName: %s\n  listeners: [{name: http, protocol: HTTP, port: 80}]\n", name, class)
	}
	class := func(name, ctrl string) string {
		return fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: %s}\nspec: {controllerName: %s}\n", name, ctrl)
	}
	xb := func(name string) string {
		return fmt.Sprintf("apiVersion: agentic.networking.x-k8s.io/v0alpha0\nkind: XBackend\nmetadata: {name: %s, namespace: a}\nspec: {mcp: {serviceName: s, port: 80}}\n", name)
	}
	route := func(name, gateway, backend string) string {
		return fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s, namespace: a}\nspec:\n  parentRefs: [{name: %s}]\n  rules: [{backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: %s}]}]\n", name, gateway, backend)
	}
	rejected := "status:\n  ancestors:\n  - ancestorRef: {name: agw}\n    controllerName: c\n    conditions:\n    - {type: Accepted, status: \"False\", reason: LimitPerTargetExceeded, message: too many, lastTransitionTime: \"2026-01-01T00:00:00Z\"}\n"
	legacy := "apiVersion: agentic.networking.x-k8s.io/v0alpha0\nkind: XAccessPolicy\nmetadata: {name: old, namespace: a}\n" +
		"spec:\n  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: agw}]\n  rules:\n  - name: r\n    source: {type: ServiceAccount, serviceAccount: {name: x}}\n"
	noAction := strings.Replace(pol("noaction", day(1), "Allow", []string{"Gateway/agw"}, ""), "  action: Allow\n", "", 1)
	base := []string{
		class("agentic", "sigs.k8s.io/kube-agentic-networking-controller"), class("istio", "istio.io/gateway-controller"),
		gw("agw", "agentic"), gw("igw", "istio"), xb("routed"), xb("via-istio"), xb("lonely"),
		route("r1", "agw", "routed"), route("r2", "igw", "via-istio"),
	}
	cases := []struct {
		name   string
		policy string
		sem    func(*Semantics)
		cell   string
	}{
		{"on the agentic gateway", pol("p", day(1), "Allow", []string{"Gateway/agw"}, ""), nil, "True"},
		{"on a routed backend", pol("p", day(1), "Allow", []string{"XBackend/routed"}, ""), nil, "True"},
		{"missing gateway", pol("p", day(1), "Allow", []string{"Gateway/nope"}, ""), nil, "False(TargetNotFound)"},
		{"missing backend", pol("p", day(1), "Allow", []string{"XBackend/nope"}, ""), nil, "False(TargetNotFound)"},
		{"gateway of another data plane", pol("p", day(1), "Allow", []string{"Gateway/igw"}, ""), nil, "False(OtherDataPlane)"},
		{"backend only routed by another data plane", pol("p", day(1), "Allow", []string{"XBackend/via-istio"}, ""), nil, "False(OtherDataPlane)"},
		{"backend no route reaches", pol("p", day(1), "Allow", []string{"XBackend/lonely"}, ""), nil, "False(NotRouted)"},
		{"recorded status rejects it", pol("p", day(1), "Allow", []string{"Gateway/agw"}, rejected), nil, "False(LimitPerTargetExceeded)"},
		{"recorded status ignored when recomputing", pol("p", day(1), "Allow", []string{"Gateway/agw"}, rejected),
			func(s *Semantics) { s.Admission = AdmissionRecompute }, "True"},
		{"v0alpha0 object", legacy, nil, "False(NoAction)"},
		{"v0alpha0 object under the legacy translator", legacy, func(s *Semantics) { s.V0alpha0 = V0alpha0Legacy }, "True"},
		{"v1alpha1 without action", noAction, nil, "False(NoAction)"},
		{"one target of two missing", pol("p", day(1), "Allow", []string{"Gateway/agw", "XBackend/nope"}, ""), nil, "Partial(TargetNotFound)"},
		{"unsupported kind", strings.Replace(pol("p", day(1), "Allow", []string{"Gateway/agw"}, ""), "kind: Gateway", "kind: HTTPRoute", 1), nil, "False(UnsupportedTargetKind)"},
		{"invalid CEL", pol("p", day(1), "Allow", []string{"Gateway/agw"},
			"  rules:\n  - name: r\n    source: {type: ServiceAccount, serviceAccount: {name: x}}\n    authorization: {type: CEL, cel: {expression: \"((\"}}\n"), nil, "False(InvalidCEL)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := load(t, append(append([]string{}, base...), tc.policy)...)
			sem := Reference()
			if tc.sem != nil {
				tc.sem(&sem)
			}
			e := NewEngine(s, sem, "")
			got := e.Enforcement(topology.BuildGraph(s))
			if len(got) != 1 {
				t.Fatalf("%d policies", len(got))
			}
			for _, pe := range got {
				if pe.Cell() != tc.cell {
					t.Errorf("cell %s, want %s (%+v)", pe.Cell(), tc.cell, pe)
				}
				if !pe.Enforced && pe.Why == nil {
					t.Errorf("no why: %+v", pe)
				}
				if pe.InForce() != (tc.cell == "True" || strings.HasPrefix(tc.cell, "Partial")) {
					t.Errorf("in force %v", pe.InForce())
				}
			}
		})
	}
}

// A second ExternalAuth policy on one target is admitted under seniority-free
// semantics but its level uses only the first: not enforced.
func TestEnforcementSecondExtAuth(t *testing.T) {
	s := load(t,
		pol("first", day(1), "ExternalAuth", []string{"Gateway/gw"}, ""),
		pol("second", day(2), "ExternalAuth", []string{"Gateway/gw"}, ""),
		"apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw, namespace: a}\nspec:\n  gatewayClassName: c\n  listeners: [{name: http, protocol: HTTP, port: 80}]\n")
	sem := Reference()
	sem.ExtAuthSeniority = false
	got := map[string]string{}
	for p, pe := range NewEngine(s, sem, "").Enforcement(topology.BuildGraph(s)) {
		got[p.Name] = pe.Cell()
	}
	if got["first"] != "True" || got["second"] != "False(ExternalAuthNotFirst)" {
		t.Errorf("%v", got)
	}
}

// A live read of one namespace cannot see the routes of other namespaces: a backend no
// route read reaches is Unknown(NotRead) there, NotRouted in files and whole-cluster reads.
func TestEnforcementLiveOneNamespace(t *testing.T) {
	docs := []string{
		"apiVersion: agentic.networking.x-k8s.io/v0alpha0\nkind: XBackend\nmetadata: {name: xb, namespace: a}\nspec: {mcp: {serviceName: s, port: 80}}\n",
		pol("p", day(1), "Allow", []string{"XBackend/xb"}, ""),
	}
	for _, tc := range []struct {
		origins  []string
		complete bool
		cell     string
	}{
		{[]string{"files"}, false, "False(NotRouted)"},
		{[]string{"cluster"}, false, "Unknown(NotRead)"},
		{[]string{"cluster", "files"}, false, "Unknown(NotRead)"},
		{[]string{"cluster"}, true, "False(NotRouted)"},
	} {
		s := load(t, docs...)
		s.Origins, s.Complete = tc.origins, tc.complete
		for _, pe := range NewEngine(s, Reference(), "").Enforcement(topology.BuildGraph(s)) {
			if pe.Cell() != tc.cell || pe.InForce() {
				t.Errorf("%v complete=%v: %s (in force %v), want %s", tc.origins, tc.complete, pe.Cell(), pe.InForce(), tc.cell)
			}
		}
	}
}
