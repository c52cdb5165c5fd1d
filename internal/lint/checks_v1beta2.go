package lint

import (
	"fmt"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// Checks on AuthPolicy kuadrant.io/v1beta2 as kuadrant-operator v0.6.1 enforced it
// (Kuadrant/kuadrant-operator@0d571de7e44fe5315c51ec3729fe17740b030ced; the semantics are
// computed by authpolicy.ComputeV1beta2).

func init() {
	Register(&Check{
		Code: "AGP106", Severity: SeverityInfo, Category: CategorySchema,
		Title: "AuthPolicy kuadrant.io/v1beta2: its kuadrant.io/v1 form",
		Explanation: `Current kuadrant-operator releases serve AuthPolicy at kuadrant.io/v1 only (the CRD
agpol embeds, Kuadrant/kuadrant-operator@ae69881); v1beta2 objects of the v0.x releases,
still in repositories and clusters, must be rewritten. v1 has no routeSelectors:
a policy names one route rule by targetRef.sectionName, which needs the rule to have a
name; and its policy-level when holds CEL predicates only, not Authorino patterns.
This finding shows, for each v1beta2 AuthPolicy, the v1 targetRefs (one policy per
selected rule), the rule names to add to the HTTPRoute, the CEL predicates its when
patterns and hostname-narrowing selectors become, and the CEL predicate each rule's
routeSelectors become (added to that rule's when). Named patterns and rule bodies carry
over. It also says where the meaning changes at v1 (several policies per target are
merged, hostnames are no longer claimed).`,
		Fix: `Rewrite the policy at kuadrant.io/v1 as the message says, add the rule names to the
HTTPRoute first, and check the result with agpol effective authpolicy.`,
		DataPlanes: AppliesToKuadrant,
		Run:        runV1beta2Migration,
	})
	Register(&Check{
		Code: "AGP211", Severity: SeverityError, Category: CategoryReferences,
		Title: "AuthPolicy v1beta2 routeSelectors select no route rule",
		Explanation: `A v1beta2 routeSelectors list selects the HTTPRouteRules with a match that states
what the selector states, identically (a selector's path /admin does not select a rule
matching /admin/users, nor PathPrefix /toy a rule with Exact /toy), and only when its
hostnames, if any, are among the route's literally. When a list (top-level or on a rule)
selects nothing, kuadrant-operator fails the whole policy with "cannot match any route
rules, check for invalid route selectors in the policy": no AuthConfig is built and the
policy protects nothing. The same happens when it selects only rules without matches
under all the route's hostnames, from which the operator builds no condition, and
when a selector names a hostname that is not within the target's hostnames ("rule host
... does not follow any hierarchical constraints").

The API server defaults a selector match's path to PathPrefix / like a route's: a
selector {method: POST} states path PathPrefix / as well, and selects only the rules
that match that exact path too.`,
		Fix: `Copy the match from the HTTPRoute's rule exactly (type, value, method, headers), or
drop routeSelectors to protect the whole route.`,
		DataPlanes: AppliesToKuadrant,
		Run:        runV1beta2EmptySelectors,
	})
	Register(&Check{
		Code: "AGP306", Severity: SeverityError, Category: CategoryAdmission,
		Title: "second AuthPolicy v1beta2 on a target",
		Explanation: `kuadrant-operator v0.x supports one AuthPolicy per HTTPRoute and per Gateway. It marks
the target with the annotation kuadrant.io/authpolicy naming the first policy it
reconciles; every other policy on the target fails with "the <kind> target <ns/name>
is already referenced by policy <ns/name>" and is not enforced. agpol takes the policy
the annotation names, else the oldest (creationTimestamp, then name). The operator builds
the second policy's AuthConfig before it finds the target taken: when that policy is the
older, its AuthConfig holds the hostnames and Authorino uses it (AGP307 on the other).`,
		Fix: `Merge the rules into one policy per target, or target another route; at v1 several
policies on a target are merged instead (see AGP106).`,
		DataPlanes: AppliesToKuadrant,
		Run:        runV1beta2SecondOnTarget,
	})
	Register(&Check{
		Code: "AGP307", Severity: SeverityError, Category: CategoryAdmission,
		Title: "AuthPolicy v1beta2 hostname claimed by an older policy",
		Explanation: `Each v1beta2 AuthPolicy becomes an Authorino AuthConfig whose hosts are its route's
hostnames (for a Gateway policy, the Gateway's listener hostnames). Authorino indexes
AuthConfigs by host, and a host another AuthConfig already holds is not linked: the
first policy created claims the exact hostname, the later one is not enforced for it
and its status is not ready (AuthSchemeNotReady). Requests for that host are checked
against the older policy's AuthConfig, even when they come through the later policy's
route. Only identical hostnames conflict: a wildcard and a name under it do not (the
most specific one wins).`,
		Fix: `Give each route its own hostname, or protect both routes with one policy (a Gateway
policy covers every route without its own).`,
		DataPlanes: AppliesToKuadrant,
		Run:        runV1beta2ClaimedHost,
	})
	Register(&Check{
		Code: "AGP509", Severity: SeverityInfo, Category: CategoryLoss,
		Title: "AuthPolicy v1beta2 selector match the Istio filter cannot state",
		Explanation: `kuadrant-operator v0.x configures an Istio AuthorizationPolicy that sends a request to
Authorino only when it matches the selected route rules. Istio cannot express regular
expression paths or headers, nor query params: these parts of the matches of top-level
routeSelectors are left out of the Istio rules, so requests outside the policy's scope
also reach Authorino. Authorino still checks the full match and lets them through, so
the outcome is the same, at the cost of an extra authorization call per request.`,
		Fix:        `Select rules by path prefixes, exact paths, methods and exact headers where possible.`,
		DataPlanes: AppliesToKuadrant,
		Run:        runV1beta2IstioLimits,
	})
}

func v1beta2Result(ctx *Context) *authpolicy.V1beta2Result {
	return ctx.Model.V1beta2()
}

func runV1beta2SecondOnTarget(ctx *Context) []Finding {
	var out []Finding
	for _, p := range v1beta2Result(ctx).Policies {
		if p.SecondOn == "" || ctx.Rejected(p.Object.Origin) {
			continue
		}
		f := ctx.Blame(p.Object.Origin, "spec.targetRef")
		f.Message = fmt.Sprintf("%s is already the AuthPolicy of %s: kuadrant-operator does not enforce this one (%s)", p.SecondOn, p.Target, p.Condition.Message)
		out = append(out, f)
	}
	return out
}

func runV1beta2ClaimedHost(ctx *Context) []Finding {
	var out []Finding
	for _, p := range v1beta2Result(ctx).Policies {
		if len(p.LostHosts) == 0 || ctx.Rejected(p.Object.Origin) {
			continue
		}
		var hs []string
		for _, l := range p.LostHosts {
			hs = append(hs, l.Host+" (held by "+l.ClaimedBy+")")
		}
		scope := "some of its hosts: it is enforced for " + strings.Join(p.Hosts, ", ") + " only"
		if len(p.Hosts) == 0 {
			scope = "all its hosts: it is not enforced at all"
		}
		f := ctx.Blame(p.Object.Origin, "spec.targetRef")
		f.Message = fmt.Sprintf("older AuthPolicies hold %s: Authorino does not link them to this policy's AuthConfig, which loses %s; requests for them get the older policy's rules", strings.Join(hs, ", "), scope)
		out = append(out, f)
	}
	return out
}

func runV1beta2EmptySelectors(ctx *Context) []Finding {
	var out []Finding
	for _, p := range v1beta2Result(ctx).Policies {
		if ctx.Rejected(p.Object.Origin) {
			continue
		}
		for _, m := range p.EmptySelectors {
			f := ctx.Blame(p.Object.Origin, m.Field)
			what := "selects no rule of " + routeOrGateway(p, m.Route)
			if m.OutsideTarget {
				f.Message = "names a hostname outside " + routeOrGateway(p, m.Route) + "'s hostnames ("
				f.Quoted = &Quoted{Reasons: p.Why, After: "): kuadrant-operator fails the policy and it protects nothing"}
				out = append(out, f)
				continue
			}
			if m.CatchAll {
				what = "selects only rules without matches of " + routeOrGateway(p, m.Route) + ", under all its hostnames: the operator builds no condition from them"
			}
			f.Message = what + `: kuadrant-operator fails the policy ("cannot match any route rules") and it protects nothing`
			out = append(out, f)
		}
	}
	return out
}

func routeOrGateway(p *authpolicy.V1beta2Policy, route string) string {
	if route != "" {
		return "HTTPRoute " + route
	}
	return "the routes " + p.Target + " covers"
}

func runV1beta2IstioLimits(ctx *Context) []Finding {
	var out []Finding
	for _, p := range v1beta2Result(ctx).Policies {
		if p.Object == nil || ctx.Rejected(p.Object.Origin) {
			continue
		}
		for i, s := range p.Object.V1beta2.Spec.RouteSelectors {
			for j, m := range s.Matches {
				var parts []string
				if m.Path != nil && m.Path.Type != nil && *m.Path.Type == gwapiv1.PathMatchRegularExpression {
					parts = append(parts, "a regular expression path")
				}
				for _, h := range m.Headers {
					if h.Type != nil && *h.Type == gwapiv1.HeaderMatchRegularExpression {
						parts = append(parts, "a regular expression header "+string(h.Name))
					}
				}
				if len(m.QueryParams) > 0 {
					parts = append(parts, "query params")
				}
				if len(parts) == 0 {
					continue
				}
				f := ctx.Blame(p.Object.Origin, fmt.Sprintf("spec.routeSelectors[%d].matches[%d]", i, j))
				f.Message = "the Istio AuthorizationPolicy cannot state " + strings.Join(parts, ", ") + ": requests outside the selection also reach Authorino, which lets them through"
				out = append(out, f)
			}
		}
	}
	return out
}

func runV1beta2Migration(ctx *Context) []Finding {
	var out []Finding
	for _, p := range v1beta2Result(ctx).Policies {
		if ctx.Rejected(p.Object.Origin) {
			continue
		}
		f := ctx.Blame(p.Object.Origin, "apiVersion")
		if p.Enforcement == authpolicy.Unsupported {
			f.Message = "no kuadrant.io/v1 form computed: "
			f.Quoted = &Quoted{Reasons: p.Why}
			out = append(out, f)
			continue
		}
		f.Message = "at kuadrant.io/v1: "
		f.Quoted = &Quoted{Migration: p.Migrate()}
		out = append(out, f)
	}
	return out
}
