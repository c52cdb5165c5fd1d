package lint

import (
	"fmt"

	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/parallel"
	"github.com/agpol/agpol/internal/snapshot"
)

func init() {
	Register(&Check{
		Code: "AGP305", Severity: SeverityWarning, Category: CategoryAdmission,
		Title: "CEL rule may be too expensive to evaluate",
		Explanation: `The expression compiles, and the controller accepts it, but its estimated worst-case
cost is over the runtime cost budget agpol evaluates with (1,000,000, the Kubernetes API
server's per-call limit for CEL rules; request strings bounded by Envoy's 60 KiB of
headers and 100 headers). Envoy evaluates it on every matching request without any
limit, so a request can make the data plane spend that much work. For a request whose
evaluation runs past the budget, agpol cannot know the rule's outcome: explain and
simulate decide the request both ways and answer indeterminate (exit 3) when the rule
could decide it.`,
		Fix: `Rewrite the expression without nested comprehensions over request data (split,
all, exists, map, filter inside one another), or match with Inline rules instead.`,
		DataPlanes: AppliesToAgentic,
		Run:        runCELCost,
	})
}

func runCELCost(ctx *Context) []Finding {
	compileCELRules(ctx)
	costs := celCosts(ctx)
	var out []Finding
	report := func(o snapshot.Origin, i int, expr string) {
		c := costs[expr]
		if !c.ok || c.est <= effective.CELCostLimit {
			return
		}
		f := ctx.Blame(o, fmt.Sprintf("spec.rules[%d].authorization.cel.expression", i))
		f.Message = fmt.Sprintf("its estimated worst-case cost %d exceeds agpol's runtime budget of %d: where a request costs more, explain cannot evaluate the rule and answers indeterminate; the controller accepts the rule and Envoy evaluates it on every matching request, without a limit",
			c.est, uint64(effective.CELCostLimit))
		out = append(out, f)
	}
	for _, p := range ctx.Snapshot.XAccessPolicies {
		if p.Legacy != nil {
			for i := range p.Legacy.Spec.Rules {
				if a := p.Legacy.Spec.Rules[i].Authorization; a != nil && a.Type == v0alpha0.AuthorizationRuleTypeCEL && a.CEL != nil {
					report(p.Origin, i, a.CEL.Expression)
				}
			}
			continue
		}
		for i := range p.Spec.Rules {
			if a := p.Spec.Rules[i].Authorization; a != nil && a.Type == v1alpha1.AuthorizationRuleTypeCEL && a.CEL != nil {
				report(p.Origin, i, a.CEL.Expression)
			}
		}
	}
	return out
}

// celCost is the estimated worst-case cost of an expression that compiles (ok false when
// it does not compile, AGP301, or cannot be estimated).
type celCost struct {
	est uint64
	ok  bool
}

// celCosts estimates each distinct CEL expression of the context once, in parallel: the
// estimate depends on the text alone, and compiling for it was most of this check's
// time on a topology whose policies repeat expressions.
func celCosts(ctx *Context) map[string]celCost {
	exprs := celExpressions(ctx)
	costs := make([]celCost, len(exprs))
	parallel.For(len(exprs), func(i int) {
		if _, err := effective.CompileCEL(exprs[i]); err != nil {
			return
		}
		costs[i].est, costs[i].ok = effective.CELEstimatedCost(exprs[i])
	})
	out := make(map[string]celCost, len(exprs))
	for i, e := range exprs {
		out[e] = costs[i]
	}
	return out
}
