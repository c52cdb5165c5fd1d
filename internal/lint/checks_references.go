package lint

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/snapshot"
)

func init() {
	Register(&Check{
		Code: "AGP201", Severity: SeverityError, Category: CategoryReferences,
		Title: "XAccessPolicy targets a kind the controller never enforces",
		Explanation: `The reference controller enforces XAccessPolicies that target a Gateway
(gateway.networking.k8s.io) or an XBackend (agentic.networking.x-k8s.io), matching the
group exactly. The v1alpha1 CRD accepts any group and kind, and the controller marks
such a policy Accepted=True — but no data plane configuration is ever built from it.
A policy on an HTTPRoute, a Service, or an XBackend under the legacy group
agentic.prototype.x-k8s.io looks attached and protects nothing
(docs/semantics.md#target-kinds).`,
		Fix: `Target the Gateway (every route through it) or the XBackend (one MCP server) instead,
with the exact groups gateway.networking.k8s.io and agentic.networking.x-k8s.io.`,
		DataPlanes: AppliesToAgentic,
		Run:        runUnsupportedTargetKind,
	})
	Register(&Check{
		Code: "AGP210", Severity: SeverityError, Category: CategoryReferences,
		Title: "XAccessPolicy targets a Gateway another data plane serves",
		Explanation: `The policy targets a Gateway that a data plane other than kube-agentic-networking serves
(its GatewayClass names Istio's or Envoy Gateway's controller, or another one). Only the
reference data plane reads XAccessPolicies: on this Gateway the policy is never
enforced, and every request it seems to restrict passes as far as it is concerned.
explain and simulate decide requests on such a Gateway without it (decidedBy
other-data-plane, or Kuadrant's AuthPolicy where one applies).`,
		Fix: `Protect this Gateway with the policy its data plane enforces (Kuadrant's AuthPolicy on
Istio or Envoy Gateway), or move the agents' routes to a Gateway of the
kube-agentic-networking class. If agpol took the wrong data plane, map the class with
dataPlanes in .agpol.yaml or --data-plane CLASS=agentic.`,
		DataPlanes: AppliesToAgentic,
		Run:        runTargetOnOtherDataPlane,
	})
	Register(&Check{
		Code: "AGP212", Severity: SeverityError, Category: CategoryReferences,
		Title: "AuthPolicy applies on a Gateway Kuadrant does not program",
		Explanation: `The AuthPolicy is effective on a path through a Gateway that neither Istio nor Envoy
Gateway serves (for example one of the kube-agentic-networking reference data plane).
Kuadrant programs AuthPolicies only through those two data planes: it computes the
effective policy, finds nothing to program on this Gateway, and reports the policy
Enforced=False while it waits for the Gateway "to sync", which never happens. No
request through this Gateway is authenticated or authorized by the policy.`,
		Fix: `Put the AuthPolicy on a Gateway of an Istio or Envoy Gateway class, or protect this
Gateway with what its data plane enforces (XAccessPolicy on the reference data plane).
If agpol took the wrong data plane, map the class with dataPlanes in .agpol.yaml or
--data-plane CLASS=istio.`,
		DataPlanes: AppliesToAll,
		Run:        runAuthPolicyUnprogrammed,
	})
	Register(&Check{
		Code: "AGP202", Severity: SeverityError, Category: CategoryReferences,
		Title: "targetRefs mix kinds",
		Explanation: `All targetRefs of one XAccessPolicy must have the same kind: the CRD rejects the object
("All targetRefs must have the same Kind") and the proposal behind targetRefs (0059)
keeps gateway-level and backend-level policies apart, because they are evaluated at
different levels of the chain. agpol reports it apart from the schema error because
objects read from a cluster with older CRDs, or linted with --skip schema, still need it.`,
		Fix:        `Split the policy: one XAccessPolicy for the Gateway targets and one for the XBackend targets.`,
		DataPlanes: AppliesToAgentic,
		Run:        runMixedTargetKinds,
	})
	Register(&Check{
		Code: "AGP203", Severity: SeverityWarning, Category: CategoryReferences,
		Title: "policy targets an object that is not in the input",
		Explanation: `A policy's targetRef names a Gateway, XBackend or HTTPRoute that is not in the
input, in the policy's namespace (targetRefs are local references). Against a cluster
this means the target does not exist: an XAccessPolicy is still marked Accepted but
enforces nothing, and Kuadrant reports an AuthPolicy as TargetNotFound and ignores it.
Against files, the target may simply be defined outside the files given with -f; the
message says so.`,
		Fix: `Correct the target's name or namespace, or create the target. If it lives in another
repository, lint with that repository's files too, or suppress with a reason.`,
		DataPlanes: AppliesToAll,
		Run:        runMissingTarget,
	})
	Register(&Check{
		Code: "AGP204", Severity: SeverityError, Category: CategoryReferences,
		Title: "targetRef sectionName names no listener or route rule",
		Explanation: `An AuthPolicy's targetRef.sectionName must name a listener of the target Gateway, or
a rule of the target HTTPRoute (by its name; Kuadrant also accepts the synthetic names
rule-1, rule-2, ... for unnamed rules). Target resolution is exact: an unknown section
resolves to nothing, and Kuadrant excludes the policy as TargetNotFound, so its
authentication and authorization rules are silently not applied.

An XAccessPolicy targetRef whose sectionName names no listener of its Gateway is a
broken reference too; the reference controller ignores sectionName altogether (AGP404),
so the policy applies to every listener, but the name shows the intent went wrong.`,
		Fix: `Use one of the names listed in the message, or remove sectionName to attach the policy
to the whole Gateway or HTTPRoute.`,
		DataPlanes: AppliesToAll,
		Run:        runAuthPolicySection,
	})
}

