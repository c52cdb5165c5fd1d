package render

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// The sentences of Authorino's evaluation reasons (authpolicy.Why), with the upstream
// lines they follow (Authorino v0.25.0, go-oidc v3.14.1, kuadrant-operator; see
// docs/kuadrant-identities.md).

// Upstream lines cited by several sentences.
const (
	citeAPIKeyScope  = "Authorino looks API keys up only in the AuthConfig's namespace unless allNamespaces is true (controllers/auth_config_controller.go:351-360, pkg/evaluators/identity/api_key.go:51-55)"
	citeIssuer       = "Authorino does not compare the token's iss with the rule's issuerUrl: any token signed by a key of the issuer's JWKS passes (pkg/evaluators/identity/jwt.go:26, SkipIssuerCheck)"
	citeMetadataOnly = "read from a cluster as metadata only, the Secret is assumed to hold the entry (agpol never reads a Secret's data)"
)

// AuthorinoReason is the sentence of Authorino's answer to a request (Outcome.Why).
func AuthorinoReason(o *authpolicy.Outcome) string {
	t := AuthorinoText(o.Why)
	return t
}

// AuthorinoText is the sentence of one of Authorino's evaluation reasons: what decided
// an answer, a rule's result, a note or a problem (authpolicy.Why, by its code).
func AuthorinoText(w authpolicy.Why) string {
	if w.Code == authpolicy.WhyRulePatterns {
		return patternsText(w.Checks) // "" for a rule without patterns
	}
	if t := outcomeText(w); t != "" {
		return t
	}
	if t := authnText(w); t != "" {
		return t
	}
	if t := authzText(w); t != "" {
		return t
	}
	if t := checkText(w); t != "" {
		return t
	}
	switch w.Code {
	case authpolicy.NoteIssuerMismatch:
		return fmt.Sprintf("the token's iss %q is not the rule's issuerUrl %q, and it does not matter: %s", w.Claim, w.Issuer, citeIssuer)
	case authpolicy.NoteSameAnswer:
		return fmt.Sprintf("rules %s all verify the identity at priority %d; Authorino takes the first to finish, and each gives this answer", strings.Join(w.Rules, ", "), w.Priority)
	case authpolicy.NoteAssumedForm:
		forms := make([]string, len(w.Forms))
		for i, f := range w.Forms {
			forms[i] = fmt.Sprintf("%s reads \"Authorization: %s ...\"", f.Rule, f.Prefix)
		}
		note := fmt.Sprintf("the identity names no rule, and rules of its kind read one Authorization header with different prefixes (%s), while a request carries one Authorization header and Authorino reads only each rule's own prefix (pkg/auth/credentials.go:134-145): agpol assumed the credential presented to each rule in its own form", strings.Join(forms, "; "))
		if w.Identity != "" {
			note += "; this answer is the one for " + w.Identity + "'s form"
		}
		return note + "; name the rule with identity.rule (--identity-rule) for the answer of one form"
	case authpolicy.ProblemWhen:
		return fmt.Sprintf("when of %s: %s", w.Source, w.Err)
	case authpolicy.ProblemRule:
		return fmt.Sprintf("%s %s of %s: %s", w.Group, w.Rule, w.Source, w.Err)
	}
	return "(" + w.Code + ")" // a code this function does not know yet: still shown
}

