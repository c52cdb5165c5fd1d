package lint

import (
	"fmt"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

func init() {
	Register(&Check{
		Code: "AGP401", Severity: SeverityError, Category: CategoryAllowAll,
		Title: "rule source matches any caller",
		Explanation: `The rule's source sets a type without the matching field (type: SPIFFE without spiffe,
type: ServiceAccount without serviceAccount, or type: SPIFFE with only serviceAccount),
or sets spiffe/serviceAccount without a type. The CRD accepts all of these, and the
reference translator then builds no principal for the rule, which means ANY principal:
every caller, including callers without a client certificate. The rule looks limited
to one identity and admits everyone (docs/semantics.md#source-fail-open).`,
		Fix: `Set type and its field together: type: ServiceAccount with serviceAccount: {name, namespace},
or type: SPIFFE with spiffe: spiffe://<trust-domain>/<path>.`,
		DataPlanes: AppliesToAgentic,
		Run:        runSourceFailOpen,
	})
	Register(&Check{
		Code: "AGP402", Severity: SeverityError, Category: CategoryAllowAll,
		Title: "rule is restricted only by L7 fields the controller ignores",
		Explanation: `The rule's only restrictions are authorization.methods, paths, headers, hosts or ports.
These fields exist in the v1alpha1 API, but the reference translator does not read
them (docs/semantics.md#l7-fields): with no mcp.methods, no base-protocol option and no
CEL, an
Inline authorization translates to ANY request. The rule therefore admits every
request from its source, whatever method, path, header, host or port it uses.`,
		Fix: `Express the restriction with what the controller enforces: mcp.methods (with params for
tool names) or a CEL rule over request.method, request.path, request.host and
request.headers. Keep the L7 fields only if you accept that they are documentation.`,
		DataPlanes: AppliesToAgentic,
		Run:        runL7Only,
	})
	Register(&Check{
		Code: "AGP403", Severity: SeverityWarning, Category: CategoryAllowAll,
		Title: "rule sets L7 fields the controller ignores",
		Explanation: `The rule sets authorization.methods, paths, headers, hosts or ports next to restrictions
the controller does enforce (mcp.methods, the base-protocol option, or CEL). The L7
fields are not translated (docs/semantics.md#l7-fields), so the rule is broader than it
reads: it
matches requests of any HTTP method, path, header, host and port that pass its other
restrictions.`,
		Fix: `Move the L7 conditions into a CEL rule (request.method, request.path, request.host,
request.headers), or remove them.`,
		DataPlanes: AppliesToAgentic,
		Run:        runL7Ignored,
	})
	Register(&Check{
		Code: "AGP404", Severity: SeverityWarning, Category: CategoryAllowAll,
		Title: "XAccessPolicy targetRef sectionName is ignored",
		Explanation: `The reference controller ignores targetRefs[].sectionName in matching, in the
per-target limit and in status (docs/semantics.md#section-name). A policy meant for one
listener of a
Gateway applies to every listener of that Gateway, and to every request through it.`,
		Fix: `Remove sectionName, or, if the policy must only cover some traffic, give those routes
their own Gateway or attach the policy to the XBackend instead.`,
		DataPlanes: AppliesToAgentic,
		Run:        runSectionNameIgnored,
	})
	Register(&Check{
		Code: "AGP405", Severity: SeverityInfo, Category: CategoryAllowAll,
		Title: "Allow rule has no authorization",
		Explanation: `An Allow rule without authorization admits every request from its source: every MCP
method, every tool, plain HTTP GET and DELETE (docs/semantics.md#empty-authorization).
That is the documented
meaning in v1alpha1, but older documents (proposals 0008 and 0017, the v0alpha0 API)
say an empty authorization denies tool calls, so readers may expect the opposite.`,
		Fix: `If the source should only call some tools, add authorization: {type: Inline, mcp:
{methods: [{name: tools/call, params: [...]}]}}. If full access is intended, suppress
this finding with the reason.`,
		DataPlanes: AppliesToAgentic,
		Run:        runNoAuthorization,
	})
	Register(&Check{
		Code: "AGP406", Severity: SeverityWarning, Category: CategoryAllowAll,
		Title: "Inline authorization restricts nothing",
		Explanation: `The rule's authorization is type: Inline with no mcp.methods and the default
SKIP_BASE_PROTOCOL_METHODS option. The translator emits no permission for it, which
it treats as ANY request (docs/semantics.md#empty-authorization): the rule admits every
request from its
source, although "type: Inline" reads like a restriction.`,
		Fix: `List the allowed MCP methods under mcp.methods (tools/call with params for tool names),
or set mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS for handshake-only
access. Remove authorization entirely if full access is intended.`,
		DataPlanes: AppliesToAgentic,
		Run:        runEmptyInline,
	})
	Register(&Check{
		Code: "AGP407", Severity: SeverityWarning, Category: CategoryAllowAll,
		Title: "Allow rule admits every caller and every request",
		Explanation: `The rule matches any caller (no source, or a source that fails open) and any request
(no authorization, or one that restricts nothing). All Allow policies on a target are
merged into one filter in which any matching rule admits the request, so this single
rule opens the target's level to everyone and every other Allow rule on the same
target adds nothing.`,
		Fix: `Give the rule a source (type: ServiceAccount or SPIFFE with its field) or a real
authorization. If the target is meant to be open, delete the Allow policies instead:
a target with no Allow policy is not enforced at that level.`,
		DataPlanes: AppliesToAgentic,
		Run:        runAllowEverything,
	})
}

// eachAllowRule calls f for every rule of every Allow policy of the current API.
func eachAllowRule(ctx *Context, f func(p *snapshot.XAccessPolicy, i int, r *v1alpha1.AccessRule)) {
	for _, p := range ctx.Snapshot.XAccessPolicies {
		if !enforcedAllow(p) {
			continue
		}
		for i := range p.Spec.Rules {
			f(p, i, &p.Spec.Rules[i])
		}
	}
}

func runSourceFailOpen(ctx *Context) []Finding {
	var out []Finding
	eachAllowRule(ctx, func(p *snapshot.XAccessPolicy, i int, r *v1alpha1.AccessRule) {
		if rulePrincipal(r) != principalFailOpen {
			return
		}
		s := r.Source
		var what string
		switch {
		case s.Type == "":
			what = "sets " + setSourceFields(s) + " without type"
		case s.Type == v1alpha1.AuthorizationSourceTypeSPIFFE && s.ServiceAccount != nil:
			what = "has type SPIFFE but only serviceAccount"
		case s.Type == v1alpha1.AuthorizationSourceTypeServiceAccount && s.SPIFFE != nil:
			what = "has type ServiceAccount but only spiffe"
		case s.Type == v1alpha1.AuthorizationSourceTypeSPIFFE:
			what = "has type SPIFFE without spiffe"
		case s.Type == v1alpha1.AuthorizationSourceTypeServiceAccount:
			what = "has type ServiceAccount without serviceAccount"
		default:
			what = fmt.Sprintf("has type %q, which the translator does not know", s.Type)
		}
		f := ctx.Blame(p.Origin, fmt.Sprintf("spec.rules[%d].source", i))
		f.Message = fmt.Sprintf("rule %q: source %s, so it matches any caller, including unauthenticated ones", r.Name, what)
		out = append(out, f)
	})
	return out
}

func setSourceFields(s v1alpha1.AccessRuleSource) string {
	switch {
	case s.SPIFFE != nil && s.ServiceAccount != nil:
		return "spiffe and serviceAccount"
	case s.SPIFFE != nil:
		return "spiffe"
	}
	return "serviceAccount"
}

func runL7Only(ctx *Context) []Finding {
	var out []Finding
	eachAllowRule(ctx, func(p *snapshot.XAccessPolicy, i int, r *v1alpha1.AccessRule) {
		l7 := l7Fields(r.Authorization)
		if len(l7) == 0 || rulePermission(r) == permissionRestricted {
			return
		}
		f := ctx.Blame(p.Origin, fmt.Sprintf("spec.rules[%d].authorization.%s", i, l7[0]))
		f.Message = fmt.Sprintf("rule %q is restricted only by %s, which the controller ignores: it admits every request from %s",
			r.Name, joinAnd(l7), sourceText(p, r))
		out = append(out, f)
	})
	return out
}

func runL7Ignored(ctx *Context) []Finding {
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		if isLegacy(p) {
			continue
		}
		for i := range p.Spec.Rules {
			r := &p.Spec.Rules[i]
			l7 := l7Fields(r.Authorization)
			if len(l7) == 0 {
				continue
			}
			if p.Spec.Action == v1alpha1.ActionTypeAllow && rulePermission(r) != permissionRestricted {
				continue // AGP402 reports it
			}
			f := ctx.Blame(p.Origin, fmt.Sprintf("spec.rules[%d].authorization.%s", i, l7[0]))
			consequence := "the rule matches requests whatever their " + joinAnd(l7)
			if p.Spec.Action == v1alpha1.ActionTypeExternalAuth {
				consequence = "the authorizer is called for requests whatever their " + joinAnd(l7)
			}
			f.Message = fmt.Sprintf("rule %q sets %s, which the controller ignores: %s", r.Name, joinAnd(l7), consequence)
			out = append(out, f)
		}
	}
	return out
}

