package authpolicy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/tidwall/gjson"
	"google.golang.org/protobuf/types/known/structpb"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
)

// authorize runs the phases after authentication with the identity w verified: the
// identity's defaults and overrides, metadata, authorization (auth_pipeline.go:480-495).
func authorize(e *Effective, req Request, env *Env, c *conditionEvaluator, w *authnResult) *Outcome {
	out := &Outcome{Identity: w.rule.Name}
	out.NoteWhys = append(out.NoteWhys, w.noteWhys...)
	identity, unknown := w.identity, append([]string(nil), w.unknown...)
	if w.spec != nil && (len(w.spec.Defaults) > 0 || len(w.spec.Overrides) > 0) {
		var err error
		identity, unknown, err = extend(c, identity, unknown, w.spec)
		if err != nil {
			return &Outcome{Verdict: OutcomeIndeterminate, Phase: "authentication", Identity: w.rule.Name, Why: Why{Code: WhyExtensionFails, Err: err.Error()}}
		}
	}
	// A metadata rule runs when its `when` holds on the request and the identity
	// (auth_pipeline.go:264-289, the rule's conditions as every evaluator's,
	// :123-127): a skipped rule leaves auth.metadata.NAME absent, whatever the request
	// says it would fetch.
	metadata := map[string]any{}
	mc := c.withAuth(map[string]any{"identity": identity, "metadata": map[string]any{}}, append(append([]string(nil), unknown...), "auth.metadata"))
	for _, r := range e.Group("metadata") {
		var spec struct {
			Conditions []kuadrantv1.PatternExpressionOrRef `json:"when,omitempty"`
		}
		if err := json.Unmarshal(r.Spec, &spec); err != nil {
			return &Outcome{Verdict: OutcomeIndeterminate, Phase: "metadata", Identity: w.rule.Name, Why: Why{Code: WhyRuleUnreadable, Group: "metadata", Rule: r.Name, Source: r.Source, Err: err.Error()}}
		}
		_, runs := mc.conditions(spec.Conditions)
		v, given := req.Metadata[r.Name]
		switch {
		case runs == False:
		case runs == True && given:
			metadata[r.Name] = v
		default:
			unknown = append(unknown, "auth.metadata."+r.Name)
		}
	}
	auth := map[string]any{"identity": identity, "metadata": metadata, "authorization": map[string]any{}}
	ac := c.withAuth(auth, unknown)

	type authzResult struct {
		rule     Rule
		priority int
		runs     Tri
		passes   Tri
		why      Why
	}
	var results []authzResult
	for _, r := range e.Group("authorization") {
		spec, err := parseAuthorization(r.Spec)
		if err != nil {
			return &Outcome{Verdict: OutcomeIndeterminate, Phase: "authorization", Identity: w.rule.Name, Why: Why{Code: WhyRuleUnreadable, Group: "authorization", Rule: r.Name, Source: r.Source, Err: err.Error()}}
		}
		ar := authzResult{rule: r, priority: spec.Priority}
		_, ar.runs = ac.conditions(spec.Conditions)
		ar.passes, ar.why = authorizeRule(ac, req, env, r.Name, spec)
		results = append(results, ar)
	}
	sort.SliceStable(results, func(i, j int) bool {
		if results[i].priority != results[j].priority {
			return results[i].priority < results[j].priority
		}
		return results[i].rule.Name < results[j].rule.Name
	})
	for _, r := range results {
		out.Authorization = append(out.Authorization, RuleOutcome{Name: r.rule.Name, Runs: r.runs, Passes: r.passes, Why: r.why})
	}
	var unknownWhys []RuleWhy
	for _, r := range results {
		switch {
		case r.runs == False:
		case r.runs == True && r.passes == False:
			// Every rule that runs must pass; a rule that surely runs and fails denies
			// whatever the others do (evaluateAllAuthConfigs, auth_pipeline.go:291-329).
			out.Verdict, out.Code, out.Phase, out.Rule, out.Source = OutcomeDeny, 403, "authorization", r.rule.Name, r.rule.Source
			because := r.why
			out.Why = Why{Code: WhyUnauthorized, Rule: r.rule.Name, Source: r.rule.Source, Identity: w.rule.Name, Because: &because}
			denyWith(e, "unauthorized", out)
			return out
		case r.passes == True && r.runs == Unknown:
		case r.passes == True:
		default:
			why := r.why
			if r.runs == Unknown && r.passes != Unknown {
				why = Why{Code: WhyWhenUnknown}
			}
			unknownWhys = append(unknownWhys, RuleWhy{Rule: r.rule.Name, Why: why})
		}
	}
	if len(unknownWhys) > 0 {
		out.Verdict, out.Phase = OutcomeIndeterminate, "authorization"
		authn := w.why
		out.Why = Why{Code: WhyAuthzUnknown, Identity: w.rule.Name, Authn: &authn, Parts: unknownWhys}
		return out
	}
	out.Verdict, out.Code = OutcomeAllow, 200
	authn := w.why
	out.Why = Why{Code: WhyAllowed, Identity: w.rule.Name, Authn: &authn}
	for _, r := range results {
		if r.runs != False {
			out.Why.Parts = append(out.Why.Parts, RuleWhy{Rule: r.rule.Name, Why: r.why})
		}
	}
	return out
}