// supportedAccessTarget reports whether the reference controller enforces policies on group/kind.
func supportedAccessTarget(group, kind string) bool {
	return (group == snapshot.GatewayGroup && kind == "Gateway") || (group == agentic.GroupName && kind == agentic.KindXBackend)
}

func runUnsupportedTargetKind(ctx *Context) []Finding {
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		for i, tr := range p.Spec.TargetRefs {
			g, k := string(tr.Group), string(tr.Kind)
			if supportedAccessTarget(g, k) {
				continue
			}
			f := ctx.Blame(p.Origin, fmt.Sprintf("spec.targetRefs[%d]", i))
			switch {
			case g == agentic.LegacyGroupName && k == agentic.KindXBackend:
				f.Message = fmt.Sprintf("targetRef %s/%s %s uses the legacy group: the controller matches XBackend targets by the group %s only, so this target is never enforced",
					g, k, tr.Name, agentic.GroupName)
			case k == "Gateway" || k == agentic.KindXBackend:
				f.Message = fmt.Sprintf("targetRef %s %s has group %q: the controller only enforces %s with group %q, so this target is never enforced",
					k, tr.Name, g, k, expectedGroup(k))
			default:
				f.Message = fmt.Sprintf("targetRef %s %s: the policy is accepted but never enforced, the controller only enforces policies on a Gateway or an XBackend",
					groupKind(g, k), tr.Name)
			}
			out = append(out, f)
		}
	}
	return out
}

func runTargetOnOtherDataPlane(ctx *Context) []Finding {
	g := graph(ctx)
	gateways := map[[2]string]*snapshot.Gateway{}
	for _, gw := range ctx.Snapshot.Gateways {
		gateways[[2]string{gw.Namespace, gw.Name}] = gw
	}
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		for i, tr := range p.Spec.TargetRefs {
			if string(tr.Kind) != "Gateway" || string(tr.Group) != snapshot.GatewayGroup {
				continue
			}
			gw := gateways[[2]string{p.Namespace, string(tr.Name)}]
			if gw == nil {
				continue
			}
			dp := g.DataPlane(gw)
			if dp.Agentic() {
				continue
			}
			f := ctx.Blame(p.Origin, fmt.Sprintf("spec.targetRefs[%d]", i))
			f.Message = fmt.Sprintf("Gateway %s/%s is served by the %s data plane (", gw.Namespace, gw.Name, dp.DataPlane)
			f.Quoted = &Quoted{DataPlane: &dp, After: "): it never enforces XAccessPolicies, so this target is not protected by the policy"}
			out = append(out, f)
		}
	}
	return out
}

func runAuthPolicyUnprogrammed(ctx *Context) []Finding {
	res := ctx.Model.AuthPolicy()
	var out []Finding
	for _, pr := range res.Policies {
		if pr.Enforcement != authpolicy.Unprogrammed || pr.Policy == nil || pr.Policy.Object == nil {
			continue
		}
		f := ctx.Blame(pr.Policy.Object.Origin, "spec.targetRef")
		f.Message = fmt.Sprintf("AuthPolicy %s is never enforced: ", pr.Ref)
		f.Quoted = &Quoted{Reasons: pr.Reasons}
		out = append(out, f)
	}
	return out
}

func expectedGroup(kind string) string {
	if kind == "Gateway" {
		return snapshot.GatewayGroup
	}
	return agentic.GroupName
}

