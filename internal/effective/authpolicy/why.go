package authpolicy

import "time"

// Why is one of Authorino's evaluation reasons as data: what decided an Outcome
// (Outcome.Why), one rule's result (RuleOutcome.Why, an authentication rule's verdict on
// the identity), a note (Outcome.NoteWhys) or a rule body that cannot be read
// (Evaluation.ProblemWhys). Code is one of the Why* constants below; the other fields are
// what its sentence names, as each constant says. render writes the sentences
// (render/authorino.go), with the upstream lines they follow.
type Why struct {
	Code string
	// Group is a rule's section ("authentication", "metadata", "authorization"); Rule
	// the rule the sentence names, Source its policy.
	Group, Rule, Source string
	// Identity is the authentication rule whose identity the request was authorized
	// with (WhyUnauthorized, WhyAuthzUnknown, WhyAllowed), or whose credential form
	// decided (NoteAssumedForm; "" when none verified).
	Identity string
	Priority int
	// Err is an error's text, as the library that failed gives it.
	Err string
	// Rules are rule names: the ones the policy has (WhyIdentityRuleMissing), the ones
	// that verify the identity (WhyAuthnRace, NoteSameAnswer).
	Rules []string
	// Authn is how the identity was verified (WhyAuthzUnknown, WhyAllowed).
	Authn *Why
	// Because is the deciding rule's own result (WhyUnauthorized).
	Because *Why
	// Parts are rules' results in a list: the authentication rules that failed
	// (WhyUnauthenticated) or cannot be known (WhyAuthnUnknown, WhyAuthnMayRace), the
	// authorization rules that cannot be known (WhyAuthzUnknown) or that pass (WhyAllowed).
	Parts []RuleWhy
	// Alternatives are the answers with each racing rule's identity (WhyAuthnRace).
	Alternatives []*Outcome
	// Override is the policy's response code that replaces 401 or 403.
	Override *StatusOverride
	// Forms are the credential forms of the rules reading one Authorization header
	// (NoteAssumedForm).
	Forms []CredentialForm

	// What an authentication rule reads or finds.
	Kind     string // the identity's kind (WhyAuthnWrongKind)
	Method   string // the rule's authentication method (WhyAuthnWrongKind)
	Expr     string // a plain identity's selector and expression (WhyAuthnPlain)
	Endpoint string // a token introspection endpoint (WhyAuthnIntrospection)
	Issuer   string // a JWT rule's issuer (or JWKS URL)
	Claim    string // the token's iss (NoteIssuerMismatch)
	// Time is when the token expired (WhyAuthnExpired).
	Time time.Time
	// Secret is the Secret ("NS/NAME") the request's API key is in; Namespace its
	// namespace and Scope the AuthConfig's namespace ("" for any) the rule looks in.
	Secret, Namespace, Scope string
	// PolicyNamespace: the AuthConfig is in the v1beta2 policy's own namespace;
	// NamespaceAssumed: Kuadrant's namespace was assumed (no Kuadrant CR).
	PolicyNamespace, NamespaceAssumed bool
	// Selector is a rule's label selector, as a string.
	Selector string
	// MetadataOnly: the Secret was read as metadata only and is assumed to hold Entry.
	MetadataOnly bool
	Entry        string
	// Audiences are the token's; Want those the TokenReview asks for. AudiencesAssumed:
	// the token's audiences were not given and are assumed to be Want.
	Audiences, Want  []string
	AudiencesAssumed bool
	// CAs are the CA Secrets that verify a certificate ("NS/NAME").
	CAs []string
	// IssuerNotChecked: the token's iss differs from the rule's issuerUrl, which
	// Authorino does not compare (WhyAuthnJWT).
	IssuerNotChecked bool
	// Unread is why a live read could not list the objects the answer needs ("" when
	// it could, or the input is files): the load's own messages.
	Unread []string

	// What an authorization rule decides on.
	Decision string  // the request's decisions give it (WhyRuleGiven)
	Checks   []Check // the patterns of a patternMatching rule (WhyRulePatterns)
	Input    string  // the Rego input path a policy reads (WhyOPAInputUnknown)
	Attr     string  // the attribute that is not known (WhyOPAInputUnknown)
	Review   *Review // the SubjectAccessReview (WhySAR*)
	RBACRole string  // the Role or ClusterRole ("Kind ns/name") that allows it (WhySARAllowed)
	// RBACGroup is the group the API server allows everything, when it is the one that
	// allows (WhySARAllowed; RBACRole is then "").
	RBACGroup string

	// What a condition reads (Check.Why).
	Attrs   []string // the attributes the request does not supply (CheckDepends)
	Value   string   // a predicate's value (CheckNotBool), a pattern's operator (CheckBadOperator)
	Pattern string   // a named pattern (CheckNoPattern)
}

