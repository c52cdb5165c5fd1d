package lint

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

func init() {
	Register(&Check{
		Code: "AGP408", Severity: SeverityWarning, Category: CategoryAllowAll,
		Title: "MCP backend reachable with no policy at all",
		Explanation: `The XBackend is reachable through a Gateway, and neither the Gateway nor the XBackend
has an accepted XAccessPolicy (Allow or ExternalAuth), nor does a Kuadrant AuthPolicy
target the Gateway or a route to it. The reference then allows every request from
every caller (docs/semantics.md#no-policy), although some documents describe a zero-trust
default
where tool calls are denied unless allowed.`,
		Fix: `Attach an Allow XAccessPolicy to the XBackend (or its Gateway) listing who may call which
tools. If the backend is meant to be public, suppress this finding with the reason.`,
		DataPlanes: AppliesToAgentic,
		Run:        runUnprotectedBackend,
	})
	Register(&Check{
		Code: "AGP503", Severity: SeverityError, Category: CategoryLoss,
		Title: "Allow policies block the MCP handshake for every caller",
		Explanation: `Once a target has an Allow policy, every request that no Allow rule matches is denied —
including the MCP handshake. initialize is not an MCP method name the API accepts in
mcp.methods: only a rule with mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS,
or a rule with no effective authorization, admits it; CEL rules only ever match
tools/call (docs/semantics.md#base-protocol, #cel-only-tools-call). tools/list is admitted
by the same option, or by the
tools or tools/list method. Without such rules no agent can open a session or list
tools through this target, whatever the tool rules say. Since upstream #279 there is no
built-in allowance for the handshake, although the quickstart guides still describe one.`,
		Fix: `Add a rule such as {name: handshake, authorization: {type: Inline, mcp:
{mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS}}} (with a source, to limit
it to known callers), and include tools/list where agents must discover tools.`,
		DataPlanes: AppliesToAgentic,
		Run:        runHandshakeBlocked,
	})
	Register(&Check{
		Code: "AGP504", Severity: SeverityWarning, Category: CategoryLoss,
		Title: "AuthPolicy overridden on every path",
		Explanation: `Every rule of this Kuadrant AuthPolicy is displaced on every path it applies to: by an
override of a less specific policy, or by a more specific policy that replaces it
atomically. The policy is Accepted but not Enforced; what it says about authentication
and authorization is not what the gateway does.`,
		Fix: `Look at the policies named in the message (agpol explain shows the fold); change the
strategy of the overriding policy to merge, or move the rules into it.`,
		DataPlanes: AppliesToKuadrant,
		Run:        runAuthPolicyEnforcement(authpolicy.Overridden),
	})
	Register(&Check{
		Code: "AGP505", Severity: SeverityWarning, Category: CategoryLoss,
		Title: "AuthPolicy rules dropped by another policy",
		Explanation: `Some rules of this Kuadrant AuthPolicy are displaced on some paths — typically by a
route-rule-level (sectionName) policy whose bare or atomic rules replace the route's
policy as a whole, silently dropping its authentication or authorization there, or by a
gateway-level override. The policy is only partially enforced.`,
		Fix: `Use defaults with strategy: merge on the more specific policy so that it adds to the
rules above it instead of replacing them, or repeat the dropped rules in it.`,
		DataPlanes: AppliesToKuadrant,
		Run:        runAuthPolicyEnforcement(authpolicy.PartiallyEnforced),
	})
	Register(&Check{
		Code: "AGP601", Severity: SeverityWarning, Category: CategoryAmbiguity,
		Title: "Gateway-level tool allow-list spans several backends",
		Explanation: `A Gateway-level Allow rule lists tool names (tools/call params), and the Gateway routes
to several MCP backends. Tool names are matched without regard to the backend, so the
rule admits a tool of that name on every backend behind the Gateway — "delete" meant
for one server also allows "delete" on the others, including backends added later.`,
		Fix: `Move tool allow-lists to the XBackend level (one policy per backend), and keep
Gateway-level rules to identities and the handshake.`,
		DataPlanes: AppliesToAgentic,
		Run:        runGatewayToolAmbiguity,
	})
}

