package authpolicy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
)

// Outcome is Authorino's answer to a request that carries an identity, decided as its
// auth pipeline does (pkg/service/auth_pipeline.go: identity, metadata, authorization,
// response; docs/kuadrant-identities.md).
type Outcome struct {
	// Verdict is "allow", "deny" or "indeterminate".
	Verdict string `json:"verdict"`
	// Code is the HTTP status the client gets: 200, 401 (unauthenticated), 403
	// (unauthorized), or the policy's response override; 0 when indeterminate.
	Code int `json:"code,omitempty"`
	// Phase is the phase that decided: "authentication" or "authorization".
	Phase string `json:"phase,omitempty"`
	// Rule and Source name the deciding rule and its policy, when one rule decided.
	Rule   string `json:"rule,omitempty"`
	Source string `json:"source,omitempty"`
	// Identity is the authentication rule whose identity the request was authorized with.
	Identity string `json:"identity,omitempty"`
	Reason   string `json:"reason"`
	// Notes are what Authorino does that surprises, where it decided this request.
	Notes []string `json:"notes,omitempty"`
	// Authorization is each authorization rule's result with the winning identity.
	Authorization []RuleOutcome `json:"authorization,omitempty"`
}

// RuleOutcome is one rule's result in Authorino's pipeline.
type RuleOutcome struct {
	Name   string `json:"name"`
	Runs   Tri    `json:"runs"`
	Passes Tri    `json:"passes"`
	Reason string `json:"reason,omitempty"`
}

// Outcome verdicts.
const (
	OutcomeAllow         = "allow"
	OutcomeDeny          = "deny"
	OutcomeIndeterminate = "indeterminate"
)

// authnResult is what one authentication rule makes of the request's identity.
type authnResult struct {
	rule     Rule
	spec     *kuadrantv1.AuthenticationSpec
	runs     Tri
	result   Tri // True: verified; False: rejected; Unknown: cannot be known
	identity any
	// unknown are auth.identity paths that stay unknown (a Secret's data).
	unknown []string
	reason  string
	notes   []string
}

// decide runs Authorino's pipeline on the effective policy for a request with an
// identity. c evaluates conditions before the identity is known.
func decide(e *Effective, req Request, env *Env, c *conditionEvaluator) *Outcome {
	if env == nil {
		env = NewEnv(nil)
	}
	var authn []*authnResult
	for _, r := range e.Group("authentication") {
		spec, err := parseAuthentication(r.Spec)
		if err != nil {
			return &Outcome{Verdict: OutcomeIndeterminate, Reason: fmt.Sprintf("authentication %s of %s cannot be read: %v", r.Name, r.Source, err)}
		}
		ar := &authnResult{rule: r, spec: spec}
		_, ar.runs = c.conditions(spec.Conditions)
		if ar.runs != False {
			verify(ar, req, env)
		}
		authn = append(authn, ar)
	}
	if name := req.Identity.Rule; name != "" {
		found := false
		var names []string
		for _, a := range authn {
			found = found || a.rule.Name == name
			names = append(names, a.rule.Name)
		}
		if !found {
			return &Outcome{Verdict: OutcomeIndeterminate, Phase: "authentication", Reason: fmt.Sprintf("the identity names rule %s, and the effective policy has no authentication rule of that name (it has: %s)", name, strings.Join(names, ", "))}
		}
	}
	if len(authn) == 0 {
		// Authorino adds an anonymous identity when an AuthConfig has none
		// (controllers/auth_config_controller.go:247-259).
		authn = append(authn, &authnResult{rule: Rule{Name: "anonymous"}, runs: True, result: True, identity: map[string]any{"anonymous": true}, reason: "no authentication rule: Authorino adds an anonymous one"})
	}
	// Priority groups in ascending order; inside a group the first rule to verify wins
	// (auth_pipeline.go:207-262, evaluateOneAuthConfig).
	byPrio := map[int][]*authnResult{}
	var prios []int
	for _, a := range authn {
		p := 0
		if a.spec != nil {
			p = a.spec.Priority
		}
		if _, ok := byPrio[p]; !ok {
			prios = append(prios, p)
		}
		byPrio[p] = append(byPrio[p], a)
	}
	sort.Ints(prios)
	var failures []string
	for _, p := range prios {
		group := byPrio[p]
		sort.Slice(group, func(i, j int) bool { return group[i].rule.Name < group[j].rule.Name })
		var winners, uncertain []*authnResult
		for _, a := range group {
			switch {
			case a.runs == False:
				failures = append(failures, fmt.Sprintf("%s: skipped (its when conditions do not hold)", a.rule.Name))
			case a.runs == True && a.result == True:
				winners = append(winners, a)
			case a.result == False:
				failures = append(failures, a.rule.Name+": "+a.reason)
			default:
				uncertain = append(uncertain, a)
			}
		}
		if len(uncertain) > 0 {
			var names []string
			for _, a := range uncertain {
				r := a.reason
				if a.runs == Unknown {
					r = "whether its when conditions hold is not known"
				}
				names = append(names, a.rule.Name+" ("+r+")")
			}
			if len(winners) == 0 {
				return &Outcome{Verdict: OutcomeIndeterminate, Phase: "authentication", Reason: "authentication cannot be known: " + strings.Join(names, "; ")}
			}
			return &Outcome{Verdict: OutcomeIndeterminate, Phase: "authentication", Reason: fmt.Sprintf("rule %s verifies the identity, and %s at the same priority (%d) may too: Authorino evaluates rules of one priority concurrently and takes the first to succeed (auth_pipeline.go:207-262)", winners[0].rule.Name, strings.Join(names, "; "), p)}
		}
		if len(winners) == 0 {
			continue
		}
		outs := make([]*Outcome, len(winners))
		for i, w := range winners {
			outs[i] = authorize(e, req, env, c, w)
		}
		for i := 1; i < len(outs); i++ {
			if outs[i].Verdict != outs[0].Verdict || outs[i].Code != outs[0].Code {
				var alts []string
				for j, o := range outs {
					alts = append(alts, fmt.Sprintf("with %s's identity: %s (%s)", winners[j].rule.Name, describeOutcome(o), o.Reason))
				}
				return &Outcome{Verdict: OutcomeIndeterminate, Phase: "authentication", Reason: fmt.Sprintf("a race: rules %s all verify the identity at priority %d, Authorino takes whichever finishes first (auth_pipeline.go:207-262), and the answers differ: %s", ruleNames(winners), p, strings.Join(alts, "; "))}
			}
		}
		out := outs[0]
		if len(winners) > 1 {
			out.Notes = append(out.Notes, fmt.Sprintf("rules %s all verify the identity at priority %d; Authorino takes the first to finish, and each gives this answer", ruleNames(winners), p))
		}
		out.Notes = append(out.Notes, assumedForm(authn, req.Identity, out.Identity)...)
		return out
	}
	out := &Outcome{Verdict: OutcomeDeny, Code: 401, Phase: "authentication", Reason: "no authentication rule verifies the identity (" + strings.Join(failures, "; ") + "): Authorino answers UNAUTHENTICATED (auth_pipeline.go:475-479)"}
	for _, a := range authn {
		out.Notes = append(out.Notes, a.notes...)
	}
	out.Notes = append(out.Notes, assumedForm(authn, req.Identity, "")...)
	if len(authn) == 1 {
		out.Rule, out.Source = authn[0].rule.Name, authn[0].rule.Source
	}
	denyWith(e, "unauthenticated", out)
	return out
}

