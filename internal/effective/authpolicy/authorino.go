package authpolicy

import (
	"encoding/json"
	"sort"

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
	// Why is what decided, as data.
	Why Why `json:"-"`
	// Reason is Why's sentence: empty here, written by render (-o json shows it).
	Reason string `json:"reason"`
	// NoteWhys are what Authorino does that surprises, where it decided this request.
	NoteWhys []Why `json:"-"`
	// Notes are NoteWhys' sentences: empty here, written by render.
	Notes []string `json:"notes,omitempty"`
	// Authorization is each authorization rule's result with the winning identity.
	Authorization []RuleOutcome `json:"authorization,omitempty"`
}

// RuleOutcome is one rule's result in Authorino's pipeline.
type RuleOutcome struct {
	Name   string `json:"name"`
	Runs   Tri    `json:"runs"`
	Passes Tri    `json:"passes"`
	// Why is the rule's result, as data; Reason its sentence, written by render.
	Why    Why    `json:"-"`
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
	// why is the result, as data; noteWhys what surprises.
	why      Why
	noteWhys []Why
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
			return &Outcome{Verdict: OutcomeIndeterminate, Why: Why{Code: WhyRuleUnreadable, Group: "authentication", Rule: r.Name, Source: r.Source, Err: err.Error()}}
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
			return &Outcome{Verdict: OutcomeIndeterminate, Phase: "authentication", Why: Why{Code: WhyIdentityRuleMissing, Rule: name, Rules: names}}
		}
	}
	if len(authn) == 0 {
		// Authorino adds an anonymous identity when an AuthConfig has none
		// (controllers/auth_config_controller.go:247-259).
		authn = append(authn, &authnResult{rule: Rule{Name: "anonymous"}, runs: True, result: True, identity: map[string]any{"anonymous": true}, why: Why{Code: WhyAuthnAnonymousAdded}})
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
	var failed []RuleWhy
	for _, p := range prios {
		group := byPrio[p]
		sort.Slice(group, func(i, j int) bool { return group[i].rule.Name < group[j].rule.Name })
		var winners, uncertain []*authnResult
		for _, a := range group {
			switch {
			case a.runs == False:
				failed = append(failed, RuleWhy{Rule: a.rule.Name, Why: Why{Code: WhyAuthnSkipped}})
			case a.runs == True && a.result == True:
				winners = append(winners, a)
			case a.result == False:
				failed = append(failed, RuleWhy{Rule: a.rule.Name, Why: a.why})
			default:
				uncertain = append(uncertain, a)
			}
		}
		if len(uncertain) > 0 {
			var parts []RuleWhy
			for _, a := range uncertain {
				w := a.why
				if a.runs == Unknown {
					w = Why{Code: WhyWhenUnknown}
				}
				parts = append(parts, RuleWhy{Rule: a.rule.Name, Why: w})
			}
			if len(winners) == 0 {
				return &Outcome{Verdict: OutcomeIndeterminate, Phase: "authentication", Why: Why{Code: WhyAuthnUnknown, Parts: parts}}
			}
			return &Outcome{Verdict: OutcomeIndeterminate, Phase: "authentication", Why: Why{Code: WhyAuthnMayRace, Rule: winners[0].rule.Name, Priority: p, Parts: parts}}
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
				return &Outcome{Verdict: OutcomeIndeterminate, Phase: "authentication", Why: Why{Code: WhyAuthnRace, Rules: ruleNameList(winners), Priority: p, Alternatives: outs}}
			}
		}
		out := outs[0]
		if len(winners) > 1 {
			out.NoteWhys = append(out.NoteWhys, Why{Code: NoteSameAnswer, Rules: ruleNameList(winners), Priority: p})
		}
		out.NoteWhys = append(out.NoteWhys, assumedForm(authn, req.Identity, out.Identity)...)
		return out
	}
	out := &Outcome{Verdict: OutcomeDeny, Code: 401, Phase: "authentication", Why: Why{Code: WhyUnauthenticated, Parts: failed}}
	for _, a := range authn {
		out.NoteWhys = append(out.NoteWhys, a.noteWhys...)
	}
	out.NoteWhys = append(out.NoteWhys, assumedForm(authn, req.Identity, "")...)
	if len(authn) == 1 {
		out.Rule, out.Source = authn[0].rule.Name, authn[0].rule.Source
	}
	denyWith(e, "unauthenticated", out)
	return out
}

func ruleNameList(rs []*authnResult) []string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.rule.Name
	}
	return names
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
		out.Why.Override = &StatusOverride{Response: which, Source: r.Source, Code: spec.Code}
		out.Code = spec.Code
	}
}

// assumedForm says which credential form agpol assumed when the identity names no
// rule and several rules of its kind read the Authorization header with different
// prefixes: a request carries one Authorization header, and each rule reads only its
// own prefix (pkg/auth/credentials.go:134-145), so no request presents the credential
// to all of them. agpol decides as if each rule were given it in its own form; the
// answer is that of the deciding rule's form (identity, "" when none verified).
func assumedForm(authn []*authnResult, id *Identity, identity string) []Why {
	if id == nil || id.Rule != "" {
		return nil
	}
	want := map[string]string{IdentityJWT: "jwt", IdentityAPIKey: "apiKey", IdentityKubernetes: "kubernetesTokenReview"}[id.Kind()]
	var forms []CredentialForm
	prefixes := map[string]bool{}
	deciding := ""
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
		forms = append(forms, CredentialForm{Rule: a.rule.Name, Prefix: prefix})
		if a.rule.Name == identity {
			deciding = identity
		}
	}
	if len(prefixes) < 2 {
		return nil
	}
	return []Why{{Code: NoteAssumedForm, Forms: forms, Identity: deciding}}
}