// acceptedPolicies returns the accepted, enforced (v1alpha1) policies on a target,
// oldest first.
func acceptedPolicies(ctx *Context, ref topology.Ref) []*snapshot.XAccessPolicy {
	adm := admissions(ctx)
	var out []*snapshot.XAccessPolicy
	for _, p := range ctx.Targets.AccessPolicies[ref] {
		if isLegacy(p) || ctx.Rejected(p.Origin) {
			continue
		}
		if a, ok := adm[p]; ok && !a.Effective.Accepted {
			continue
		}
		out = append(out, p)
	}
	return out
}

func runUnprotectedBackend(ctx *Context) []Finding {
	g := graph(ctx)
	authTargets := map[topology.Ref]bool{}
	for _, ap := range ctx.Snapshot.AuthPolicies {
		tr := ap.Spec.TargetRef
		authTargets[topology.Ref{Group: string(tr.Group), Kind: string(tr.Kind), Namespace: ap.Namespace, Name: string(tr.Name)}] = true
	}
	var out []Finding
	for _, xb := range ctx.Snapshot.XBackends {
		xref := topology.XBackendRef(xb.Namespace, xb.Name)
		gws := g.GatewaysOfBackend(xref)
		if len(gws) == 0 || len(acceptedPolicies(ctx, xref)) > 0 {
			continue
		}
		var open []string
		for _, gw := range gws {
			if len(acceptedPolicies(ctx, gw)) > 0 || authTargets[gw] || routedWithAuthPolicy(g, gw, xb, authTargets) {
				continue
			}
			open = append(open, gw.Namespace+"/"+gw.Name)
		}
		if len(open) == 0 {
			continue
		}
		f := ctx.Blame(xb.Origin, "metadata.name")
		f.Message = fmt.Sprintf("XBackend %s/%s is reachable through Gateway %s with no XAccessPolicy or AuthPolicy: every caller may call every tool",
			xb.Namespace, xb.Name, strings.Join(open, ", "))
		out = append(out, f)
	}
	return out
}

// routedWithAuthPolicy reports whether every route from gw to xb carries an AuthPolicy.
func routedWithAuthPolicy(g *topology.Graph, gw topology.Ref, xb *snapshot.XBackend, auth map[topology.Ref]bool) bool {
	found := false
	for _, p := range g.Paths(gw) {
		if p.Backend.XBackend != xb {
			continue
		}
		found = true
		if !auth[topology.HTTPRouteRef(p.Route.Namespace, p.Route.Name)] {
			return false
		}
	}
	return found
}

// admitsHandshake says whether a rule can admit initialize and tools/list for some caller.
func admitsHandshake(r *v1alpha1.AccessRule) (initialize, toolsList bool) {
	switch rulePermission(r) {
	case permissionOmitted, permissionEmptyInline, permissionUnknownType:
		return true, true
	}
	a := r.Authorization
	if a.Type != v1alpha1.AuthorizationRuleTypeInline {
		return false, false // CEL rules only match tools/call
	}
	base := a.MCP.MCPBaseProtocolMethodsOption == v1alpha1.MCPBaseProtocolMethodsOptionMatch
	toolsList = base
	for _, m := range a.MCP.Methods {
		if m.Name == "tools" || m.Name == "tools/list" {
			toolsList = true
		}
	}
	return base, toolsList
}