func ruleNames(rs []*authnResult) string {
	var names []string
	for _, r := range rs {
		names = append(names, r.rule.Name)
	}
	return strings.Join(names, ", ")
}

func describeOutcome(o *Outcome) string {
	if o.Verdict == OutcomeIndeterminate {
		return "indeterminate"
	}
	return fmt.Sprintf("%s %d", o.Verdict, o.Code)
}

// denyWith applies the policy's response.unauthenticated or response.unauthorized code
// (auth_pipeline.go:631-635, customizeDenyWith).
func denyWith(e *Effective, which string, out *Outcome) {
	r, ok := e.Rules["response."+which+"#"]
	if !ok {
		return
	}
	var spec struct {
		Code int `json:"code"`
	}
	if json.Unmarshal(r.Spec, &spec) == nil && spec.Code != 0 {
		out.Reason += fmt.Sprintf("; response.%s of %s sets the status to %d", which, r.Source, spec.Code)
		out.Code = spec.Code
	}
}

// assumedForm says which credential form agpol assumed when the identity names no
// rule and several rules of its kind read the Authorization header with different
// prefixes: a request carries one Authorization header, and each rule reads only its
// own prefix (pkg/auth/credentials.go:134-145), so no request presents the credential
// to all of them. agpol decides as if each rule were given it in its own form; the
// answer is that of the deciding rule's form (identity, "" when none verified).
func assumedForm(authn []*authnResult, id *Identity, identity string) []string {
	if id == nil || id.Rule != "" {
		return nil
	}
	want := map[string]string{IdentityJWT: "jwt", IdentityAPIKey: "apiKey", IdentityKubernetes: "kubernetesTokenReview"}[id.Kind()]
	var forms []string
	prefixes := map[string]bool{}
	decidingForm := ""
	for _, a := range authn {
		if a.spec == nil || a.runs == False {
			continue
		}
		if m := a.spec.AuthenticationMethods(); len(m) != 1 || m[0] != want {
			continue
		}
		c := a.spec.Credentials
		if c.CustomHeader != nil || c.QueryString != nil || c.Cookie != nil {
			continue
		}
		prefix := "Bearer"
		if c.AuthorizationHeader != nil && c.AuthorizationHeader.Prefix != "" {
			prefix = c.AuthorizationHeader.Prefix
		}
		prefixes[prefix] = true
		form := fmt.Sprintf("%s reads \"Authorization: %s ...\"", a.rule.Name, prefix)
		forms = append(forms, form)
		if a.rule.Name == identity {
			decidingForm = form
		}
	}
	if len(prefixes) < 2 {
		return nil
	}
	note := fmt.Sprintf("the identity names no rule, and rules of its kind read one Authorization header with different prefixes (%s), while a request carries one Authorization header and Authorino reads only each rule's own prefix (pkg/auth/credentials.go:134-145): agpol assumed the credential presented to each rule in its own form", strings.Join(forms, "; "))
	if decidingForm != "" {
		note += "; this answer is the one for " + identity + "'s form"
	}
	return []string{note + "; name the rule with identity.rule (--identity-rule) for the answer of one form"}
}