func groupKind(group, kind string) string {
	if group == "" {
		return kind
	}
	return kind + "." + group
}

func runMixedTargetKinds(ctx *Context) []Finding {
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		refs := p.Spec.TargetRefs
		for i := 1; i < len(refs); i++ {
			if refs[i].Kind == refs[0].Kind {
				continue
			}
			f := ctx.Blame(p.Origin, fmt.Sprintf("spec.targetRefs[%d]", i))
			f.Message = fmt.Sprintf("targetRefs[%d] is a %s but targetRefs[0] is a %s: all targetRefs of a policy must have the same kind (the CRD rejects the object)",
				i, refs[i].Kind, refs[0].Kind)
			out = append(out, f)
			break
		}
	}
	return out
}

// objectIndex answers "is there a Gateway/XBackend/HTTPRoute ns/name in the snapshot?".
type objectIndex struct {
	gateways map[string]*snapshot.Gateway
	backends map[string]*snapshot.XBackend
	routes   map[string]*snapshot.HTTPRoute
}

func objects(ctx *Context) *objectIndex {
	return Memo(ctx, "objects", func() *objectIndex {
		ix := &objectIndex{gateways: map[string]*snapshot.Gateway{}, backends: map[string]*snapshot.XBackend{},
			routes: map[string]*snapshot.HTTPRoute{}}
		for _, g := range ctx.Snapshot.Gateways {
			ix.gateways[g.Namespace+"/"+g.Name] = g
		}
		for _, b := range ctx.Snapshot.XBackends {
			ix.backends[b.Namespace+"/"+b.Name] = b
		}
		for _, r := range ctx.Snapshot.HTTPRoutes {
			ix.routes[r.Namespace+"/"+r.Name] = r
		}
		return ix
	})
}

func (ix *objectIndex) has(kind, ns, name string) bool {
	key := ns + "/" + name
	switch kind {
	case "Gateway":
		return ix.gateways[key] != nil
	case agentic.KindXBackend:
		return ix.backends[key] != nil
	case "HTTPRoute":
		return ix.routes[key] != nil
	}
	return true
}

// missingMessage words a missing target by where the input came from.
func missingMessage(ctx *Context, kind, ns, name, consequence string) string {
	where := "in the cluster"
	if ctx.FromFilesOnly() {
		where = "in the input files (it may be defined outside them)"
	}
	msg := fmt.Sprintf("%s %s/%s is not %s: %s", kind, ns, name, where, consequence)
	for _, k := range ctx.Snapshot.NotInstalled {
		if strings.HasPrefix(k, kind) {
			msg += fmt.Sprintf("; note the cluster does not serve %s at all", k)
		}
	}
	if ctx.Snapshot.Partial {
		msg += "; note some objects could not be listed, so the answer may be incomplete"
	}
	return msg
}

func runMissingTarget(ctx *Context) []Finding {
	ix := objects(ctx)
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		for i, tr := range p.Spec.TargetRefs {
			g, k := string(tr.Group), string(tr.Kind)
			if !supportedAccessTarget(g, k) || ix.has(k, p.Namespace, string(tr.Name)) {
				continue
			}
			f := ctx.Blame(p.Origin, fmt.Sprintf("spec.targetRefs[%d].name", i))
			f.Message = missingMessage(ctx, k, p.Namespace, string(tr.Name), "the policy is accepted but enforces nothing")
			out = append(out, f)
		}
	}
	for _, p := range ctx.Snapshot.AuthPolicies {
		tr := p.Spec.TargetRef
		g, k := string(tr.Group), string(tr.Kind)
		if g != snapshot.GatewayGroup || (k != "Gateway" && k != "HTTPRoute") || ix.has(k, p.Namespace, string(tr.Name)) {
			continue
		}
		f := ctx.Blame(p.Origin, "spec.targetRef.name")
		f.Message = missingMessage(ctx, k, p.Namespace, string(tr.Name), "Kuadrant reports the AuthPolicy as TargetNotFound and ignores it")
		out = append(out, f)
	}
	return out
}