// outcomeText is the sentence of what decided Authorino's answer; "" for another code.
func outcomeText(w authpolicy.Why) string {
	var t string
	switch w.Code {
	case authpolicy.WhyRuleUnreadable:
		t = fmt.Sprintf("%s %s of %s cannot be read: %s", w.Group, w.Rule, w.Source, w.Err)
	case authpolicy.WhyIdentityRuleMissing:
		t = fmt.Sprintf("the identity names rule %s, and the effective policy has no authentication rule of that name (it has: %s)", w.Rule, strings.Join(w.Rules, ", "))
	case authpolicy.WhyAuthnUnknown:
		t = "authentication cannot be known: " + ruleList(w.Parts, "%s (%s)")
	case authpolicy.WhyAuthnMayRace:
		// Authorino evaluates the rules of one priority concurrently
		// (auth_pipeline.go:207-262, evaluateOneAuthConfig).
		t = fmt.Sprintf("rule %s verifies the identity, and %s at the same priority (%d) may too: Authorino evaluates rules of one priority concurrently and takes the first to succeed (auth_pipeline.go:207-262)", w.Rule, ruleList(w.Parts, "%s (%s)"), w.Priority)
	case authpolicy.WhyAuthnRace:
		alts := make([]string, len(w.Alternatives))
		for i, o := range w.Alternatives {
			alts[i] = fmt.Sprintf("with %s's identity: %s (%s)", o.Identity, verdictCode(o), AuthorinoReason(o))
		}
		t = fmt.Sprintf("a race: rules %s all verify the identity at priority %d, Authorino takes whichever finishes first (auth_pipeline.go:207-262), and the answers differ: %s", strings.Join(w.Rules, ", "), w.Priority, strings.Join(alts, "; "))
	case authpolicy.WhyUnauthenticated:
		t = "no authentication rule verifies the identity (" + ruleList(w.Parts, "%s: %s") + "): Authorino answers UNAUTHENTICATED (auth_pipeline.go:475-479)"
	case authpolicy.WhyExtensionFails:
		t = "the identity's defaults/overrides cannot be resolved: " + w.Err
	case authpolicy.WhyUnauthorized:
		t = fmt.Sprintf("authorization %s of %s denies with %s's identity: %s; Authorino answers PERMISSION_DENIED (auth_pipeline.go:485-488)", w.Rule, w.Source, w.Identity, whyText(w.Because))
	case authpolicy.WhyAuthzUnknown:
		t = fmt.Sprintf("authenticated by %s (%s); authorization cannot be known: %s", w.Identity, whyText(w.Authn), ruleList(w.Parts, "%s: %s"))
	case authpolicy.WhyAllowed:
		t = fmt.Sprintf("authenticated by %s (%s)", w.Identity, whyText(w.Authn))
		if len(w.Parts) > 0 {
			t += "; every authorization rule that runs passes (" + ruleList(w.Parts, "%s: %s") + ")"
		}
	default:
		return ""
	}
	if o := w.Override; o != nil {
		// customizeDenyWith (auth_pipeline.go:631-635).
		t += fmt.Sprintf("; response.%s of %s sets the status to %d", o.Response, o.Source, o.Code)
	}
	return t
}

// authnText is the sentence of an authentication rule's result; "" for another code.
func authnText(w authpolicy.Why) string {
	switch w.Code {
	case authpolicy.WhyAuthnAnonymousAdded:
		// controllers/auth_config_controller.go:247-259.
		return "no authentication rule: Authorino adds an anonymous one"
	case authpolicy.WhyAuthnSkipped:
		return "skipped (its when conditions do not hold)"
	case authpolicy.WhyWhenUnknown:
		return "whether its when conditions hold is not known"
	case authpolicy.WhyAuthnAnonymous:
		return "anonymous access (pkg/evaluators/identity/noop.go)"
	case authpolicy.WhyAuthnOtherRule:
		return "the request carries the credential of rule " + w.Rule + ", not of this one"
	case authpolicy.WhyAuthnPlain:
		return "a plain identity is read from the request's context (" + w.Expr + "), which cannot be known offline"
	case authpolicy.WhyAuthnIntrospection:
		return "token introspection at " + w.Endpoint + " cannot be known offline"
	case authpolicy.WhyAuthnNoMethod:
		return "no authentication method agpol reads"
	case authpolicy.WhyAuthnWrongKind:
		return fmt.Sprintf("the request carries a %s identity, and this rule reads %s credentials", w.Kind, w.Method)
	case authpolicy.WhyAuthnNoExp:
		return "the token has no exp claim, and Authorino rejects it as expired (go-oidc v3.14.1 oidc/verify.go:285-293: a missing exp reads as the zero time)"
	case authpolicy.WhyAuthnNoTime:
		return "whether the token has expired depends on the time: give the request's time (--time, or http.time in a request file)"
	case authpolicy.WhyAuthnExpired:
		return fmt.Sprintf("the token expired at %s, before the request's time (go-oidc oidc/verify.go:292)", w.Time.UTC().Format(time.RFC3339))
	case authpolicy.WhyAuthnNotYetValid:
		return "the token's nbf is more than 5 minutes after the request's time (go-oidc oidc/verify.go:296-305)"
	case authpolicy.WhyAuthnJWT:
		t := "a JWT verified as if signed by a key of " + w.Issuer + "'s JWKS; auth.identity is its claims (pkg/evaluators/identity/jwt.go:41-65)"
		if w.IssuerNotChecked {
			t += "; " + citeIssuer
		}
		return t
	case authpolicy.WhyAuthnSecretMissing:
		return "Secret " + w.Secret + " is not in the input" + unreadSuffix(w.Unread)
	case authpolicy.WhyAuthnKeyOutOfScope:
		where := "Kuadrant's namespace"
		if w.PolicyNamespace {
			where = "the v1beta2 policy's own namespace (kuadrant-operator v0.6.1 controllers/authpolicy_authconfig.go:54-57)"
		}
		t := fmt.Sprintf("Secret %s is in namespace %s, and kuadrant-operator writes this policy's AuthConfig into %s %s: with allNamespaces false the key is never found. %s", w.Secret, w.Namespace, where, w.Scope, citeAPIKeyScope)
		if w.NamespaceAssumed {
			t += " (no Kuadrant CR in the input: Kuadrant's namespace assumed " + w.Scope + ")"
		}
		return t
	case authpolicy.WhyAuthnBadSelector:
		return "the rule's selector is invalid: " + w.Err
	case authpolicy.WhyAuthnSelectorMissing:
		return fmt.Sprintf("Secret %s does not match the rule's selector %s", w.Secret, w.Selector)
	case authpolicy.WhyAuthnNoAPIKeyEntry:
		return "Secret " + w.Secret + " has no api_key entry, and Authorino keeps only Secrets with one (api_key.go:147-153)"
	case authpolicy.WhyAuthnAPIKey:
		return "the API key of Secret " + w.Secret + "; auth.identity is the Secret (its labels and annotations; its data is not read) (api_key.go:71-86)" + metadataOnlySuffix(w)
	case authpolicy.WhyAuthnAudienceUnknown:
		return "the rule's audience is the request's host (kubernetes_auth.go:54-60), which is not known"
	case authpolicy.WhyAuthnAudienceDiffers:
		return fmt.Sprintf("the token's audiences %v are none of %v that the TokenReview asks for (kubernetes_auth.go:38-50)", w.Audiences, w.Want)
	case authpolicy.WhyAuthnTokenReview:
		t := "a Kubernetes token the TokenReview authenticates; auth.identity is its status (kubernetes_auth.go:62-69)"
		if w.AudiencesAssumed {
			t += "; the token's audiences are assumed to include " + strings.Join(w.Want, ", ")
		}
		return t
	case authpolicy.WhyAuthnNoCA:
		where := "any namespace"
		if w.Scope != "" {
			where = "namespace " + w.Scope
		}
		return fmt.Sprintf("no CA Secret labelled %s in %s is in the input (pkg/evaluators/identity/mtls.go:57-77)", w.Selector, where) + unreadSuffix(w.Unread)
	case authpolicy.WhyAuthnX509:
		return "a client certificate verified as if signed by the CA of " + strings.Join(w.CAs, ", ") + "; auth.identity is its subject (mtls.go:80-130)" + metadataOnlySuffix(w)
	}
	return ""
}

