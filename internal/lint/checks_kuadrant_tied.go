package lint

import (
	"fmt"
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

func init() {
	Register(&Check{
		Code: "AGP602", Severity: SeverityWarning, Category: CategoryAmbiguity,
		Title: "AuthPolicy depends on an order kuadrant-operator does not fix",
		Explanation: `Two paths of one HTTPRoute (the route on two listeners of a Gateway, or two of its
rules whose matches kuadrant-operator's order does not tell apart) have wasm action sets
that tie in that order and can match the same request, and different AuthPolicies apply
to them. kuadrant-operator sorts a Gateway's action sets with an unstable sort over paths
taken from a map, and the wasm-shim runs the first action set that matches: for a request
both match, which path's AuthConfig Authorino evaluates, and so which AuthPolicy decides,
can change from one reconciliation to the next (docs/semantics.md#kuadrant-tied). agpol
explain answers such a request INDETERMINATE when the policies answer differently.`,
		Fix: `Give the paths the same AuthPolicy (target the HTTPRoute or the Gateway rather than one
listener or rule), or make the matches distinct: attach the route to one listener
(parentRefs sectionName), or give each rule a different path, method or header match.`,
		DataPlanes: AppliesToKuadrant,
		Run:        runKuadrantTied,
	})
}

// runKuadrantTied reports paths whose tied action sets carry different effective
// AuthPolicies on the HTTPRoute, once per route and pair of policy sets (the first pair
// of paths in path order names them).
func runKuadrantTied(ctx *Context) []Finding {
	res := ctx.Model.AuthPolicy()
	var out []Finding
	seen := map[[3]string]bool{}
	for _, pr := range res.Paths {
		sets := res.ActionSets(pr)
		for _, t := range res.Ties(pr) {
			a, b := strings.Join(policyRefs(pr), ","), strings.Join(policyRefs(t.Path), ",")
			key := [3]string{pr.Path.Route, min(a, b), max(a, b)}
			if a == b || seen[key] {
				continue
			}
			seen[key] = true
			rn := res.Topology.Route(pr.Path.Route)
			if rn == nil || rn.Object == nil {
				continue
			}
			f := ctx.Blame(rn.Object.Origin, "spec.rules")
			f.Message = fmt.Sprintf("HTTPRoute %s: the wasm action sets of %s (AuthPolicy %s) and %s (AuthPolicy %s) tie in kuadrant-operator's order (hostname %s, %s), which is not fixed: for a request both match, either AuthPolicy may decide",
				pr.Path.Route, pr.Path, strings.Join(policyRefs(pr), ", "), t.Path.Path, strings.Join(policyRefs(t.Path), ", "),
				sets[t.Mine].Hostname, matchText(sets[t.Mine].Match))
			out = append(out, f)
		}
	}
	return out
}

// policyRefs are the AuthPolicies folded into a path's effective policy, sorted.
func policyRefs(pr *authpolicy.PathResult) []string {
	var out []string
	if pr.Effective != nil {
		for _, p := range pr.Effective.Policies {
			out = append(out, p.Ref)
		}
	}
	sort.Strings(out)
	return out
}

// matchText is an HTTPRoute match as a short phrase: "path PathPrefix /mcp, method GET".
func matchText(m gwapiv1.HTTPRouteMatch) string {
	var parts []string
	if m.Path != nil {
		typ, value := authpolicy.PathMatch(m.Path)
		parts = append(parts, fmt.Sprintf("path %s %s", typ, value))
	}
	if m.Method != nil {
		parts = append(parts, "method "+string(*m.Method))
	}
	for _, h := range m.Headers {
		parts = append(parts, fmt.Sprintf("header %s: %s", h.Name, h.Value))
	}
	for _, q := range m.QueryParams {
		parts = append(parts, fmt.Sprintf("query %s=%s", q.Name, q.Value))
	}
	if len(parts) == 0 {
		return "any request"
	}
	return strings.Join(parts, ", ")
}
