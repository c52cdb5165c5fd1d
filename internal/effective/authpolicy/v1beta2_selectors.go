package authpolicy

// The routeSelectors of kuadrant.io/v1beta2 (which rules a selector selects, the
// conditions the operator builds from them, and the hostname checks), as kuadrant-operator
// v0.6.1 computes them: see v1beta2.go for the sources.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
	"github.com/agpol/agpol/internal/apis/kuadrant/v1beta2"
	"github.com/agpol/agpol/internal/snapshot"
)

// SelectRules returns the indexes of the rules of route the selector selects
// (KO61 api/v1beta2/route_selectors.go:L26-L52): none when its hostnames do not
// intersect the route's, every rule when it states no match, else the rules with a
// match that states what one of its matches states.
func SelectRules(s v1beta2.RouteSelector, route *gwapiv1.HTTPRoute) []int {
	if len(s.Hostnames) > 0 && !intersects(s.Hostnames, route.Spec.Hostnames) {
		return nil
	}
	var out []int
	for i, rule := range route.Spec.Rules {
		if len(s.Matches) == 0 {
			out = append(out, i)
			continue
		}
		for _, m := range s.Matches {
			if selects(m, rule) {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

func intersects(a, b []gwapiv1.Hostname) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// selects is HTTPRouteRuleSelector.Selects (KO61 pkg/common/gatewayapi_utils.go:L100-L138):
// one of the rule's matches states the selector's path and method identically, and
// every header and query param of the selector among its own.
func selects(sel gwapiv1.HTTPRouteMatch, rule gwapiv1.HTTPRouteRule) bool {
	for _, m := range rule.Matches {
		if sel.Path != nil && !samePath(sel.Path, m.Path) {
			continue
		}
		if sel.Method != nil && (m.Method == nil || *sel.Method != *m.Method) {
			continue
		}
		if !headersIn(sel.Headers, m.Headers) || !paramsIn(sel.QueryParams, m.QueryParams) {
			continue
		}
		return true
	}
	return false
}

// samePath is reflect.DeepEqual on the two path matches, as the operator compares them
// (after the API server's defaults, which files read by agpol also receive).
func samePath(a, b *gwapiv1.HTTPPathMatch) bool {
	if b == nil {
		return false
	}
	return ptrEq(a.Type, b.Type) && ptrEq(a.Value, b.Value)
}

func ptrEq[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func headersIn(want, have []gwapiv1.HTTPHeaderMatch) bool {
	return allIn(want, have, func(w, h gwapiv1.HTTPHeaderMatch) bool {
		return ptrEq(w.Type, h.Type) && w.Name == h.Name && w.Value == h.Value
	})
}

func paramsIn(want, have []gwapiv1.HTTPQueryParamMatch) bool {
	return allIn(want, have, func(w, h gwapiv1.HTTPQueryParamMatch) bool {
		return ptrEq(w.Type, h.Type) && w.Name == h.Name && w.Value == h.Value
	})
}

// allIn reports whether every element of want has a same one in have.
func allIn[T any](want, have []T, same func(w, h T) bool) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h T) bool { return same(w, h) }) {
			return false
		}
	}
	return true
}

// selected applies a selector list to the policy's route: the selected rule indexes
// (in order, each once) and, per selector, the hostnames its conditions name.
func (p *V1beta2Policy) selected(sels []v1beta2.RouteSelector) (rules []int, conds []kuadrantv1.PatternExpressionOrRef) {
	seen := map[int]bool{}
	for _, s := range sels {
		hosts := hostnamesForConditions(s, p.route)
		for _, i := range SelectRules(s, p.route) {
			if !seen[i] {
				seen[i] = true
				rules = append(rules, i)
			}
			conds = append(conds, ruleConditions(p.route.Spec.Rules[i], hosts)...)
		}
	}
	sort.Ints(rules)
	return rules, conds
}

// hostnamesForConditions is RouteSelector.HostnamesForConditions
// (KO61 api/v1beta2/route_selectors.go:L55-L68).
func hostnamesForConditions(s v1beta2.RouteSelector, route *gwapiv1.HTTPRoute) []gwapiv1.Hostname {
	hosts := route.Spec.Hostnames
	if len(s.Hostnames) > 0 {
		var in []gwapiv1.Hostname
		for _, h := range s.Hostnames {
			for _, rh := range hosts {
				if h == rh {
					in = append(in, h)
					break
				}
			}
		}
		hosts = in
	}
	if sameElements(hosts, route.Spec.Hostnames) {
		return []gwapiv1.Hostname{"*"}
	}
	return hosts
}

func sameElements(a, b []gwapiv1.Hostname) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if x == y {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// buildConditions builds the top-level conditions and checks every selector list
// (desiredAuthConfig and mergeConditionsFromRouteSelectorsIntoConfigs, KO61
// controllers/authpolicy_authconfig.go:L108-L296).
func (p *V1beta2Policy) buildConditions() error {
	routeKey := ""
	if len(p.Routes) == 1 && p.Object.V1beta2.Spec.TargetRef.Kind == "HTTPRoute" {
		routeKey = p.Routes[0].Route
	}
	var firstErr error
	miss := func(field string, rules []int) {
		p.EmptySelectors = append(p.EmptySelectors, SelectorMiss{Field: field, Route: routeKey, CatchAll: len(rules) > 0})
		if firstErr == nil {
			firstErr = fmt.Errorf("cannot match any route rules, check for invalid route selectors in the policy (%s)", field)
		}
	}
	var top []kuadrantv1.PatternExpressionOrRef
	if sels := p.spec.RouteSelectors; len(sels) > 0 {
		rules, conds := p.selected(sels)
		if len(conds) == 0 {
			miss("spec.routeSelectors", rules)
		}
		top = conds
		if routeKey != "" {
			p.Routes[0].Rules = rules
		}
	} else {
		for i, rule := range p.route.Spec.Rules {
			top = append(top, ruleConditions(rule, hostnamesForConditions(v1beta2.RouteSelector{}, p.route))...)
			if routeKey != "" {
				p.Routes[0].Rules = append(p.Routes[0].Rules, i)
			}
		}
	}
	for _, nr := range p.spec.AuthScheme.Rules() {
		if len(nr.Rule.RouteSelectors) == 0 {
			continue
		}
		if rules, conds := p.selected(nr.Rule.RouteSelectors); len(conds) == 0 {
			miss("spec.rules."+nr.Section+"."+nr.Name+".routeSelectors", rules)
		}
	}
	for _, c := range p.spec.Conditions {
		p.conditions = append(p.conditions, toV1Pattern(c))
	}
	if len(top) > 0 {
		p.conditions = append(p.conditions, kuadrantv1.PatternExpressionOrRef{Any: top})
	}
	return firstErr
}

// ruleConditions is authorinoConditionsFromHTTPRouteRule (KO61
// controllers/authpolicy_authconfig.go:L311-L366): per match, all of host, method, path,
// headers and query params; a rule without matches is a catch-all.
func ruleConditions(rule gwapiv1.HTTPRouteRule, hostnames []gwapiv1.Hostname) []kuadrantv1.PatternExpressionOrRef {
	var hosts []string
	for _, h := range hostnames {
		if h != "*" {
			hosts = append(hosts, strings.ReplaceAll(strings.ReplaceAll(string(h), ".", `\.`), "*", ".*"))
		}
	}
	hostCond := kuadrantv1.PatternExpressionOrRef{PatternExpression: kuadrantv1.PatternExpression{Selector: "request.host", Operator: "matches", Value: strings.Join(hosts, "|")}}
	if len(rule.Matches) == 0 {
		if len(hosts) == 0 {
			return nil // a catch-all under every hostname: no condition
		}
		return []kuadrantv1.PatternExpressionOrRef{hostCond}
	}
	var oneOf []kuadrantv1.PatternExpressionOrRef
	for _, m := range rule.Matches {
		var all []kuadrantv1.PatternExpressionOrRef
		pe := func(sel, op, val string) {
			all = append(all, kuadrantv1.PatternExpressionOrRef{PatternExpression: kuadrantv1.PatternExpression{Selector: sel, Operator: op, Value: val}})
		}
		if len(hosts) > 0 {
			all = append(all, hostCond)
		}
		if m.Method != nil {
			pe("request.method", "eq", string(*m.Method))
		}
		if m.Path != nil {
			value := "/"
			if m.Path.Value != nil {
				value = *m.Path.Value
			}
			switch {
			case m.Path.Type != nil && *m.Path.Type == gwapiv1.PathMatchExact:
				pe("request.url_path", "eq", value)
			case m.Path.Type != nil && *m.Path.Type == gwapiv1.PathMatchRegularExpression:
				pe("request.url_path", "matches", value)
			default:
				pe("request.url_path", "matches", value+".*")
			}
		}
		for _, h := range m.Headers {
			op := "eq"
			if h.Type != nil && *h.Type == gwapiv1.HeaderMatchRegularExpression {
				op = "matches"
			}
			pe("request.headers."+strings.ToLower(string(h.Name)), op, h.Value)
		}
		for _, q := range m.QueryParams {
			op := "eq"
			if q.Type != nil && *q.Type == gwapiv1.QueryParamMatchRegularExpression {
				op = "matches"
			}
			pe(fmt.Sprintf(`request.path.@extract:{"sep":"?%s=","pos":1}|@extract:{"sep":"&"}`, q.Name), op, q.Value)
		}
		if len(all) > 0 {
			oneOf = append(oneOf, kuadrantv1.PatternExpressionOrRef{All: all})
		}
	}
	return oneOf
}

func toV1Pattern(c v1beta2.PatternExpressionOrRef) kuadrantv1.PatternExpressionOrRef {
	out := kuadrantv1.PatternExpressionOrRef{PatternExpression: kuadrantv1.PatternExpression{Selector: c.Selector, Operator: c.Operator, Value: c.Value}, PatternRef: c.PatternRef}
	for _, a := range c.All {
		out.All = append(out.All, toV1Pattern(a))
	}
	for _, a := range c.Any {
		out.Any = append(out.Any, toV1Pattern(a))
	}
	return out
}

// targetHostnames is TargetHostnames (KO61 pkg/common/gatewayapi_utils.go:L521-L541):
// the route's hostnames or the Gateway's listener hostnames, "*" when none.
func targetHostnames(rt *snapshot.HTTPRoute, gw *snapshot.Gateway, kind gwapiv1.Kind) []string {
	var hs []string
	if kind == "HTTPRoute" && rt != nil {
		hs = hostStrings(rt.Spec.Hostnames)
	} else if gw != nil {
		hs = hostStrings(gatewayHostnames(gw))
	}
	if len(hs) == 0 {
		hs = []string{"*"}
	}
	return hs
}

// validateHostnames is ValidateHierarchicalRules (KO61 pkg/common/gatewayapi_utils.go:
// L570-L588, common.go:L199-L214): every hostname of a routeSelector, top-level or in a
// rule, must be a subset of one of the target's hostnames.
func (p *V1beta2Policy) validateHostnames(target []string) error {
	type list struct {
		field string
		sels  []v1beta2.RouteSelector
	}
	lists := []list{{"spec.routeSelectors", p.spec.RouteSelectors}}
	for _, nr := range p.spec.AuthScheme.Rules() {
		lists = append(lists, list{"spec.rules." + nr.Section + "." + nr.Name + ".routeSelectors", nr.Rule.RouteSelectors})
	}
	route := ""
	if len(p.Routes) == 1 {
		route = p.Routes[0].Route
	}
	for _, l := range lists {
		if err := hostsWithin(l.sels, target); err != nil {
			p.EmptySelectors = append(p.EmptySelectors, SelectorMiss{Field: l.field, Route: route, OutsideTarget: true})
			return err
		}
	}
	return nil
}

func hostsWithin(sels []v1beta2.RouteSelector, target []string) error {
	for _, s := range sels {
		for _, h := range s.Hostnames {
			ok := false
			for _, d := range target {
				if hostSubsetOf(string(h), d) {
					ok = true
					break
				}
			}
			if !ok {
				return fmt.Errorf("rule host (%s) does not follow any hierarchical constraints, for the *v1beta2.AuthPolicy to be validated, it must match with at least one of the target network hostnames %q", h, target)
			}
		}
	}
	return nil
}

// hostSubsetOf is Istio's host.Name.SubsetOf, which the operator uses: sub names only
// hosts that dom names too ("*" names every host; "*.a" names b.a and *.b.a).
func hostSubsetOf(sub, dom string) bool {
	switch {
	case dom == "*" || sub == dom:
		return true
	case strings.HasPrefix(dom, "*"):
		if strings.HasPrefix(sub, "*") {
			return strings.HasSuffix(sub[1:], dom[1:])
		}
		return strings.HasSuffix(sub, dom[1:])
	}
	return false
}
