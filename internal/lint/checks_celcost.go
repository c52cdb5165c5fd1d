package lint

import (
	"fmt"

	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
)

func init() {
	Register(&Check{
		Code: "AGP305", Severity: SeverityWarning, Category: CategoryAdmission,
		Title: "CEL rule too expensive to evaluate",
		Explanation: `The expression compiles, and the controller accepts it, but its estimated worst-case
cost is over the limit the Kubernetes API server puts on CEL rules (10,000,000, with
request strings bounded by Envoy's 60 KiB of headers and 100 headers). Envoy evaluates
it on every matching request without any limit, so a request can make the data plane
spend that much work. agpol refuses to evaluate it: explain and simulate treat the rule
as not matching and say so, which may differ from what the data plane decides.`,
		Fix: `Rewrite the expression without nested comprehensions over request data (split,
all, exists, map, filter inside one another), or match with Inline rules instead.`,
		Run: runCELCost,
	})
}

func runCELCost(ctx *Context) []Finding {
	compileCELRules(ctx)
	var out []Finding
	report := func(o snapshot.Origin, i int, expr string) {
		prg, err := effective.CompileCEL(expr)
		if err != nil {
			return // AGP301
		}
		refusal := effective.CELTooExpensive(prg)
		if refusal == nil {
			return
		}
		f := ctx.Blame(o, fmt.Sprintf("spec.rules[%d].authorization.cel.expression", i))
		f.Message = fmt.Sprintf("%v; the controller accepts the rule and Envoy evaluates it on every matching request, without a limit", refusal)
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
