package explain

import (
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Step is one entry of a trace: what was considered, where, and what it found, as data.
// The evaluator fills Event and the fields it names; render writes the sentence
// (render.StepReason) and the position as text.
type Step struct {
	Level   string `json:"level"`
	Phase   string `json:"phase"` // route, extauth, allow, default
	Policy  string `json:"policy,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Source  string `json:"source,omitempty"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`

	// Event is what the step found (an Event* constant).
	Event string `json:"event,omitempty"`
	// Position is where the rule or policy is written; -o json|yaml shows it as Source
	// (file:line, or the cluster), as before. A rule's is shared with the rule
	// (effective.RuleSource.At): it must not be modified.
	Position *snapshot.Source `json:"-"`
	// Mismatch is the rule field that failed (EventNotMatched).
	Mismatch *Mismatch `json:"mismatch,omitempty"`
	// Allows is what a matching Allow rule permits (EventAllows).
	Allows *effective.Permission `json:"allows,omitempty"`
	// Note is why Envoy may route the request otherwise (EventUncertainRoute), the
	// backend object assumed to exist (EventBackendAssumed), why no XAccessPolicy runs on
	// the gateway (EventOtherDataPlane) or why the data plane has no ext_authz filter
	// (EventNoFilter), which render writes from Uncertain, Assumed, OtherDataPlane or
	// NoFilter.
	Note           string                     `json:"note,omitempty"`
	Uncertain      *topology.RegexDiffers     `json:"-"`
	Assumed        *topology.Assumption       `json:"-"`
	OtherDataPlane *effective.OtherDataPlane  `json:"-"`
	NoFilter       *effective.NoExtAuthFilter `json:"-"`
	// RuleName and KeptBy: the rule name two policies share and the rule kept
	// (EventReplaced).
	RuleName string `json:"ruleName,omitempty"`
	KeptBy   string `json:"keptBy,omitempty"`
	// Verdict is the verdict whatever the authorizer answers (EventAnswerMoot).
	Verdict string `json:"verdict,omitempty"`
	// CEL lists the CEL expressions whose outcome is unknown and DecidedByEither what
	// decided under their outcomes, when that differs (EventCELSame, EventCELDepends).
	CEL             []string `json:"cel,omitempty"`
	DecidedByEither []string `json:"decidedByEither,omitempty"`
	// NoBackend is why the path reaches no backend (EventNoBackend, EventNoBackendSeeLast,
	// EventRefused; nil in EventRefused: no route).
	NoBackend *topology.NoBackend `json:"noBackend,omitempty"`
	// Before is what the chain decided before the data plane refused the request
	// (EventRefused, CauseRefused): a Before* constant.
	Before string `json:"before,omitempty"`
	// BackendKind is the group and kind of a backend of the Gateway's data plane, nil
	// for a core Service (EventNoBackendLevel).
	BackendKind *topology.Ref `json:"backendKind,omitempty"`
	// Listener and Caller: the plain-HTTP listener and the caller, as the request
	// names it, whose identity it loses (EventPlainHTTP).
	Listener string `json:"listener,omitempty"`
	Caller   string `json:"caller,omitempty"`
	// Handshake is why the caller fails the TLS handshake of Listener, a Handshake*
	// constant (EventTLSHandshakeFails).
	Handshake string `json:"handshake,omitempty"`
	// CA is the CA Listener validates client certificates against, which agpol assumes
	// issued the caller's SVID (EventTLSCAAssumed).
	CA string `json:"ca,omitempty"`
	// IgnoredMethod is the route rule that takes the request though its match names
	// another method (EventIgnoredMethod).
	IgnoredMethod *topology.IgnoredMethod `json:"ignoredMethod,omitempty"`
	// AuthPolicy is what Kuadrant's AuthPolicy decided (CauseAuthPolicy* and
	// CauseAuthorino events: the step says what the decision's cause says).
	AuthPolicy *AuthPolicyCause `json:"authPolicy,omitempty"`
	// Unread are the kinds a live read could not read, and Was the decision on the
	// objects that were read (nil for a request naming an object not read) (EventUnread),
	// or on agpol's own routing (EventUncertainRoute).
	Unread []snapshot.Warning `json:"unread,omitempty"`
	Was    *Was               `json:"was,omitempty"`
}

// Events of trace steps.
const (
	EventNoPolicy          = "no-policy"           // no accepted XAccessPolicy at the gateway or the backend
	EventExtAuthRuleLess   = "extauth-rule-less"   // an ExternalAuth policy without rules delegates every request
	EventExtAuthSelects    = "extauth-selects"     // the rule selects the request for the authorizer
	EventExtAuthNoRule     = "extauth-no-rule"     // no rule of the ExternalAuth policy selects the request
	EventLegacyExtAuth     = "legacy-extauth"      // a legacy ExternalAuth rule sends tools/call to the authorizer
	EventNoFilter          = "no-extauth-filter"   // no ext_authz filter: the authorizer is never called (NoFilter says why)
	EventSharedExtAuth     = "shared-extauth"      // the backend's config is the gateway's: one filter, already called
	EventAnswerDeny        = "authorizer-deny"     // the authorizer answered deny
	EventAnswerAllow       = "authorizer-allow"    // the authorizer answered allow
	EventAnswerUnknown     = "authorizer-unknown"  // the authorizer's answer was not given
	EventAnswerAssumed     = "authorizer-assumed"  // the answer is unknown; the trace assumes allow
	EventAnswerMoot        = "authorizer-moot"     // the answer is unknown and does not change the verdict
	EventRuleLessAllow     = "allow-rule-less"     // an Allow policy without rules adds no rule
	EventRuleLessAllows    = "allow-rule-less-all" // an Allow policy without rules allows (every policy must allow)
	EventNoAllow           = "no-allow"            // no Allow policy: the level does not enforce
	EventReplaced          = "rule-replaced"       // a same-named rule of a younger policy replaces this one
	EventAllows            = "allows"              // the rule matches and allows (Allows)
	EventNotMatched        = "not-matched"         // the rule does not match (Mismatch)
	EventLevelPassed       = "level-passed"        // no rule selects the caller: the level is passed (PR #220)
	EventCELSame           = "cel-unknown-same"    // a CEL outcome is unknown, the verdict the same either way
	EventCELDepends        = "cel-unknown-depends" // a CEL outcome is unknown, and the verdict depends on it
	EventNoBackend         = "no-backend"          // routing: the path reaches no backend (NoBackend)
	EventNoBackendSeeLast  = "no-backend-see-last" // routing: as EventNoBackend, the why said by the last step
	EventRefused           = "refused"             // the data plane answers the request itself (NoBackend, Before)
	EventNoBackendLevel    = "no-backend-level"    // routing: the backend is a Service or another data plane's kind (BackendKind): no backend-level policies
	EventPlainHTTP         = "plain-http"          // routing: a plain-HTTP listener: the caller presents no client certificate (Listener, Caller)
	EventTLSHandshakeFails = "tls-handshake-fails" // the caller fails the TLS handshake of the listener (Listener, Handshake)
	EventTLSCAAssumed      = "tls-ca-assumed"      // the listener validates against its own CA, assumed to have issued the caller's SVID (Listener, CA)
	EventIgnoredMethod     = "ignored-method"      // routing: the rule takes the request though its match names another method (IgnoredMethod)
	EventBackendAssumed    = "backend-assumed"     // routing: a backend object not in the input is assumed to exist (Assumed: topology's BackendTarget.Assumed)
	EventUnread            = "unread"              // kinds a live read could not read (Unread, Was)
	EventUncertainRoute    = "uncertain-route"     // routing: Envoy may route the request otherwise (Uncertain; Was: the decision on agpol's routing)
	EventOtherDataPlane    = "other-data-plane"    // another data plane serves the gateway: no XAccessPolicy runs (OtherDataPlane)
)

// Why a caller fails the TLS handshake of a listener that requires a client certificate
// (Step.Handshake, Cause.Handshake; docs/routing.md, "The TLS handshake").
const (
	HandshakeNoCertificate = "no-certificate" // the caller presents none
	HandshakeNotSVID       = "not-svid"       // the listener validates against the SPIFFE trust bundle, and the caller's certificate is no SVID
)

// What the chain decided before the data plane refused the request (Step.Before,
// Cause.Before).
const (
	BeforeOtherDataPlane = "other-data-plane" // no XAccessPolicy runs on the gateway
	BeforeIndeterminate  = "indeterminate"    // the gateway authorizer's answer is unknown
	BeforeAllowed        = "allowed"          // the gateway-level policies let it through
)

// Mismatch is the field of a rule that failed to match: what the rule wants and what the
// request had.
type Mismatch struct {
	// Field is the rule field: "source", "mcp" (the permission's MCP methods and HTTP
	// matchers), "cel", or an L7 field: "methods", "paths", "headers", "hosts", "ports".
	Field string `json:"field"`
	// Test says how the field failed where it can fail several ways: "nobody" (source:
	// an incomplete source matches nobody), "namespace-defaulted" (source: a
	// ServiceAccount without a namespace took the policy's, Note), "tools-call-only", "error" or "false" (cel),
	// "absent", "regex", "value" or "invalid" (headers).
	Test string `json:"test,omitempty"`
	// Name is the header's name (headers).
	Name string `json:"name,omitempty"`
	// Wants is what the rule wants: the principal (source), the permission (mcp), the
	// expression (cel), the values listed (methods, hosts, ports), the header's value.
	Wants any `json:"wants,omitempty"`
	// Saw is what the request had: the caller's principal ("" without a client
	// certificate), its Call (mcp, cel), the HTTP method, path, header value, host, port.
	Saw any `json:"saw,omitempty"`
	// Note is the sentence of CEL (error) or of Principal (nobody) for -o json, written
	// by render (render.CELFailureText, render.PrincipalNote) in its copy; or the
	// policy's namespace (namespace-defaulted).
	Note string `json:"note,omitempty"`
	// Principal is the rule's principal that matches nobody (nobody).
	Principal *effective.Principal `json:"-"`
	// CEL is why the expression's evaluation gave no answer (cel, error).
	CEL *CELFailure `json:"-"`
}

// CELFailure is why a CEL condition's evaluation gave no answer, which counts as a
// non-match (Mismatch.CEL), as data: render writes it (render.CELFailureText).
type CELFailure struct {
	// Why is a CELFail* constant.
	Why string
	// Err is cel-go's error (CELFailEval).
	Err string
	// Type is the type the expression returned (CELFailNotBool).
	Type string
	// Limit is agpol's runtime cost budget (CELFailOverBudget).
	Limit uint64
}

// Why a CEL condition's evaluation gave no answer (CELFailure.Why).
const (
	CELFailEval       = "eval-error"  // cel-go reports an error (a missing key, ...): Err
	CELFailOverBudget = "over-budget" // the evaluation ran past agpol's cost budget (Limit); Envoy has none
	CELFailNotBool    = "not-bool"    // the expression returned Type, not bool
)

// CELFailCodes are every CELFailure code, for the test that render writes each.
var CELFailCodes = []string{CELFailEval, CELFailOverBudget, CELFailNotBool}

// Call is the MCP call (or plain HTTP request) a permission saw.
type Call struct {
	MCP        bool   `json:"mcp"`
	Method     string `json:"method,omitempty"`
	Tool       string `json:"tool,omitempty"`
	HTTPMethod string `json:"httpMethod,omitempty"`
	Path       string `json:"path,omitempty"`
}

// Cause is why a decision was made, as data; render writes Decision.Reason from it.
type Cause struct {
	// Event is a Cause* constant; Decision.Level and DecidedBy name the level and the
	// policy, rule or authorizer.
	Event string `json:"event"`
	// Near are up to two rules that came closest to allowing (CauseNoRuleMatches,
	// CausePolicyMatchesNothing).
	Near []Step `json:"near,omitempty"`
	// Caller is the caller's principal, "" without a client certificate, when no rule
	// selects it (CauseNoRuleMatches without Near).
	Caller string `json:"caller,omitempty"`
	// CEL lists the CEL expressions whose outcome is unknown (CauseCELUnknown).
	CEL []string `json:"cel,omitempty"`
	// Note says why Envoy may route the request otherwise (CauseUncertainRoute, with
	// Was), or why no XAccessPolicy runs on the gateway (CauseOtherDataPlane): render
	// writes it from Uncertain or OtherDataPlane.
	Note           string                    `json:"note,omitempty"`
	Uncertain      *topology.RegexDiffers    `json:"-"`
	OtherDataPlane *effective.OtherDataPlane `json:"-"`
	// NoBackend and Before: why the data plane refuses the request and what the chain
	// decided before (CauseRefused; NoBackend nil: no route takes it).
	NoBackend *topology.NoBackend `json:"noBackend,omitempty"`
	Before    string              `json:"before,omitempty"`
	// Listener and Handshake: the listener whose TLS handshake the caller fails, and
	// why, a Handshake* constant (CauseTLSHandshake).
	Listener  string `json:"listener,omitempty"`
	Handshake string `json:"handshake,omitempty"`
	// Unread, Was and Object: the kinds a live read could not read, the decision on the
	// objects that were read (CauseUnread), the object a request names that is not
	// among those read, e.g. "xbackend pay/ledger" (CauseNotRead).
	Unread []snapshot.Warning `json:"unread,omitempty"`
	Was    *Was               `json:"was,omitempty"`
	Object string             `json:"object,omitempty"`
	// AuthPolicy is what Kuadrant's AuthPolicy decided (CauseAuthPolicy*,
	// CauseAuthorino).
	AuthPolicy *AuthPolicyCause `json:"authPolicy,omitempty"`
}

// Causes of decisions.
const (
	CauseNoPolicyDeny         = "no-policy-deny"         // no policy applies; the semantics denies by default
	CauseNoPolicyAllow        = "no-policy-allow"        // no policy applies: allowed by default
	CauseExtAuthLast          = "extauth-last"           // every step allowed, the last the authorizer
	CauseAllowedBy            = "allowed-by"             // allowed by a rule (or rule-less policy)
	CauseRuleLessOnly         = "rule-less-only"         // the only Allow policy of the level has no rules
	CauseExtAuthOnly          = "extauth-only"           // the authorizer allowed and no Allow policy enforces
	CauseNothingEnforces      = "nothing-enforces"       // no Allow policy enforces and no authorizer was consulted
	CauseExtAuthDenied        = "extauth-denied"         // the authorizer denied
	CauseExtAuthUnknown       = "extauth-unknown"        // depends on the authorizer (Decision.Branches: per answer)
	CauseNoRuleMatches        = "no-rule-matches"        // no Allow rule of the level matches
	CausePolicyMatchesNothing = "policy-matches-nothing" // an Allow policy that must allow matches nothing
	CauseCELUnknown           = "cel-unknown"            // a CEL outcome is unknown, and the verdict depends on it
	CauseOtherDataPlane       = "other-data-plane"       // another data plane serves the gateway: no XAccessPolicy runs (OtherDataPlane)
	CauseRefused              = "refused"                // the data plane answers the request itself: no route, no backend (NoBackend, Before)
	CauseTLSHandshake         = "tls-handshake"          // the caller fails the TLS handshake of the listener (Listener, Handshake)
	CauseUnread               = "unread"                 // the decision depends on kinds a live read could not read (Unread, Was)
	CauseNotRead              = "not-read"               // the request names an object whose kind could not be read (Object, Unread)
	CauseUncertainRoute       = "uncertain-route"        // Envoy may route the request otherwise (Uncertain; Was)
	// Kuadrant's AuthPolicy decides on a Gateway another data plane serves (AuthPolicy;
	// the trace's last step has the same event and data).
	CauseAuthPolicyNotFound    = "authpolicy-not-found"           // v1beta2: no AuthConfig holds the host; Authorino answers NOT_FOUND (Policies, Found)
	CauseAuthPolicyNoIdentity  = "authpolicy-no-identity"         // every authentication rule is skipped by its when: 401 (Policies)
	CauseAuthPolicyAuthzFails  = "authpolicy-authorization-fails" // an authorization rule runs and fails: 403 (Rule, Source)
	CauseAuthPolicyUnknown     = "authpolicy-unknown"             // the verdict depends on what cannot be known offline (Policies, Unknown)
	CauseAuthPolicyUnevaluated = "authpolicy-unevaluated"         // the request names the backend: the AuthPolicies on its routes are not evaluated (Policies)
	CauseAuthorino             = "authpolicy-authorino"           // Authorino's answer to a request carrying an identity (Policies, Outcome)
)