// authzText is the sentence of an authorization rule's result; "" for another code.
func authzText(w authpolicy.Why) string {
	switch w.Code {
	case authpolicy.WhyRuleGiven:
		return "the request's decisions give " + w.Decision
	case authpolicy.WhyRuleSpecUnreadable:
		return "the rule cannot be read: " + w.Err
	case authpolicy.WhyOPAExternal:
		return "the policy is fetched from an external registry, which cannot be known offline: give the answer in the request's decisions"
	case authpolicy.WhyOPANotCompiling:
		return "the Rego does not compile (Authorino rejects the AuthConfig): " + w.Err
	case authpolicy.WhyOPAInputUnknown:
		return "the policy reads input." + w.Input + ", and " + AttributeText(w.Attr) + " is not known"
	case authpolicy.WhyOPAEvalFails:
		return "the policy fails to evaluate: " + w.Err
	case authpolicy.WhyOPANoResult:
		return "the policy gives no result (Authorino denies: invalid response from policy evaluation)"
	case authpolicy.WhyOPAAllowTrue:
		return "the Rego policy's allow is true (evaluated with OPA)"
	case authpolicy.WhyOPAAllowNotTrue:
		return "the Rego policy's allow is not true (evaluated with OPA)"
	case authpolicy.WhySARUserUnknown:
		return "the review's user is not known"
	case authpolicy.WhySARGroupsUnknown:
		return "the review's groups are not known"
	case authpolicy.WhySARGroupsNotList:
		return "the review's groups (authorizationGroups) are not a JSON list of strings, so Authorino fails the rule before asking (kubernetes_authz.go:118-128)"
	case authpolicy.WhySARResourceUnknown:
		return "the review's resource attributes are not known"
	case authpolicy.WhySARPathUnknown:
		return "the review asks for the request's path and method, which are not known"
	case authpolicy.WhySARNoRBAC:
		return "a SubjectAccessReview for " + reviewUser(w.Review) + " to " + reviewWhat(w.Review) + " is answered by the cluster's RBAC, and the input holds no Role, ClusterRole or binding: give them, or the answer in the request's decisions" + unreadSuffix(w.Unread)
	case authpolicy.WhySARAllowed:
		role := w.RBACRole
		if w.RBACGroup != "" {
			role = "the group " + w.RBACGroup + ", which the API server allows everything"
		}
		return fmt.Sprintf("%s may %s (%s of the input)", reviewUser(w.Review), reviewWhat(w.Review), role)
	case authpolicy.WhySARDenied:
		return fmt.Sprintf("no Role or ClusterRole of the input bound to %s (or its groups) allows %s (from files, Kubernetes' default roles are read only when given)", reviewUser(w.Review), reviewWhat(w.Review))
	case authpolicy.WhySpiceDB:
		return "SpiceDB's answer cannot be known offline: give it in the request's decisions"
	case authpolicy.WhyAuthzUnknownMethod:
		return "an authorization method agpol does not read"
	}
	return ""
}

