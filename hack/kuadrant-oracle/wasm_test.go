package main

import (
	"testing"

	"k8s.io/utils/ptr"
	gatewayapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	kuadrantgatewayapi "github.com/kuadrant/kuadrant-operator/internal/gatewayapi"
	"github.com/kuadrant/kuadrant-operator/internal/wasm"
)

// TestSelectActionSetTies: action sets that kuadrant-operator's Less cannot order
// (same hostname, match and HTTPRoute) and whose predicates hold are reported tied,
// one per path; an ordered pair, or a tie within one path, is not.
func TestSelectActionSetTies(t *testing.T) {
	prefix := func(v string) gatewayapiv1.HTTPRouteMatch {
		return gatewayapiv1.HTTPRouteMatch{Path: &gatewayapiv1.HTTPPathMatch{Type: ptr.To(gatewayapiv1.PathMatchPathPrefix), Value: ptr.To(v)}}
	}
	actionSet := func(name, scope, path string) wasm.ActionSet {
		return wasm.ActionSet{Name: name,
			RouteRuleConditions: wasm.RouteRuleConditions{Hostnames: []string{"a.example.com"}, Predicates: wasm.PredicatesFromHTTPRouteMatch(prefix(path))},
			Actions:             []wasm.Action{{ServiceName: wasm.AuthServiceName, Scope: scope}}}
	}
	match := func(as wasm.ActionSet, path, route string) kuadrantgatewayapi.HTTPRouteMatchConfig {
		return kuadrantgatewayapi.HTTPRouteMatchConfig{Hostname: "a.example.com", HTTPRouteMatch: prefix(path), Namespace: "ns", Name: route, Config: as}
	}
	l1, l2 := actionSet("l1", "scope-l1", "/a"), actionSet("l2", "scope-l2", "/a")
	l1b := actionSet("l1b", "scope-l1", "/a")
	longer := actionSet("longer", "scope-longer", "/a/b")
	for _, tc := range []struct {
		name    string
		sets    []wasm.ActionSet
		matches []kuadrantgatewayapi.HTTPRouteMatchConfig
		chosen  string
		tied    []string
	}{
		{"one route on two listeners", []wasm.ActionSet{l1, l2}, []kuadrantgatewayapi.HTTPRouteMatchConfig{match(l1, "/a", "r"), match(l2, "/a", "r")}, "l1", []string{"l1", "l2"}},
		{"two routes: the name orders them", []wasm.ActionSet{l1, l2}, []kuadrantgatewayapi.HTTPRouteMatchConfig{match(l1, "/a", "r1"), match(l2, "/a", "r2")}, "l1", nil},
		{"a longer path comes first", []wasm.ActionSet{longer, l1}, []kuadrantgatewayapi.HTTPRouteMatchConfig{match(longer, "/a/b", "r"), match(l1, "/a", "r")}, "longer", nil},
		{"two matches of one path", []wasm.ActionSet{l1, l1b}, []kuadrantgatewayapi.HTTPRouteMatchConfig{match(l1, "/a", "r"), match(l1b, "/a", "r")}, "l1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &shim{configs: map[string]*wasm.Config{"ns/gw": {ActionSets: tc.sets}}, matches: map[string]kuadrantgatewayapi.HTTPRouteMatchConfig{}}
			for _, m := range tc.matches {
				s.matches[m.Config.(wasm.ActionSet).Name] = m
			}
			chosen, tied, err := s.selectActionSet("ns/gw", Request{Gateway: "ns/gw", Method: "GET", Host: "a.example.com", Path: "/a/b"})
			if err != nil {
				t.Fatal(err)
			}
			if chosen == nil || chosen.Name != tc.chosen {
				t.Fatalf("chosen %v, want %s", chosen, tc.chosen)
			}
			var names []string
			for _, as := range tied {
				names = append(names, as.Name)
			}
			if len(names) != len(tc.tied) || (len(names) > 0 && (names[0] != tc.tied[0] || names[1] != tc.tied[1])) {
				t.Errorf("tied %v, want %v", names, tc.tied)
			}
		})
	}
}