// extend applies an identity's defaults and overrides (pkg/evaluators/identity.go:180-206,
// identity_extension.go:24-29): a default only where the property is absent.
func extend(c *conditionEvaluator, identity any, unknown []string, spec *kuadrantv1.AuthenticationSpec) (any, []string, error) {
	obj := map[string]any{}
	if m, ok := identity.(map[string]any); ok {
		for k, v := range m {
			obj[k] = v
		}
	}
	ac := c.withAuth(map[string]any{"identity": identity}, unknown)
	apply := func(props map[string]kuadrantv1.ValueOrSelector, overwrite bool) error {
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if _, exists := obj[n]; exists && !overwrite {
				continue
			}
			v, known, err := ac.resolve(props[n])
			if err != nil {
				return fmt.Errorf("%s: %v", n, err)
			}
			if !known {
				unknown = append(unknown, "auth.identity."+n)
				continue
			}
			obj[n] = v
		}
		return nil
	}
	if err := apply(spec.Defaults, false); err != nil {
		return nil, nil, err
	}
	if err := apply(spec.Overrides, true); err != nil {
		return nil, nil, err
	}
	return obj, unknown, nil
}

// resolve is a ValueOrSelector's value: static, a gjson selector over the auth data, or
// a CEL expression. known is false when it reads what is not known.
func (c *conditionEvaluator) resolve(v kuadrantv1.ValueOrSelector) (any, bool, error) {
	switch {
	case v.Value != nil:
		var out any
		return out, true, json.Unmarshal(v.Value.Raw, &out)
	case v.Selector != "":
		s := strings.TrimPrefix(v.Selector, "context.")
		if !strings.HasPrefix(s, "auth.") || c.auth == nil {
			val, ok, _ := c.selector(v.Selector)
			return val, ok, nil
		}
		for _, u := range c.authUnknown {
			if s == u || strings.HasPrefix(s, u+".") {
				return nil, false, nil
			}
		}
		return gjson.Get(c.authJSON, strings.TrimPrefix(s, "auth.")).Value(), true, nil
	case v.Expression != "":
		p := compilePredicate(v.Expression)
		if p.prg == nil {
			return nil, false, fmt.Errorf("%s", p.reason)
		}
		act, err := cel.PartialVars(c.vars, append(c.unknowns, c.authPatterns()...)...)
		if err != nil {
			return nil, false, err
		}
		out, _, err := p.prg.Eval(act)
		if err != nil || types.IsUnknown(out) {
			return nil, false, nil
		}
		val, err := out.ConvertToNative(reflect.TypeOf(&structpb.Value{}))
		if err != nil {
			return out.Value(), true, nil
		}
		return val.(*structpb.Value).AsInterface(), true, nil
	}
	return nil, true, nil
}

// authorizeRule decides one authorization rule with the auth data known to c.
func authorizeRule(c *conditionEvaluator, req Request, env *Env, name string, spec *kuadrantv1.AuthorizationSpec) (Tri, Why) {
	if d, ok := req.Decisions[name]; ok {
		return triOf(d == "allow"), Why{Code: WhyRuleGiven, Decision: d}
	}
	switch {
	case spec.PatternMatching != nil:
		checks, res := c.conditions(spec.PatternMatching.Patterns)
		return res, Why{Code: WhyRulePatterns, Checks: checks}
	case spec.OPA != nil:
		return evalOPA(c, spec.OPA.Raw)
	case spec.KubernetesSubjectAccessReview != nil:
		return subjectAccessReview(c, req, env, spec.KubernetesSubjectAccessReview.Raw)
	case spec.SpiceDB != nil:
		return Unknown, Why{Code: WhySpiceDB}
	}
	return Unknown, Why{Code: WhyAuthzUnknownMethod}
}