// patternsText is each pattern's result: "EXPR is RESULT (why)", joined.
func patternsText(checks []authpolicy.Check) string {
	parts := make([]string, len(checks))
	for i, ch := range checks {
		parts[i] = ch.Expression + " is " + string(ch.Result)
		if r := checkReason(ch); r != "" {
			parts[i] += " (" + r + ")"
		}
	}
	return strings.Join(parts, "; ")
}

// checkText is the sentence of why a condition's result is unknown, or what failed;
// "" for another code.
func checkText(w authpolicy.Why) string {
	switch w.Code {
	case authpolicy.CheckError:
		return w.Err
	case authpolicy.CheckInvalidCEL:
		return "invalid CEL: " + w.Err
	case authpolicy.CheckFailsOnAuth:
		// Authorino's CEL predicate returns the error (pkg/expressions/cel/expressions.go:39-48).
		return "evaluating it fails on the request's auth data (" + w.Err + "), and Authorino counts a failed predicate as not holding"
	case authpolicy.CheckEvalOffline:
		return "cannot be evaluated offline: " + w.Err
	case authpolicy.CheckDepends:
		return "depends on " + strings.Join(attributesText(w.Attrs), ", ") + ", which cannot be known offline"
	case authpolicy.CheckNotBool:
		return "the predicate returned " + w.Value + ", not a bool"
	case authpolicy.CheckTooDeep:
		return "conditions nested too deeply"
	case authpolicy.CheckNoPattern:
		return "no named pattern " + w.Pattern + " in the effective policy"
	case authpolicy.CheckAuthUnknown:
		return w.Attr + " is not known (give it in the request)"
	case authpolicy.CheckAttrUnknown:
		return w.Attr + " cannot be known offline"
	case authpolicy.CheckBadRegexp:
		return "invalid regular expression: " + w.Err
	case authpolicy.CheckBadOperator:
		return "unknown operator " + w.Value
	}
	return ""
}

// checkReason is the sentence of why a condition's result is unknown, or what failed:
// its reasons joined ("" when none).
func checkReason(ch authpolicy.Check) string {
	if len(ch.Why) == 0 {
		return ""
	}
	parts := make([]string, len(ch.Why))
	for i, w := range ch.Why {
		parts[i] = AuthorinoText(w)
	}
	return strings.Join(parts, "; ")
}

// checksView is a copy of checks with their reasons written; nil stays nil.
func checksView(checks []authpolicy.Check) []authpolicy.Check {
	if checks == nil {
		return nil
	}
	out := make([]authpolicy.Check, len(checks))
	for i, ch := range checks {
		r := checkReason(ch)
		ch.Reason = r
		out[i] = ch
	}
	return out
}

// whyText is AuthorinoText of w, "" for nil.
func whyText(w *authpolicy.Why) string {
	if w == nil {
		return ""
	}
	return AuthorinoText(*w)
}

// ruleList writes rules' results in a list, each with format (the rule, its sentence).
func ruleList(parts []authpolicy.RuleWhy, format string) string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = fmt.Sprintf(format, p.Rule, AuthorinoText(p.Why))
	}
	return strings.Join(out, "; ")
}

// verdictCode is an answer in two words: "allow 200", "deny 403", "indeterminate".
func verdictCode(o *authpolicy.Outcome) string {
	if o.Verdict == authpolicy.OutcomeIndeterminate {
		return "indeterminate"
	}
	return fmt.Sprintf("%s %d", o.Verdict, o.Code)
}

