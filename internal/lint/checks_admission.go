package lint

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/parallel"
	"github.com/agpol/agpol/internal/snapshot"
)

func init() {
	Register(&Check{
		Code: "AGP301", Severity: SeverityError, Category: CategoryAdmission,
		Title: "CEL rule does not compile or uses a variable outside the allow-list",
		Explanation: `The controller compiles every CEL rule when it admits a policy. Only these request
attributes are allowed (a prefix check over every request.… chain in the text, string
literals included): request.mcp.tool_name, request.path, request.url_path,
request.method, request.host, request.headers, request.time. Any other request.… name,
another root variable (source, identity, connection), or a syntax or type error makes
the controller reject the whole policy with reason InvalidCEL, for all its targets.
A rejected Allow policy is ignored: if it was the only Allow policy on its target, the
target is open to everyone (docs/semantics.md#cel).`,
		Fix: `Use only the allowed attributes, e.g. request.mcp.tool_name.startsWith('read_') or
request.headers['x-tenant'] == 'a'. Test the expression with agpol explain before
applying it.`,
		DataPlanes: AppliesToAgentic,
		Run:        runCELCompile,
	})
	Register(&Check{
		Code: "AGP302", Severity: SeverityError, Category: CategoryAdmission,
		Title: "policy over the limit of 5 per target",
		Explanation: `The controller admits at most 5 XAccessPolicies per target (group, kind and name in the
policy's namespace; sectionName ignored). It counts every policy on the target, whatever
its action, acceptance or apiVersion — rejected and v0alpha0 policies included
(docs/semantics.md#limit-per-target) —
and rejects a policy when 5 others are more senior (older creationTimestamp, then
smaller name), with reason LimitPerTargetExceeded. A rejected policy is rejected for
all its targets and ignored: an Allow policy's rules do not apply, and if it was meant
to restrict the target, the target is more open than the manifests say.`,
		Fix: `Merge policies (a policy has up to 10 rules), delete unused or v0alpha0 policies on the
target, or move backend-specific rules to the XBackend.`,
		DataPlanes: AppliesToAgentic,
		Run:        runAdmission(admissionLimit),
	})
	Register(&Check{
		Code: "AGP303", Severity: SeverityError, Category: CategoryAdmission,
		Title: "second ExternalAuth policy on a target",
		Explanation: `Only one ExternalAuth XAccessPolicy per target is supported. The controller rejects an
ExternalAuth policy when an older one (accepted or not) targets the same object, with
reason LimitPerTargetExceeded and the message "An older ExternalAuth AccessPolicy
already exists for target <name>". The younger authorizer is never called.`,
		Fix: `Keep one ExternalAuth policy per target: put all rules that should trigger the authorizer
into it, or attach the second authorizer to the XBackend level instead of the Gateway.`,
		DataPlanes: AppliesToAgentic,
		Run:        runAdmission(admissionExtAuth),
	})
	Register(&Check{
		Code: "AGP304", Severity: SeverityWarning, Category: CategoryAdmission,
		Title: "recorded status disagrees with the computed admission",
		Explanation: `The data plane follows the status the controller recorded on the policy
(status.ancestors, every ancestor Accepted=True), and the controller does not re-admit
policies when others are deleted, nor clears InvalidCEL when the expression is fixed
without changing the targets (docs/semantics.md#recorded-status). The recorded status can
therefore be
stale: a policy may be enforced although it would now be rejected, or ignored although
it would now be accepted.`,
		Fix: `Make the controller re-evaluate the policy (change its targetRefs, or re-create it), or
restart the controller; then check its status again.`,
		DataPlanes: AppliesToAgentic,
		Run:        runAdmission(admissionStale),
	})
}

// admissions computes the controller's admission over the objects that exist (objects
// the API server rejects are left out of the counts), once per context.
func admissions(ctx *Context) map[*snapshot.XAccessPolicy]effective.Admission {
	return Memo(ctx, "admission", func() map[*snapshot.XAccessPolicy]effective.Admission {
		s := *ctx.Snapshot
		s.XAccessPolicies = nil
		for _, p := range ctx.Snapshot.XAccessPolicies {
			if !ctx.Rejected(p.Origin) {
				s.XAccessPolicies = append(s.XAccessPolicies, p)
			}
		}
		return effective.Admit(&s, effective.Reference())
	})
}

type admissionKind int

const (
	admissionLimit admissionKind = iota
	admissionExtAuth
	admissionStale
)