func runSectionNameIgnored(ctx *Context) []Finding {
	ix := objects(ctx)
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		for i, tr := range p.Spec.TargetRefs {
			if tr.SectionName == nil || *tr.SectionName == "" {
				continue
			}
			f := ctx.Blame(p.Origin, fmt.Sprintf("spec.targetRefs[%d].sectionName", i))
			switch tr.Kind {
			case "Gateway":
				f.Message = fmt.Sprintf("sectionName %q is ignored: the policy applies to every listener of Gateway %s, not only %q",
					*tr.SectionName, tr.Name, *tr.SectionName)
				if g := ix.gateways[p.Namespace+"/"+string(tr.Name)]; g != nil && !hasListener(g, string(*tr.SectionName)) {
					f.Message += " (which is not a listener of it)"
				}
			default:
				f.Message = fmt.Sprintf("sectionName %q is ignored: the policy applies to the whole %s %s", *tr.SectionName, tr.Kind, tr.Name)
			}
			out = append(out, f)
		}
	}
	return out
}

func hasListener(g *snapshot.Gateway, name string) bool {
	for _, l := range g.Spec.Listeners {
		if string(l.Name) == name {
			return true
		}
	}
	return false
}

func runNoAuthorization(ctx *Context) []Finding {
	var out []Finding
	eachAllowRule(ctx, func(p *snapshot.XAccessPolicy, i int, r *v1alpha1.AccessRule) {
		if rulePermission(r) != permissionOmitted || rulePrincipal(r) != principalExact {
			return // any-caller rules are AGP407
		}
		f := ctx.Blame(p.Origin, fmt.Sprintf("spec.rules[%d]", i))
		f.Message = fmt.Sprintf("rule %q has no authorization: it admits every request from %s (every MCP method and tool)", r.Name, sourceText(p, r))
		out = append(out, f)
	})
	return out
}

