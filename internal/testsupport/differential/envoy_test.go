package differential

import (
	"testing"

	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

func anyPolicy() *rbacconfigv3.Policy {
	return &rbacconfigv3.Policy{
		Principals:  []*rbacconfigv3.Principal{{Identifier: &rbacconfigv3.Principal_Any{Any: true}}},
		Permissions: []*rbacconfigv3.Permission{{Rule: &rbacconfigv3.Permission_Any{Any: true}}},
	}
}

func principalPolicy(p string) *rbacconfigv3.Policy {
	return &rbacconfigv3.Policy{
		Principals: []*rbacconfigv3.Principal{{Identifier: &rbacconfigv3.Principal_Authenticated_{Authenticated: &rbacconfigv3.Principal_Authenticated{
			PrincipalName: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: p}}}}}},
		Permissions: []*rbacconfigv3.Permission{{Rule: &rbacconfigv3.Permission_Any{Any: true}}},
	}
}

func extAuthz(key string) httpFilter {
	return httpFilter{name: "envoy.filters.http.ext_authz", kind: filterExtAuthz, extAuthz: &extauthzv3.ExtAuthz{
		FilterEnabledMetadata: &matcherv3.MetadataMatcher{Filter: rbacMetadataNamespace,
			Path:  []*matcherv3.MetadataMatcher_PathSegment{{Segment: &matcherv3.MetadataMatcher_PathSegment_Key{Key: key}}},
			Value: &matcherv3.ValueMatcher{MatchPattern: &matcherv3.ValueMatcher_PresentMatch{PresentMatch: true}}}}}
}

// TestDecide pins the Envoy semantics the evaluator implements.
func TestDecide(t *testing.T) {
	shadow := func(prefix string, pol *rbacconfigv3.Policy) *rbacv3.RBAC {
		return &rbacv3.RBAC{ShadowRulesStatPrefix: prefix,
			ShadowRules: &rbacconfigv3.RBAC{Action: rbacconfigv3.RBAC_DENY, Policies: map[string]*rbacconfigv3.Policy{"s": pol}},
			Rules:       &rbacconfigv3.RBAC{Action: rbacconfigv3.RBAC_ALLOW, Policies: map[string]*rbacconfigv3.Policy{"s": anyPolicy()}}}
	}
	perRoute := func(name string, r *rbacv3.RBAC) map[string]*anypb.Any {
		a, err := anypb.New(&rbacv3.RBACPerRoute{Rbac: r})
		if err != nil {
			t.Fatal(err)
		}
		return map[string]*anypb.Any{name: a}
	}
	const gwExt, beExt, gwAllow, beAllow = "envoy.filters.http.rbac.gateway_extauth", "envoy.filters.http.rbac.backend_extauth", "envoy.filters.http.rbac.gateway_allow", "envoy.filters.http.rbac.backend_allow"
	cases := []struct {
		name      string
		filters   []httpFilter
		cluster   map[string]*anypb.Any
		principal string
		deny      bool // every authorizer denies
		want      string
		level     string
	}{
		{name: "absent rules enforce nothing", filters: []httpFilter{{name: gwAllow, kind: filterRBAC, rbac: &rbacv3.RBAC{}}}, want: VerdictAllow},
		{name: "present empty ALLOW rules deny", filters: []httpFilter{{name: gwAllow, kind: filterRBAC, rbac: &rbacv3.RBAC{Rules: &rbacconfigv3.RBAC{Action: rbacconfigv3.RBAC_ALLOW}}}}, want: VerdictDeny, level: "gateway"},
		{name: "principal needs a client certificate", filters: []httpFilter{{name: gwAllow, kind: filterRBAC, rbac: &rbacv3.RBAC{Rules: &rbacconfigv3.RBAC{Policies: map[string]*rbacconfigv3.Policy{"r": principalPolicy("spiffe://x")}}}}}, want: VerdictDeny, level: "gateway"},
		{name: "principal matches the URI SAN", principal: "spiffe://x", filters: []httpFilter{{name: gwAllow, kind: filterRBAC, rbac: &rbacv3.RBAC{Rules: &rbacconfigv3.RBAC{Policies: map[string]*rbacconfigv3.Policy{"r": principalPolicy("spiffe://x")}}}}}, want: VerdictAllow},
		{name: "per-route override on the weighted cluster", filters: []httpFilter{{name: beAllow, kind: filterRBAC, rbac: &rbacv3.RBAC{}}},
			cluster: perRoute(beAllow, &rbacv3.RBAC{Rules: &rbacconfigv3.RBAC{Policies: map[string]*rbacconfigv3.Policy{"r": principalPolicy("spiffe://x")}}}), want: VerdictDeny, level: "backend"},
		{name: "gateway shadow rule enables its ext_authz", deny: true, filters: []httpFilter{{name: gwExt, kind: filterRBAC, rbac: shadow("p_", anyPolicy())}, extAuthz("p_shadow_effective_policy_id")}, want: VerdictDeny, level: "gateway"},
		{name: "shadow rule not matched: authorizer skipped", deny: true, filters: []httpFilter{{name: gwExt, kind: filterRBAC, rbac: shadow("p_", principalPolicy("spiffe://x"))}, extAuthz("p_shadow_effective_policy_id")}, want: VerdictAllow},
		{name: "route-local shadow prefix names the key", deny: true, filters: []httpFilter{{name: beExt, kind: filterRBAC, rbac: &rbacv3.RBAC{}}, extAuthz("q_shadow_effective_policy_id")},
			cluster: perRoute(beExt, shadow("q_", anyPolicy())), want: VerdictDeny, level: "backend"},
		{name: "another config's key does not enable", deny: true, filters: []httpFilter{{name: gwExt, kind: filterRBAC, rbac: shadow("p_", anyPolicy())}, extAuthz("q_shadow_effective_policy_id")}, want: VerdictAllow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &Path{Kind: OutcomeForward, ch: &chain{filters: append(c.filters, httpFilter{kind: filterRouter})}, route: &routev3.Route{},
				cluster: &routev3.WeightedCluster_ClusterWeight{Name: "c", TypedPerFilterConfig: c.cluster}}
			d, err := p.Decide(&EnvoyRequest{Method: "POST", Path: "/mcp", Principal: c.principal}, func([]string) bool { return !c.deny })
			if err != nil {
				t.Fatal(err)
			}
			if d.Verdict != c.want || d.Level != c.level {
				t.Errorf("got %s at %q (by %s), want %s at %q", d.Verdict, d.Level, d.By, c.want, c.level)
			}
		})
	}
}

// TestRouting pins route and virtual host matching.
func TestRouting(t *testing.T) {
	m := func(p *routev3.RouteMatch, path string) bool { return routeMatches(p, &EnvoyRequest{Path: path}) }
	sep := &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: "/a"}}
	for path, want := range map[string]bool{"/a": true, "/a/b": true, "/ab": false, "/a?x=1": true, "/": false} {
		if got := m(sep, path); got != want {
			t.Errorf("path_separated_prefix /a on %s: got %v", path, got)
		}
	}
	rc := &routev3.RouteConfiguration{IgnorePortInHostMatching: true, VirtualHosts: []*routev3.VirtualHost{
		{Name: "star", Domains: []string{"*"}}, {Name: "wild", Domains: []string{"*.example.com"}}, {Name: "exact", Domains: []string{"a.example.com"}}}}
	for host, want := range map[string]string{"a.example.com:443": "exact", "b.example.com": "wild", "other": "star"} {
		if got := selectVirtualHost(rc, host).GetName(); got != want {
			t.Errorf("host %s: got %s, want %s", host, got, want)
		}
	}
}