func runAdmission(kind admissionKind) func(*Context) []Finding {
	return func(ctx *Context) []Finding {
		adm := admissions(ctx)
		var out []Finding
		for _, p := range ctx.Snapshot.XAccessPolicies {
			a, ok := adm[p]
			if !ok {
				continue
			}
			switch kind {
			case admissionLimit, admissionExtAuth:
				if a.Status.Accepted || a.Status.Reason != effective.ReasonLimit {
					continue
				}
				if (kind == admissionExtAuth) != olderExtAuth(ctx, p) {
					continue
				}
				f := ctx.Blame(p.Origin, "spec.targetRefs")
				f.Message = fmt.Sprintf("the controller rejects this policy (LimitPerTargetExceeded: %s)%s", a.Status.Message, rejectedConsequence(p))
				out = append(out, f)
			case admissionStale:
				if !a.DiffersFromRecorded || a.Recorded == nil {
					continue
				}
				f := ctx.Blame(p.Origin, "status.ancestors")
				f.Message = fmt.Sprintf("the recorded status says %s but agpol computes %s; the data plane follows the recorded status",
					statusText(*a.Recorded), statusText(a.Status))
				out = append(out, f)
			}
		}
		return out
	}
}

// olderExtAuth reports whether an ExternalAuth policy has a more senior ExternalAuth
// policy on one of its targets (the controller's one-ExternalAuth-per-target rule).
func olderExtAuth(ctx *Context, p *snapshot.XAccessPolicy) bool {
	if p.Spec.Action != v1alpha1.ActionTypeExternalAuth {
		return false
	}
	for _, o := range ctx.Snapshot.XAccessPolicies {
		if o == p || o.Namespace != p.Namespace || o.Spec.Action != v1alpha1.ActionTypeExternalAuth || ctx.Rejected(o.Origin) {
			continue
		}
		if sharesTarget(o, p) && effective.MoreSenior(o, p) {
			return true
		}
	}
	return false
}

func sharesTarget(a, b *snapshot.XAccessPolicy) bool {
	for _, x := range a.Spec.TargetRefs {
		for _, y := range b.Spec.TargetRefs {
			if x.Group == y.Group && x.Kind == y.Kind && x.Name == y.Name {
				return true
			}
		}
	}
	return false
}

func rejectedConsequence(p *snapshot.XAccessPolicy) string {
	switch p.Spec.Action {
	case v1alpha1.ActionTypeAllow:
		return "; its rules are not enforced on any of its targets"
	case v1alpha1.ActionTypeExternalAuth:
		return "; its authorizer is never called"
	}
	return ""
}

func statusText(s effective.Status) string {
	if s.Accepted {
		return "Accepted"
	}
	if s.Reason == "" {
		return "not accepted"
	}
	return "not accepted (" + s.Reason + ")"
}

// compileCELRules compiles every distinct CEL expression of the policies once per
// context, in parallel (expressions are independent, and effective.CompileCEL keeps
// each result, safe for concurrent use), before the checks that read them one by one.
func compileCELRules(ctx *Context) {
	Memo(ctx, "cel", func() bool {
		exprs := celExpressions(ctx)
		parallel.For(len(exprs), func(i int) { _, _ = effective.CompileCEL(exprs[i]) })
		return true
	})
}

// celExpressions lists the distinct CEL expressions of the context's XAccessPolicies, in
// the order they first appear.
func celExpressions(ctx *Context) []string {
	return Memo(ctx, "cel-expressions", func() []string {
		seen := map[string]bool{}
		var exprs []string
		add := func(e string) {
			if !seen[e] {
				seen[e] = true
				exprs = append(exprs, e)
			}
		}
		for _, p := range ctx.Snapshot.XAccessPolicies {
			if p.Legacy != nil {
				for _, r := range p.Legacy.Spec.Rules {
					if a := r.Authorization; a != nil && a.Type == v0alpha0.AuthorizationRuleTypeCEL && a.CEL != nil {
						add(a.CEL.Expression)
					}
				}
				continue
			}
			for _, r := range p.Spec.Rules {
				if a := r.Authorization; a != nil && a.Type == v1alpha1.AuthorizationRuleTypeCEL && a.CEL != nil {
					add(a.CEL.Expression)
				}
			}
		}
		return exprs
	})
}

func runCELCompile(ctx *Context) []Finding {
	compileCELRules(ctx)
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		if isLegacy(p) {
			continue
		}
		for i := range p.Spec.Rules {
			a := p.Spec.Rules[i].Authorization
			if a == nil || a.Type != v1alpha1.AuthorizationRuleTypeCEL || a.CEL == nil {
				continue
			}
			_, err := effective.CompileCEL(a.CEL.Expression)
			if err == nil {
				continue
			}
			f := ctx.Blame(p.Origin, fmt.Sprintf("spec.rules[%d].authorization.cel.expression", i))
			f.Message = fmt.Sprintf("the controller rejects the policy (InvalidCEL) for all its targets: Failed to compile CEL expression %q: %v",
				a.CEL.Expression, oneLine(err.Error()))
			out = append(out, f)
		}
	}
	return out
}

// oneLine folds a multi-line compiler message (with its caret diagram) into one line.
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var keep []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "|") {
			continue
		}
		keep = append(keep, t)
	}
	return strings.Join(keep, "; ")
}