func runEmptyInline(ctx *Context) []Finding {
	var out []Finding
	eachAllowRule(ctx, func(p *snapshot.XAccessPolicy, i int, r *v1alpha1.AccessRule) {
		if rulePermission(r) != permissionEmptyInline || len(l7Fields(r.Authorization)) > 0 || rulePrincipal(r) != principalExact {
			return // with L7 fields it is AGP402, for any caller AGP407
		}
		f := ctx.Blame(p.Origin, fmt.Sprintf("spec.rules[%d].authorization", i))
		f.Message = fmt.Sprintf("rule %q: Inline authorization without mcp.methods restricts nothing, so it admits every request from %s", r.Name, sourceText(p, r))
		out = append(out, f)
	})
	return out
}

func runAllowEverything(ctx *Context) []Finding {
	var out []Finding
	eachAllowRule(ctx, func(p *snapshot.XAccessPolicy, i int, r *v1alpha1.AccessRule) {
		if rulePrincipal(r) == principalExact || rulePermission(r) == permissionRestricted {
			return
		}
		f := ctx.Blame(p.Origin, fmt.Sprintf("spec.rules[%d]", i))
		targets := make([]string, 0, len(p.Spec.TargetRefs))
		for _, tr := range p.Spec.TargetRefs {
			targets = append(targets, string(tr.Kind)+" "+string(tr.Name))
		}
		f.Message = fmt.Sprintf("rule %q admits every caller and every request: Allow policies on %s enforce nothing", r.Name, joinAnd(targets))
		out = append(out, f)
	})
	return out
}