func runAuthPolicySection(ctx *Context) []Finding {
	ix := objects(ctx)
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		for i, tr := range p.Spec.TargetRefs {
			if tr.SectionName == nil || *tr.SectionName == "" || string(tr.Group) != snapshot.GatewayGroup || tr.Kind != "Gateway" {
				continue
			}
			g := ix.gateways[p.Namespace+"/"+string(tr.Name)]
			if g == nil || hasListener(g, string(*tr.SectionName)) {
				continue
			}
			var names []string
			for _, l := range g.Spec.Listeners {
				names = append(names, string(l.Name))
			}
			f := ctx.Blame(p.Origin, fmt.Sprintf("spec.targetRefs[%d].sectionName", i))
			f.Message = fmt.Sprintf("sectionName %q names no listener of Gateway %s/%s (it has %s); the controller ignores sectionName and applies the policy to every listener",
				*tr.SectionName, p.Namespace, tr.Name, strings.Join(names, ", "))
			out = append(out, f)
		}
	}
	for _, p := range ctx.Snapshot.AuthPolicies {
		tr := p.Spec.TargetRef
		if tr.SectionName == nil || *tr.SectionName == "" || string(tr.Group) != snapshot.GatewayGroup {
			continue
		}
		section := string(*tr.SectionName)
		key := p.Namespace + "/" + string(tr.Name)
		var names []string
		what := ""
		switch tr.Kind {
		case "Gateway":
			g := ix.gateways[key]
			if g == nil {
				continue // AGP203 reports the missing Gateway
			}
			what = "listener"
			for _, l := range g.Spec.Listeners {
				names = append(names, string(l.Name))
			}
		case "HTTPRoute":
			r := ix.routes[key]
			if r == nil {
				continue
			}
			what = "rule"
			for i, rule := range r.Spec.Rules {
				name := ""
				if rule.Name != nil {
					name = string(*rule.Name)
				}
				names = append(names, authpolicy.RuleName(i, name))
			}
		default:
			continue
		}
		if contains(names, section) {
			continue
		}
		f := ctx.Blame(p.Origin, "spec.targetRef.sectionName")
		valid := "it has none"
		if len(names) > 0 {
			valid = "it has " + strings.Join(names, ", ")
		}
		f.Message = fmt.Sprintf("sectionName %q names no %s of %s %s (%s): Kuadrant reports the AuthPolicy as TargetNotFound and ignores it",
			section, what, tr.Kind, key, valid)
		out = append(out, f)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func init() {
	Register(&Check{
		Code: "AGP209", Severity: SeverityWarning, Category: CategoryReferences,
		Title: "rule source names a ServiceAccount that does not exist",
		Explanation: `A rule's source names a ServiceAccount that is not in the input. When
serviceAccount.namespace is omitted it defaults to the policy's namespace, not the
caller's: a policy in the backend's namespace that names an agent's ServiceAccount
without its namespace matches a ServiceAccount that usually does not exist, and the
agent is denied. agpol reports this when the input comes from a cluster, or when a
ServiceAccount of that name exists in another namespace of the input.`,
		Fix:        `Set serviceAccount.namespace to the caller's namespace.`,
		DataPlanes: AppliesToAgentic,
		Run:        runMissingServiceAccount,
	})
}

func runMissingServiceAccount(ctx *Context) []Finding {
	if len(ctx.Snapshot.ServiceAccounts) == 0 && ctx.FromFilesOnly() {
		return nil
	}
	byName := map[string][]string{} // name -> namespaces
	exists := map[string]bool{}
	for _, sa := range ctx.Snapshot.ServiceAccounts {
		byName[sa.Name] = append(byName[sa.Name], sa.Namespace)
		exists[sa.Namespace+"/"+sa.Name] = true
	}
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		if isLegacy(p) {
			continue
		}
		for i, r := range p.Spec.Rules {
			sa := r.Source.ServiceAccount
			if sa == nil || sa.Name == "" || r.Source.Type != "ServiceAccount" {
				continue
			}
			ns := sa.Namespace
			if ns == "" {
				ns = p.Namespace
			}
			if exists[ns+"/"+sa.Name] {
				continue
			}
			elsewhere := byName[sa.Name]
			if len(elsewhere) == 0 && ctx.FromFilesOnly() {
				continue
			}
			f := ctx.Blame(p.Origin, fmt.Sprintf("spec.rules[%d].source.serviceAccount", i))
			f.Message = fmt.Sprintf("rule %q names ServiceAccount %s/%s, which does not exist", r.Name, ns, sa.Name)
			if sa.Namespace == "" {
				f.Message += fmt.Sprintf(" (serviceAccount.namespace defaults to the policy's namespace %s)", p.Namespace)
			}
			if len(elsewhere) > 0 {
				f.Message += fmt.Sprintf("; a ServiceAccount %s exists in %s", sa.Name, strings.Join(elsewhere, ", "))
			}
			out = append(out, f)
		}
	}
	return out
}