// unreadSuffix says why the input may lack the objects an answer needs: the load's
// messages of what a live read could not list.
func unreadSuffix(msgs []string) string {
	if len(msgs) == 0 {
		return ""
	}
	return " (" + strings.Join(msgs, "; ") + ")"
}

func metadataOnlySuffix(w authpolicy.Why) string {
	if !w.MetadataOnly {
		return ""
	}
	return "; " + citeMetadataOnly + " " + w.Entry
}

func reviewUser(r *authpolicy.Review) string {
	if r == nil {
		return ""
	}
	return r.User
}

// reviewWhat is what a SubjectAccessReview asks: "get /toys", "list pods in ns".
func reviewWhat(r *authpolicy.Review) string {
	if r == nil {
		return ""
	}
	if !r.ResourceRequest {
		return r.Verb + " " + r.Path
	}
	what := r.Verb + " " + r.Resource
	if r.Group != "" {
		what += "." + r.Group
	}
	if r.Namespace != "" {
		what += " in " + r.Namespace
	}
	return what
}

// outcomeView is a copy of o with its sentences written (Reason, Notes, each
// authorization rule's Reason), as -o json shows them; nil stays nil.
func outcomeView(o *authpolicy.Outcome) *authpolicy.Outcome {
	if o == nil {
		return nil
	}
	v := *o
	v.Reason = AuthorinoReason(o)
	v.Notes = authorinoNotes(o)
	if o.Authorization != nil {
		v.Authorization = make([]authpolicy.RuleOutcome, len(o.Authorization))
		for i, r := range o.Authorization {
			r.Reason = AuthorinoText(r.Why)
			v.Authorization[i] = r
		}
	}
	return &v
}

// authorinoNotes are the sentences of an answer's notes (nil when none).
func authorinoNotes(o *authpolicy.Outcome) []string {
	if len(o.NoteWhys) == 0 {
		return nil
	}
	notes := make([]string, len(o.NoteWhys))
	for i, n := range o.NoteWhys {
		notes[i] = AuthorinoText(n)
	}
	return notes
}

// evaluationView is a copy of e with its sentences written: Authorino's answer, what
// each rule asks (Present, Credential; an authorization rule's result where Authorino
// decided), the attributes not known offline, the problems; nil stays nil.
func evaluationView(e *authpolicy.Evaluation) *authpolicy.Evaluation {
	if e == nil {
		return nil
	}
	v := *e
	v.Outcome = outcomeView(e.Outcome)
	v.Predicates = checksView(e.Predicates)
	v.Offline = offlineText(e.Offline)
	if e.Authentication != nil {
		v.Authentication = make([]authpolicy.Requirement, len(e.Authentication))
		for i, r := range e.Authentication {
			r.Conditions = checksView(r.Conditions)
			r.Present, r.Credential = RequirementText(r.Need), CredentialText(r.Reads)
			v.Authentication[i] = r
		}
	}
	if e.Authorization != nil {
		v.Authorization = make([]authpolicy.Requirement, len(e.Authorization))
		for i, r := range e.Authorization {
			r.Conditions = checksView(r.Conditions)
			r.Present = requirementPresent(r.Need, r.Why)
			v.Authorization[i] = r
		}
	}
	if e.ProblemWhys != nil {
		v.Problems = make([]string, len(e.ProblemWhys))
		for i, p := range e.ProblemWhys {
			v.Problems[i] = AuthorinoText(p)
		}
	}
	return &v
}

// AttributeText names an attribute a request does not supply: the attribute itself, or
// for authpolicy.AttrUnnamed (attributes agpol cannot name) "attributes not supplied",
// for authpolicy.AttrWholeInput (an OPA policy's input) "the whole input".
func AttributeText(attr string) string {
	switch attr {
	case authpolicy.AttrUnnamed:
		return "attributes not supplied"
	case authpolicy.AttrWholeInput:
		return "the whole input"
	}
	return attr
}

// attributesText is attrs with each named by AttributeText, in order; attrs itself when
// every one is an attribute's own name.
func attributesText(attrs []string) []string {
	if !slices.Contains(attrs, authpolicy.AttrUnnamed) && !slices.Contains(attrs, authpolicy.AttrWholeInput) {
		return attrs
	}
	out := make([]string, len(attrs))
	for i, a := range attrs {
		out[i] = AttributeText(a)
	}
	return out
}

// offlineText is an evaluation's Offline written (attributesText), sorted as the names
// it shows.
func offlineText(attrs []string) []string {
	out := attributesText(attrs)
	if len(out) > 0 && &out[0] != &attrs[0] {
		slices.Sort(out)
	}
	return out
}