func init() {
	Register(&Check{
		Code: "AGP409", Severity: SeverityWarning, Category: CategoryAllowAll,
		Title: "Allow policy without rules",
		Explanation: `The API documents an Allow policy without rules as matching any request. The
reference translator adds nothing for it: alone on its target, the target has no Allow
rules, so that level is not enforced and every caller passes; next to other Allow
policies it contributes nothing, so the callers it seems to admit are denied unless
another policy's rule admits them. Either way it does not do what it says.`,
		Fix: `Give the policy rules (an explicit rule with no source and no authorization admits
everyone, and says so), or delete it.`,
		DataPlanes: AppliesToAgentic,
		Run:        runRulelessAllow,
	})
	Register(&Check{
		Code: "AGP410", Severity: SeverityWarning, Category: CategoryAllowAll,
		Title: "HTTPRoute method match the data plane does not check",
		Explanation: `The match names an HTTP method. Gateway API routes only requests of that method there,
but the kube-agentic-networking translator drops method matches when it builds the
Envoy routes (translateHTTPRouteMatch reads path, headers and query parameters only),
and does not rank them either. So the rule takes requests of every method that its path,
headers and query parameters match: a rule written for GET also receives POST (MCP
tool calls), and a rule meant to take the other methods behind it may never see them.
agpol routes as the data plane does, and explain says when a request reached a rule
whose method is another.`,
		Fix: `Tell the methods apart where the data plane checks them: in the access policy (a CEL rule
over request.method), or with a header or path match. Remove the method if it only
documents intent.`,
		DataPlanes: AppliesToAgentic,
		Run:        runIgnoredMethodMatch,
	})
}

func runIgnoredMethodMatch(ctx *Context) []Finding {
	var out []Finding
	forEachRouteMatch(ctx, func(r *snapshot.HTTPRoute, field string, m *gwapiv1.HTTPRouteMatch) {
		if m.Method == nil || *m.Method == "" || !servedByAgentic(ctx, r) {
			return
		}
		f := ctx.Blame(r.Origin, field+".method")
		f.Message = fmt.Sprintf("the match names method %s, which the data plane does not check: the rule also takes every other method on the same path, headers and query", *m.Method)
		out = append(out, f)
	})
	return out
}

// forEachRouteMatch calls f for every match of every HTTPRoute the API server would
// accept, with the match's field path (spec.rules[i].matches[j]).
func forEachRouteMatch(ctx *Context, f func(r *snapshot.HTTPRoute, field string, m *gwapiv1.HTTPRouteMatch)) {
	for _, r := range ctx.Snapshot.HTTPRoutes {
		if ctx.Rejected(r.Origin) {
			continue
		}
		for i := range r.Spec.Rules {
			for j := range r.Spec.Rules[i].Matches {
				f(r, fmt.Sprintf("spec.rules[%d].matches[%d]", i, j), &r.Spec.Rules[i].Matches[j])
			}
		}
	}
}

func runRulelessAllow(ctx *Context) []Finding {
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		if !enforcedAllow(p) || len(p.Spec.Rules) > 0 || ctx.Rejected(p.Origin) {
			continue
		}
		for _, tr := range p.Spec.TargetRefs {
			ref := topology.Ref{Group: topology.NormalizeGroup(string(tr.Group)), Kind: string(tr.Kind), Namespace: p.Namespace, Name: string(tr.Name)}
			others := 0
			for _, o := range ctx.Targets.AccessPolicies[ref] {
				if o != p && enforcedAllow(o) && len(o.Spec.Rules) > 0 && !ctx.Rejected(o.Origin) {
					others++
				}
			}
			f := ctx.Blame(p.Origin, "spec")
			if others == 0 {
				f.Message = fmt.Sprintf("Allow policy without rules on %s %s: no Allow rule is enforced there, so every caller passes", tr.Kind, tr.Name)
			} else {
				f.Message = fmt.Sprintf("Allow policy without rules on %s %s adds nothing to the other Allow %s there: it admits no caller by itself",
					tr.Kind, tr.Name, map[bool]string{true: "policy", false: "policies"}[others == 1])
			}
			out = append(out, f)
			break
		}
	}
	return out
}