// RuleWhy is one rule's result in a list of them.
type RuleWhy struct {
	Rule string
	Why  Why
}

// StatusOverride is a policy's response.unauthenticated or response.unauthorized code
// (auth_pipeline.go:631-635, customizeDenyWith).
type StatusOverride struct {
	Response string // "unauthenticated" or "unauthorized"
	Source   string
	Code     int
}

// CredentialForm is where one authentication rule reads its credential in the
// Authorization header.
type CredentialForm struct {
	Rule, Prefix string
}

// Review is the SubjectAccessReview Authorino would create: a resource request
// (Resource, Group, Namespace) or a non-resource one (Path).
type Review struct {
	User, Verb                 string
	Resource, Group, Namespace string
	Path                       string
	ResourceRequest            bool
}

// What decided Authorino's answer (Outcome.Why).
const (
	// WhyRuleUnreadable: rule Rule of Source in Group cannot be read (Err).
	WhyRuleUnreadable = "rule-unreadable"
	// WhyIdentityRuleMissing: the identity names rule Rule, which the policy lacks (Rules).
	WhyIdentityRuleMissing = "identity-rule-missing"
	// WhyAuthnUnknown: whether any authentication rule verifies is not known (Parts).
	WhyAuthnUnknown = "authentication-unknown"
	// WhyAuthnMayRace: Rule verifies, and others of its Priority may too (Parts).
	WhyAuthnMayRace = "authentication-may-race"
	// WhyAuthnRace: Rules all verify at Priority, with different answers (Alternatives).
	WhyAuthnRace = "authentication-race"
	// WhyUnauthenticated: no authentication rule verifies (Parts, Override): 401.
	WhyUnauthenticated = "unauthenticated"
	// WhyExtensionFails: the identity's defaults or overrides cannot be resolved (Err).
	WhyExtensionFails = "identity-extension-fails"
	// WhyUnauthorized: authorization Rule of Source denies with Identity's identity
	// (Because, Override): 403.
	WhyUnauthorized = "unauthorized"
	// WhyAuthzUnknown: authenticated by Identity (Authn); authorization cannot be known (Parts).
	WhyAuthzUnknown = "authorization-unknown"
	// WhyAllowed: authenticated by Identity (Authn), and every authorization rule that
	// runs passes (Parts).
	WhyAllowed = "allowed"
)

