package lint

import (
	"fmt"
	"reflect"
	"sort"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// maxPoliciesPerTarget is the controller's limit (pkg/constants/controller.go).
const maxPoliciesPerTarget = 5

func init() {
	Register(&Check{
		Code: "AGP501", Severity: SeverityError, Category: CategoryLoss,
		Title: "v0alpha0 XAccessPolicy is never enforced",
		Explanation: `The XAccessPolicy CRD serves v0alpha0 and v1alpha1 without a conversion webhook: an
object written at v0alpha0 is stored as v1alpha1 by relabelling, with no spec.action.
The current translator only reads Allow and ExternalAuth policies, so this policy is
never enforced (docs/semantics.md#v0alpha0) — its rules, tools lists and rule-level
ExternalAuth do
nothing. It is still admitted and still counts toward the limit of 5 policies per
target (docs/semantics.md#limit-per-target), so it can push a real policy out.

A v1alpha1 object without spec.action (as a v0alpha0 object reads back from a
cluster) is reported the same way.`,
		Fix: `Rewrite the policy at agentic.networking.x-k8s.io/v1alpha1 with action: Allow (or
ExternalAuth): InlineTools tools become mcp.methods [{name: tools/call, params: [...]}],
and a rule-level ExternalAuth becomes its own policy with action: ExternalAuth.`,
		DataPlanes: AppliesToAgentic,
		Run:        runLegacyPolicy,
	})
	Register(&Check{
		Code: "AGP502", Severity: SeverityError, Category: CategoryLoss,
		Title: "rule replaced by a same-named rule of a younger policy",
		Explanation: `All Allow policies on one target are merged into a single RBAC filter whose rules are
keyed by rule name only. Policies are merged oldest first, so when two Allow policies on
the same target both have a rule with the same name, the younger policy's rule silently
replaces the older one (docs/semantics.md#rule-name-collision). The older rule is never
enforced: callers it
admitted are denied, or, if the younger rule is broader, admitted more widely than the
older policy says.`,
		Fix: `Give rules names that are unique across all policies on the target, e.g. prefix them
with the policy name.`,
		DataPlanes: AppliesToAgentic,
		Run:        runRuleNameCollision,
	})
}

func runLegacyPolicy(ctx *Context) []Finding {
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		if !isLegacy(p) || ctx.Rejected(p.Origin) {
			continue // a v1alpha1 file without action is a schema error (AGP101)
		}
		f := ctx.Blame(p.Origin, "apiVersion")
		what := "was written at v0alpha0"
		if p.Legacy == nil {
			f = ctx.Blame(p.Origin, "spec")
			what = "has no spec.action (it was written at v0alpha0)"
		}
		f.Message = fmt.Sprintf("policy %s, so the controller never enforces it; it still counts toward the limit of %d policies per target%s",
			what, maxPoliciesPerTarget, limitNote(ctx, p))
		out = append(out, f)
	}
	return out
}

// limitNote says when a legacy policy takes one of the slots of a crowded target.
func limitNote(ctx *Context, p *snapshot.XAccessPolicy) string {
	for _, tr := range p.Spec.TargetRefs {
		ref := topology.Ref{Group: topology.NormalizeGroup(string(tr.Group)), Kind: string(tr.Kind), Namespace: p.Namespace, Name: string(tr.Name)}
		if n := len(ctx.Targets.AccessPolicies[ref]); n > 1 {
			return fmt.Sprintf(" (%s %s has %d)", tr.Kind, tr.Name, n)
		}
	}
	return ""
}

func runRuleNameCollision(ctx *Context) []Finding {
	var out []Finding
	for _, ref := range sortedRefs(ctx.Targets) {
		type owner struct {
			p *snapshot.XAccessPolicy
			i int
		}
		byName := map[string]owner{}
		for _, p := range ctx.Targets.AccessPolicies[ref] { // oldest first
			if !enforcedAllow(p) || ctx.Rejected(p.Origin) {
				continue // a policy the API server rejects never exists
			}
			for i := range p.Spec.Rules {
				r := &p.Spec.Rules[i]
				old, dup := byName[r.Name]
				byName[r.Name] = owner{p, i}
				if !dup || old.p == p {
					continue
				}
				if sameRule(&old.p.Spec.Rules[old.i], r) {
					continue // identical rules: nothing is lost
				}
				f := ctx.Blame(old.p.Origin, fmt.Sprintf("spec.rules[%d].name", old.i))
				f.Message = fmt.Sprintf("rule %q on %s is replaced by rule %q of the younger policy %s/%s (%s), so this rule is never enforced",
					r.Name, ref, r.Name, p.Namespace, p.Name, p.Source.String())
				out = append(out, f)
			}
		}
	}
	return out
}

func sameRule(a, b *v1alpha1.AccessRule) bool { return reflect.DeepEqual(a, b) }

// sortedRefs returns the targets of the index in a stable order.
func sortedRefs(t *topology.Targets) []topology.Ref {
	refs := make([]topology.Ref, 0, len(t.AccessPolicies))
	for r := range t.AccessPolicies {
		refs = append(refs, r)
	}
	sortRefs(refs)
	return refs
}

func sortRefs(refs []topology.Ref) {
	sort.Slice(refs, func(i, j int) bool {
		a, b := refs[i], refs[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Group < b.Group
	})
}

func init() {
	Register(&Check{
		Code: "AGP508", Severity: SeverityWarning, Category: CategoryLoss,
		Title: "HTTPRoute query param regular expression compared as text",
		Explanation: `The match gives a query parameter type: RegularExpression. The kube-agentic-networking
translator builds every query parameter matcher as an exact string match, whatever
the type: the data plane compares the parameter with the pattern's text ("[a-z]+"),
never as a regular expression. The match almost never matches, so the rule does not
receive the requests it was written for; they go to a less specific rule, or get 404.`,
		Fix: `Use type: Exact with the values you expect, or match on the path or a header, which the
data plane does match as regular expressions.`,
		DataPlanes: AppliesToAgentic,
		Run:        runQueryRegexAsText,
	})
}

func runQueryRegexAsText(ctx *Context) []Finding {
	var out []Finding
	forEachRouteMatch(ctx, func(r *snapshot.HTTPRoute, field string, m *gwapiv1.HTTPRouteMatch) {
		for k, q := range m.QueryParams {
			if q.Type == nil || *q.Type != gwapiv1.QueryParamMatchRegularExpression {
				continue
			}
			f := ctx.Blame(r.Origin, fmt.Sprintf("%s.queryParams[%d].type", field, k))
			f.Message = fmt.Sprintf("query param %q is matched against the text %q, not as a regular expression: the data plane builds an exact match", q.Name, q.Value)
			out = append(out, f)
		}
	})
	return out
}