func runHandshakeBlocked(ctx *Context) []Finding {
	var out []Finding
	for _, ref := range sortedRefs(ctx.Targets) {
		if !supportedAccessTarget(ref.Group, ref.Kind) {
			continue
		}
		var allow []*snapshot.XAccessPolicy
		merged := map[string]*v1alpha1.AccessRule{} // by rule name, younger replaces older
		for _, p := range acceptedPolicies(ctx, ref) {
			if p.Spec.Action != v1alpha1.ActionTypeAllow {
				continue
			}
			allow = append(allow, p)
			for i := range p.Spec.Rules {
				merged[p.Spec.Rules[i].Name] = &p.Spec.Rules[i]
			}
		}
		if len(merged) == 0 {
			continue // the level does not enforce
		}
		initialize, toolsList := false, false
		for _, r := range merged {
			i, l := admitsHandshake(r)
			initialize, toolsList = initialize || i, toolsList || l
		}
		if initialize && toolsList {
			continue
		}
		blocked := "initialize or tools/list"
		switch {
		case initialize:
			blocked = "tools/list"
		case toolsList:
			blocked = "initialize"
		}
		names := make([]string, len(allow))
		for i, p := range allow {
			names[i] = p.Name
		}
		f := ctx.Blame(allow[0].Origin, "spec.rules")
		f.Message = fmt.Sprintf("no Allow rule on %s admits %s for any caller (policies %s): agents cannot %s through it",
			ref, blocked, strings.Join(names, ", "), handshakeConsequence(initialize))
		out = append(out, f)
	}
	return out
}

func handshakeConsequence(initialize bool) string {
	if !initialize {
		return "open an MCP session"
	}
	return "list tools"
}

func runAuthPolicyEnforcement(enforcement string) func(*Context) []Finding {
	return func(ctx *Context) []Finding {
		res := ctx.Model.AuthPolicy()
		var out []Finding
		for _, pr := range res.Policies {
			if pr.Enforcement != enforcement || pr.Policy == nil || pr.Policy.Object == nil {
				continue
			}
			f := ctx.Blame(pr.Policy.Object.Origin, "spec")
			var rules []string
			for k, by := range pr.OverriddenRules {
				rules = append(rules, fmt.Sprintf("%s (by %s)", k, strings.Join(by, ", ")))
			}
			sort.Strings(rules)
			if enforcement == authpolicy.Overridden {
				f.Message = fmt.Sprintf("AuthPolicy %s is overridden on every path by %s: none of its rules is enforced",
					pr.Ref, strings.Join(pr.OverriddenBy, ", "))
			} else {
				f.Message = fmt.Sprintf("AuthPolicy %s is only partially enforced: %s displaced on some paths", pr.Ref, strings.Join(rules, "; "))
			}
			out = append(out, f)
		}
		return out
	}
}

func runGatewayToolAmbiguity(ctx *Context) []Finding {
	g := graph(ctx)
	var out []Finding
	for _, gw := range ctx.Snapshot.Gateways {
		gref := topology.GatewayRef(gw.Namespace, gw.Name)
		backends := map[string]bool{}
		for _, p := range g.Paths(gref) {
			if p.Backend.Kind == agentic.KindXBackend && p.Backend.XBackend != nil {
				backends[p.Backend.Ref.Namespace+"/"+p.Backend.Ref.Name] = true
			}
		}
		if len(backends) < 2 {
			continue
		}
		names := make([]string, 0, len(backends))
		for b := range backends {
			names = append(names, b)
		}
		sort.Strings(names)
		for _, p := range acceptedPolicies(ctx, gref) {
			if p.Spec.Action != v1alpha1.ActionTypeAllow {
				continue
			}
			for i, r := range p.Spec.Rules {
				a := r.Authorization
				if a == nil || a.Type != v1alpha1.AuthorizationRuleTypeInline {
					continue
				}
				for j, m := range a.MCP.Methods {
					if len(m.Params) == 0 || (m.Name != "tools/call" && m.Name != "tools") {
						continue
					}
					tools := make([]string, len(m.Params))
					for k, t := range m.Params {
						tools[k] = string(t)
					}
					f := ctx.Blame(p.Origin, fmt.Sprintf("spec.rules[%d].authorization.mcp.methods[%d].params", i, j))
					f.Message = fmt.Sprintf("rule %q allows tools %s on every backend behind Gateway %s/%s (%s), not on one of them",
						r.Name, strings.Join(tools, ", "), gw.Namespace, gw.Name, strings.Join(names, ", "))
					out = append(out, f)
				}
			}
		}
	}
	return out
}