// An authentication rule's result (RuleWhy.Why of WhyUnauthenticated, WhyAuthnUnknown,
// WhyAuthnMayRace; Why.Authn).
const (
	WhyAuthnAnonymousAdded  = "anonymous-added"   // no authentication rule: Authorino adds one
	WhyAuthnSkipped         = "skipped"           // its when conditions do not hold
	WhyWhenUnknown          = "when-unknown"      // whether its when conditions hold is not known
	WhyAuthnAnonymous       = "anonymous"         // anonymous access
	WhyAuthnOtherRule       = "other-rule"        // the credential is rule Rule's
	WhyAuthnPlain           = "plain"             // read from the request's context (Expr)
	WhyAuthnIntrospection   = "introspection"     // token introspection at Endpoint
	WhyAuthnNoMethod        = "no-method"         // no method agpol reads
	WhyAuthnWrongKind       = "wrong-kind"        // a Kind identity, and the rule reads Method
	WhyAuthnNoExp           = "no-exp"            // the token has no exp
	WhyAuthnNoTime          = "no-time"           // the request's time is not known
	WhyAuthnExpired         = "expired"           // the token expired at Time
	WhyAuthnNotYetValid     = "not-yet-valid"     // nbf more than 5 minutes ahead
	WhyAuthnJWT             = "jwt"               // verified (Issuer, IssuerNotChecked)
	WhyAuthnSecretMissing   = "secret-missing"    // Secret is not in the input (Unread)
	WhyAuthnKeyOutOfScope   = "key-out-of-scope"  // Secret in Namespace, the AuthConfig in Scope
	WhyAuthnBadSelector     = "bad-selector"      // the rule's selector is invalid (Err)
	WhyAuthnSelectorMissing = "selector-mismatch" // Secret does not match Selector
	WhyAuthnNoAPIKeyEntry   = "no-api-key-entry"  // Secret has no api_key
	WhyAuthnAPIKey          = "api-key"           // verified (Secret, MetadataOnly, Entry)
	WhyAuthnAudienceUnknown = "audience-unknown"  // the audience is the host, not known
	WhyAuthnAudienceDiffers = "audience-mismatch" // Audiences are none of Want
	WhyAuthnTokenReview     = "token-review"      // verified (Want, AudiencesAssumed)
	WhyAuthnNoCA            = "no-ca"             // no CA Secret matches Selector in Scope (Unread)
	WhyAuthnX509            = "x509"              // verified (CAs, MetadataOnly, Entry)
)

// An authorization rule's result (RuleOutcome.Why; Why.Because, Parts of WhyAuthzUnknown
// and WhyAllowed).
const (
	WhyRuleGiven          = "given"                // the request's decisions give Decision
	WhyRulePatterns       = "patterns"             // each pattern's result (Checks)
	WhyRuleSpecUnreadable = "spec-unreadable"      // the rule cannot be read (Err)
	WhyOPAExternal        = "opa-external"         // an external policy
	WhyOPANotCompiling    = "opa-not-compiling"    // the Rego does not compile (Err)
	WhyOPAInputUnknown    = "opa-input-unknown"    // reads input.Input, and Attr is not known
	WhyOPAEvalFails       = "opa-eval-fails"       // the policy fails to evaluate (Err)
	WhyOPANoResult        = "opa-no-result"        // no result: Authorino denies
	WhyOPAAllowTrue       = "opa-allow"            // allow is true
	WhyOPAAllowNotTrue    = "opa-not-allow"        // allow is not true
	WhySARUserUnknown     = "sar-user-unknown"     // the review's user is not known
	WhySARGroupsUnknown   = "sar-groups-unknown"   // the review's groups are not known
	WhySARGroupsNotList   = "sar-groups-not-list"  // the groups are not a JSON list of strings
	WhySARResourceUnknown = "sar-resource-unknown" // the resource attributes are not known
	WhySARPathUnknown     = "sar-path-unknown"     // the request's path and method are not known
	WhySARNoRBAC          = "sar-no-rbac"          // the input holds no RBAC (Review, Unread)
	WhySARAllowed         = "sar-allowed"          // RBACRole allows Review
	WhySARDenied          = "sar-denied"           // no Role of the input allows Review
	WhySpiceDB            = "spicedb"              // SpiceDB's answer is not known
	WhyAuthzUnknownMethod = "authorization-method" // a method agpol does not read
)

// Notes on Authorino's answer (Outcome.NoteWhys).
const (
	// NoteIssuerMismatch: the token's iss Claim is not the rule's Issuer, which does not matter.
	NoteIssuerMismatch = "issuer-mismatch"
	// NoteSameAnswer: Rules all verify at Priority, and each gives this answer.
	NoteSameAnswer = "same-answer"
	// NoteAssumedForm: the identity names no rule, and rules of its kind read one
	// Authorization header with different prefixes (Forms; Identity: the deciding form).
	NoteAssumedForm = "assumed-form"
)