func init() {
	Register(&Check{
		Code: "AGP506", Severity: SeverityWarning, Category: CategoryLoss,
		Title: "backend rule unreachable: the Gateway admits nothing from its source",
		Explanation: `A backend-level Allow rule names a caller (a ServiceAccount or SPIFFE ID) that no
Gateway-level Allow rule admits, on every Gateway that routes to the backend. The
Gateway level runs first and denies every request from that caller, so the backend rule
never decides anything: the access it grants is not available, even though the backend
policy says so. (ServiceAccounts are compared as SPIFFE IDs in the trust domain
cluster.local, the reference deployment's.)`,
		Fix: `Admit the caller at the Gateway level too (a rule with its source, restricted as needed),
or remove the backend rule if the caller should not get through.`,
		DataPlanes: AppliesToAgentic,
		Run:        runUnreachableBackendRule,
	})
}

// rulePrincipalID is the exact principal of a rule ("" when it matches any caller).
func rulePrincipalID(p *snapshot.XAccessPolicy, r *v1alpha1.AccessRule) string {
	if rulePrincipal(r) != principalExact {
		return ""
	}
	if r.Source.Type == v1alpha1.AuthorizationSourceTypeSPIFFE {
		return string(*r.Source.SPIFFE)
	}
	sa := r.Source.ServiceAccount
	return effective.ServiceAccountSPIFFEID(effective.DefaultTrustDomain, p.Namespace, sa.Namespace, sa.Name)
}

// levelPrincipals returns the principals an enforcing Allow level admits (any=true when
// some rule matches any caller); enforcing is false when the level has no Allow rules.
func levelPrincipals(ctx *Context, ref topology.Ref) (principals map[string]bool, any, enforcing bool) {
	merged := map[string]struct {
		p *snapshot.XAccessPolicy
		r *v1alpha1.AccessRule
	}{}
	for _, p := range acceptedPolicies(ctx, ref) {
		if p.Spec.Action != v1alpha1.ActionTypeAllow {
			continue
		}
		for i := range p.Spec.Rules {
			merged[p.Spec.Rules[i].Name] = struct {
				p *snapshot.XAccessPolicy
				r *v1alpha1.AccessRule
			}{p, &p.Spec.Rules[i]}
		}
	}
	principals = map[string]bool{}
	for _, m := range merged {
		id := rulePrincipalID(m.p, m.r)
		if id == "" {
			any = true
		}
		principals[id] = true
	}
	return principals, any, len(merged) > 0
}

func runUnreachableBackendRule(ctx *Context) []Finding {
	g := graph(ctx)
	var out []Finding
	for _, xb := range ctx.Snapshot.XBackends {
		xref := topology.XBackendRef(xb.Namespace, xb.Name)
		gws := g.GatewaysOfBackend(xref)
		if len(gws) == 0 {
			continue
		}
		// levels holds, per Gateway, the principals its Allow rules admit.
		var levels []map[string]bool
		open := false
		for _, gw := range gws {
			ps, any, enforcing := levelPrincipals(ctx, gw)
			if !enforcing || any {
				open = true
				break
			}
			levels = append(levels, ps)
		}
		if open {
			continue
		}
		for _, p := range acceptedPolicies(ctx, xref) {
			if p.Spec.Action != v1alpha1.ActionTypeAllow {
				continue
			}
			for i := range p.Spec.Rules {
				r := &p.Spec.Rules[i]
				id := rulePrincipalID(p, r)
				if id == "" {
					continue
				}
				admitted := false
				for _, ps := range levels {
					if ps[id] {
						admitted = true
						break
					}
				}
				if admitted {
					continue
				}
				names := make([]string, len(gws))
				for k, gw := range gws {
					names[k] = gw.Namespace + "/" + gw.Name
				}
				f := ctx.Blame(p.Origin, fmt.Sprintf("spec.rules[%d].source", i))
				f.Message = fmt.Sprintf("rule %q admits %s, but no Allow rule of Gateway %s admits that caller: the Gateway denies its requests before this rule is consulted",
					r.Name, sourceText(p, r), strings.Join(names, ", "))
				out = append(out, f)
			}
		}
	}
	return out
}