// Why a condition's result is unknown, or what failed (Check.Why).
const (
	CheckError       = "error"             // the error's text (Err)
	CheckInvalidCEL  = "invalid-cel"       // the predicate does not compile (Err)
	CheckFailsOnAuth = "fails-on-auth"     // evaluating it fails on the auth data (Err)
	CheckEvalOffline = "eval-offline"      // it cannot be evaluated offline (Err)
	CheckDepends     = "depends"           // it depends on Attrs, not known offline
	CheckNotBool     = "not-bool"          // it returned Value, not a bool
	CheckTooDeep     = "nested-too-deeply" // conditions nested too deeply
	CheckNoPattern   = "no-pattern"        // no named pattern Pattern
	CheckAuthUnknown = "auth-unknown"      // Attr of auth is not known
	CheckAttrUnknown = "attribute-unknown" // Attr cannot be known offline
	CheckBadRegexp   = "invalid-regexp"    // invalid regular expression (Err)
	CheckBadOperator = "unknown-operator"  // unknown operator Value
)

// Rule bodies that cannot be read (Evaluation.ProblemWhys).
const (
	// ProblemWhen: the policy's when of Source cannot be read (Err).
	ProblemWhen = "when-unreadable"
	// ProblemRule: rule Rule of Source in Group cannot be read (Err).
	ProblemRule = "rule-body-unreadable"
)

// WhyCodes lists every code a Why carries, for render's test that each has a sentence.
var WhyCodes = []string{
	WhyRuleUnreadable, WhyIdentityRuleMissing, WhyAuthnUnknown, WhyAuthnMayRace, WhyAuthnRace,
	WhyUnauthenticated, WhyExtensionFails, WhyUnauthorized, WhyAuthzUnknown, WhyAllowed,
	WhyAuthnAnonymousAdded, WhyAuthnSkipped, WhyWhenUnknown, WhyAuthnAnonymous, WhyAuthnOtherRule,
	WhyAuthnPlain, WhyAuthnIntrospection, WhyAuthnNoMethod, WhyAuthnWrongKind, WhyAuthnNoExp,
	WhyAuthnNoTime, WhyAuthnExpired, WhyAuthnNotYetValid, WhyAuthnJWT, WhyAuthnSecretMissing,
	WhyAuthnKeyOutOfScope, WhyAuthnBadSelector, WhyAuthnSelectorMissing, WhyAuthnNoAPIKeyEntry,
	WhyAuthnAPIKey, WhyAuthnAudienceUnknown, WhyAuthnAudienceDiffers, WhyAuthnTokenReview,
	WhyAuthnNoCA, WhyAuthnX509,
	WhyRuleGiven, WhyRulePatterns, WhyRuleSpecUnreadable, WhyOPAExternal, WhyOPANotCompiling,
	WhyOPAInputUnknown, WhyOPAEvalFails, WhyOPANoResult, WhyOPAAllowTrue, WhyOPAAllowNotTrue,
	WhySARUserUnknown, WhySARGroupsUnknown, WhySARGroupsNotList, WhySARResourceUnknown,
	WhySARPathUnknown, WhySARNoRBAC, WhySARAllowed, WhySARDenied, WhySpiceDB, WhyAuthzUnknownMethod,
	NoteIssuerMismatch, NoteSameAnswer, NoteAssumedForm, ProblemWhen, ProblemRule,
	CheckError, CheckInvalidCEL, CheckFailsOnAuth, CheckEvalOffline, CheckDepends, CheckNotBool,
	CheckTooDeep, CheckNoPattern, CheckAuthUnknown, CheckAttrUnknown, CheckBadRegexp, CheckBadOperator,
}