func init() {
	Register(&Check{
		Code: "AGP507", Severity: SeverityError, Category: CategoryLoss,
		Title: "backend ExternalAuth never called: routes name the XBackend with another group",
		Explanation: `The XBackend has an ExternalAuth policy, but no HTTPRoute that reaches it refers to it
with group agentic.networking.x-k8s.io. Routing accepts any group for kind XBackend, but
the reference builds an ext_authz filter for a backend's ExternalAuth only from
backendRefs with exactly that group (docs/semantics.md#extauth-backendref-group): the
authorizer is never called,
and requests the policy meant to send to it pass (if the Allow policies admit them).`,
		Fix:        `Write the backendRefs to this XBackend with group: agentic.networking.x-k8s.io.`,
		DataPlanes: AppliesToAgentic,
		Run:        runInertBackendExtAuth,
	})
}

// xbackendRef is a route backendRef of kind XBackend, with the group it names.
type xbackendRef struct {
	route *snapshot.HTTPRoute
	group string
}

// xbackendRefs indexes the HTTPRoute backendRefs of kind XBackend by the XBackend they
// name, in route, rule and backendRef order, once per context (rather than scanning
// every route for every XBackend).
func xbackendRefs(ctx *Context) map[types.NamespacedName][]xbackendRef {
	return Memo(ctx, "xbackendRefs", func() map[types.NamespacedName][]xbackendRef {
		m := map[types.NamespacedName][]xbackendRef{}
		for _, r := range ctx.Snapshot.HTTPRoutes {
			for _, rule := range r.Spec.Rules {
				for _, br := range rule.BackendRefs {
					if br.Kind == nil || string(*br.Kind) != agentic.KindXBackend {
						continue
					}
					ns := r.Namespace
					if br.Namespace != nil && *br.Namespace != "" {
						ns = string(*br.Namespace)
					}
					g := ""
					if br.Group != nil {
						g = string(*br.Group)
					}
					k := types.NamespacedName{Namespace: ns, Name: string(br.Name)}
					m[k] = append(m[k], xbackendRef{route: r, group: g})
				}
			}
		}
		return m
	})
}

func runInertBackendExtAuth(ctx *Context) []Finding {
	var out []Finding
	for _, xb := range ctx.Snapshot.XBackends {
		var ext *snapshot.XAccessPolicy
		for _, p := range acceptedPolicies(ctx, topology.XBackendRef(xb.Namespace, xb.Name)) {
			if p.Spec.Action == v1alpha1.ActionTypeExternalAuth {
				ext = p
				break
			}
		}
		if ext == nil {
			continue
		}
		routed, exact := false, false
		var groups []string
		for _, ref := range xbackendRefs(ctx)[types.NamespacedName{Namespace: xb.Namespace, Name: xb.Name}] {
			routed = true
			if ref.group == agentic.GroupName {
				exact = true
			} else {
				groups = append(groups, fmt.Sprintf("%q in HTTPRoute %s/%s", ref.group, ref.route.Namespace, ref.route.Name))
			}
		}
		if !routed || exact {
			continue
		}
		f := ctx.Blame(ext.Origin, "spec.externalAuth")
		f.Message = fmt.Sprintf("the ExternalAuth of XBackend %s/%s is never called: routes refer to it with group %s, not %s",
			xb.Namespace, xb.Name, strings.Join(groups, ", "), agentic.GroupName)
		out = append(out, f)
	}
	return out
}
