package effective

import (
	"regexp"

	"github.com/google/cel-go/cel"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// LevelName is where a policy is enforced.
type LevelName string

// Levels.
const (
	LevelGateway LevelName = "gateway"
	LevelBackend LevelName = "backend"
	LevelNone    LevelName = "none"
)

// The legacy translator's built-in allow policies (docs/semantics.md#v0alpha0).
const (
	BuiltinInitialize   = "allow-anyone-to-initialize-and-list-tools"
	BuiltinHTTPGet      = "allow-http-get"
	BuiltinSessionClose = "allow-mcp-session-close"
)

// Principal is who a rule selects.
type Principal struct {
	// Any matches every caller, including unauthenticated ones.
	Any bool `json:"any,omitempty"`
	// None matches nobody (an incomplete source under SourceFailOpen=none).
	None bool `json:"none,omitempty"`
	// Value is the exact peer principal (SPIFFE ID) otherwise.
	Value string `json:"value,omitempty"`
	// Note is Why's sentence for -o json, written by render (render.PrincipalNote) in
	// its copy; "" here.
	Note string `json:"note,omitempty"`
	// Why says why the principal is Any or None though the source names no caller (a
	// Source* constant), "" when it names one; SourceType is the source's type as
	// written (SourceTypeWithoutField, SourceOtherKindField).
	Why        string `json:"-"`
	SourceType string `json:"-"`
	// Omitted is set when the rule has no source at all: any caller, as written.
	Omitted bool `json:"-"`
	// DefaultedNamespace is the policy's namespace when a ServiceAccount source names
	// none and takes it (the commonest mistake, lint's AGP209).
	DefaultedNamespace string `json:"-"`
	// ServiceAccount is set when a ServiceAccount source gave Value: text shows it as the
	// user wrote it (sa:NS/NAME), a SPIFFE-typed source as its SPIFFE ID.
	ServiceAccount bool `json:"-"`
}

// MethodMatcher matches mcp_proxy.method (exact, or prefix for a category) and optionally params.name.
type MethodMatcher struct {
	Name   string   `json:"name"`
	Prefix bool     `json:"prefix,omitempty"`
	Params []string `json:"params,omitempty"`
}

// CELCondition is a compiled CEL expression.
type CELCondition struct {
	Expression string      `json:"expression"`
	Program    cel.Program `json:"-"`
}

// Permission is what a rule allows (the OR of its parts), optionally AND-ed with L7 matchers.
type Permission struct {
	Any          bool            `json:"any,omitempty"`
	NotToolsCall bool            `json:"notToolsCall,omitempty"`
	Methods      []MethodMatcher `json:"methods,omitempty"`
	Base         bool            `json:"base,omitempty"`
	// HTTPMethods and SessionClose are the legacy built-ins' HTTP matchers.
	HTTPMethods  []string      `json:"httpMethods,omitempty"`
	SessionClose bool          `json:"sessionClose,omitempty"`
	CEL          *CELCondition `json:"cel,omitempty"`
	// ToolsCallOnly makes a CEL permission require mcp method tools/call (docs/semantics.md#cel-only-tools-call).
	ToolsCallOnly bool `json:"toolsCallOnly,omitempty"`
	// L7 is set when the L7 fields are enforced and the rule has some.
	L7 *L7Match `json:"l7,omitempty"`
	// IgnoredL7 lists the L7 fields present but ignored under the semantics.
	IgnoredL7 []string `json:"ignoredL7,omitempty"`
	// Note is Why's sentence for -o json, written by render (render.PermissionNote) in
	// its copy; "" here.
	Note string `json:"note,omitempty"`
	// Why says what the permission stands for where the authorization lists nothing it
	// matches as written (a Permission* constant), "" otherwise; AuthorizationType is
	// the authorization's type as written (PermissionUnknownType).
	Why               string `json:"-"`
	AuthorizationType string `json:"-"`
	// ToolsDropped: a v0alpha0 InlineTools rule read from a cluster (or its snapshot
	// replay) has no tool list because storage at v1alpha1 dropped authorization.tools;
	// the permission is the empty list's, assumed as the legacy translator would read
	// this cluster (docs/semantics.md#v0alpha0).
	ToolsDropped bool `json:"toolsDropped,omitempty"`
}

// L7Match holds the authorization L7 matchers (docs/semantics.md#l7-fields, enforced).
type L7Match struct {
	Methods []string        `json:"methods,omitempty"`
	Paths   []PathMatcher   `json:"paths,omitempty"`
	Headers []HeaderMatcher `json:"headers,omitempty"`
	Hosts   []string        `json:"hosts,omitempty"`
	Ports   []int32         `json:"ports,omitempty"`
}

// PathMatcher is one path match.
type PathMatcher struct {
	Type  string         `json:"type"`
	Value string         `json:"value"`
	Re    *regexp.Regexp `json:"-"`
}

// HeaderMatcher is one header match (name lower-cased).
type HeaderMatcher struct {
	Name  string         `json:"name"`
	Type  string         `json:"type"`
	Value string         `json:"value"`
	Re    *regexp.Regexp `json:"-"`
}

// Rule is a compiled access rule.
type Rule struct {
	Name   string  `json:"name"`
	Policy *Policy `json:"-"`
	// Index is the rule's index in spec.rules; -1 for a built-in.
	Index   int  `json:"index"`
	Builtin bool `json:"builtin,omitempty"`
	// ExtAuth marks a legacy v0alpha0 ExternalAuth rule (asks the authorizer when it matches).
	ExtAuth       bool                            `json:"extAuth,omitempty"`
	ExtAuthConfig *gwapiv1.HTTPExternalAuthFilter `json:"-"`
	Principal     Principal                       `json:"principal"`
	Permission    Permission                      `json:"permission"`
	// CELError is set when the rule is in the policy but the translator drops it: its
	// CEL expression does not compile, and this is cel-go's error, quoted. Skipped is the
	// sentence for -o json, written by render (render.DroppedText) in its copy; "" here.
	CELError string `json:"-"`
	Skipped  string `json:"skipped,omitempty"`
	// Source is where the rule is written, resolved on first use (see RuleSource).
	Source RuleSource `json:"-"`
	id     string
}

// ID is "NS/POLICY#RULE" (precomputed when compiled).
func (r *Rule) ID() string {
	if r.id != "" {
		return r.id
	}
	return r.Policy.ID() + "#" + r.Name
}

// Policy is a compiled XAccessPolicy as one level enforces it.
type Policy struct {
	Namespace string                  `json:"namespace"`
	Name      string                  `json:"name"`
	Action    string                  `json:"action"`
	Legacy    bool                    `json:"legacy,omitempty"`
	Obj       *snapshot.XAccessPolicy `json:"-"`
	// Rules are in RBAC policy-map order (by name), skipped rules excluded; for the
	// all-policies combination they include the built-ins when those apply.
	Rules []*Rule `json:"rules"`
	// All lists every rule in spec order, skipped ones included (for describing).
	All           []*Rule                         `json:"-"`
	RuleLess      bool                            `json:"ruleLess,omitempty"`
	ExtAuth       *gwapiv1.HTTPExternalAuthFilter `json:"-"`
	ExtAuthHash   string                          `json:"-"`
	Source        snapshot.Source                 `json:"-"`
	CreationStamp string                          `json:"-"`
	id            string
}

// ID is "NS/POLICY" (precomputed when compiled).
func (p *Policy) ID() string {
	if p.id != "" {
		return p.id
	}
	return p.Namespace + "/" + p.Name
}

// Collision records a rule-name collision in a merged level.
type Collision struct {
	Name     string `json:"name"`
	Kept     string `json:"kept"`
	Replaced string `json:"replaced"`
}

// Ignored is a policy on a level's target that the level does not enforce, and why, as
// data: Why and the fields its sentence needs (render.IgnoredText writes it).
type Ignored struct {
	Policy *snapshot.XAccessPolicy `json:"-"`
	ID     string                  `json:"policy"`
	// Reason is Why's sentence for -o json, written by render (render.IgnoredText) in its
	// copy; "" here.
	Reason string `json:"reason"`
	// Code is the reason as a CamelCase word (the Reason* constants of enforcement.go,
	// or the admission's reason).
	Code string `json:"code,omitempty"`
	// Why is an Ignored* constant.
	Why string `json:"-"`
	// From and Message: where the admission comes from and its status message, quoted
	// (IgnoredNotAccepted; Code is its reason).
	From    string `json:"-"`
	Message string `json:"-"`
	// SectionName is the targetRef's sectionName and TargetKind the target's kind
	// (IgnoredNoSections, IgnoredNoListener, IgnoredOtherListener).
	SectionName string `json:"-"`
	TargetKind  string `json:"-"`
	// Action is the policy's spec.action (IgnoredUnknownAction); UsedExtAuth the
	// ExternalAuth policy the level uses (IgnoredExtAuthNotFirst).
	Action      string `json:"-"`
	UsedExtAuth string `json:"-"`
}

// Why a level leaves a policy out (Ignored.Why); render writes the sentence of each
// (render.IgnoredText).
const (
	IgnoredNotAccepted     = "not-accepted"        // the admission the semantics follows rejects it (Code, From, Message)
	IgnoredNoSections      = "no-sections"         // sectionName on a target kind without sections (SectionName, TargetKind)
	IgnoredNoListener      = "no-listener"         // sectionName names no listener of the gateway (SectionName)
	IgnoredOtherListener   = "other-listener"      // sectionName names another listener than the path's (SectionName)
	IgnoredLegacyNoAction  = "legacy-no-action"    // a v0alpha0 object stored without spec.action
	IgnoredExtAuthNotFirst = "extauth-not-first"   // another ExternalAuth policy comes first on the target (UsedExtAuth)
	IgnoredUnknownAction   = "action-not-enforced" // spec.action is neither Allow nor ExternalAuth (Action)
)

// IgnoredWhys lists every Ignored* constant (render's tests check each has a sentence).
var IgnoredWhys = []string{IgnoredNotAccepted, IgnoredNoSections, IgnoredNoListener, IgnoredOtherListener,
	IgnoredLegacyNoAction, IgnoredExtAuthNotFirst, IgnoredUnknownAction}

// Why a rule's source selects any caller or nobody though it names no caller
// (Principal.Why; docs/semantics.md#source-fail-open); render writes the sentence of
// each (render.PrincipalNote).
const (
	SourceOmitted          = "source-omitted"            // the rule has no source: any caller
	SourceTypeWithoutField = "source-type-without-field" // the type's field is absent (SourceType)
	SourceFieldWithoutType = "source-field-without-type" // a field without a type
	SourceOtherKindField   = "source-other-kind-field"   // the type with the other kind's field (SourceType)
)

// SourceWhys lists every Source* constant of Principal.Why.
var SourceWhys = []string{SourceOmitted, SourceTypeWithoutField, SourceFieldWithoutType, SourceOtherKindField}

// What a permission stands for where the authorization lists nothing it matches as
// written (Permission.Why; docs/semantics.md#permissions); render writes the sentence
// of each (render.PermissionNote).
const (
	PermissionBuiltin              = "builtin"                // a built-in allowance of the legacy translator
	PermissionAuthorizationOmitted = "authorization-omitted"  // no authorization: the empty authorization's meaning
	PermissionNoMCPMethod          = "no-mcp-method"          // an inline authorization listing no MCP method
	PermissionEmptyMethods         = "empty-methods"          // methods: [] lists none: matches nothing
	PermissionCELWithoutExpression = "cel-without-expression" // a CEL authorization without its expression
	PermissionUnknownType          = "unknown-type"           // an authorization type agpol does not know (AuthorizationType)
	PermissionToolsDropped         = "tools-dropped"          // v0alpha0 InlineTools read from a cluster storing v1alpha1 (ToolsDropped)
	PermissionEmptyToolList        = "empty-tool-list"        // v0alpha0 InlineTools without tools
	PermissionLegacyExtAuth        = "legacy-extauth"         // a v0alpha0 ExternalAuth rule: tools/call, then the authorizer
)

// PermissionWhys lists every Permission* constant of Permission.Why.
var PermissionWhys = []string{PermissionBuiltin, PermissionAuthorizationOmitted, PermissionNoMCPMethod, PermissionEmptyMethods,
	PermissionCELWithoutExpression, PermissionUnknownType, PermissionToolsDropped, PermissionEmptyToolList, PermissionLegacyExtAuth}

// NoExtAuthFilter is why the data plane has no ext_authz filter for a backend level's
// ExternalAuth config on a gateway (Level.NoFilter; docs/semantics.md#extauth-backendref-group):
// no HTTPRoute of Gateway references Backend with the group exactly
// agentic.networking.x-k8s.io. render writes its sentence (render.NoExtAuthFilterText).
type NoExtAuthFilter struct {
	Gateway topology.Ref
	Backend topology.Ref
}

// Level is one enforcement level of a chain.
type Level struct {
	Name   LevelName    `json:"name"`
	Target topology.Ref `json:"target"`
	// ExtAuth is the ExternalAuth policy the level uses (the first), nil when none.
	ExtAuth *Policy `json:"extAuth,omitempty"`
	// ExtAuthFilter is false when the data plane has no ext_authz filter for ExtAuth's
	// config (docs/semantics.md#extauth-backendref-group), so the authorizer is never called.
	ExtAuthFilter bool `json:"extAuthFilter"`
	// NoFilter says why ExtAuthFilter is false; ExtAuthNote is its sentence for -o json,
	// written by render (render.NoExtAuthFilterText) in its copy; "" here.
	NoFilter    *NoExtAuthFilter `json:"-"`
	ExtAuthNote string           `json:"extAuthNote,omitempty"`
	// Allow are the Allow policies in evaluation order.
	Allow []*Policy `json:"allow,omitempty"`
	// Merged are the level's rules for the union combinations, in RBAC map order.
	Merged     []*Rule     `json:"merged,omitempty"`
	Collisions []Collision `json:"collisions,omitempty"`
	// LegacyExt are v0alpha0 ExternalAuth rules (legacy enforcement).
	LegacyExt []*Rule   `json:"legacyExt,omitempty"`
	Ignored   []Ignored `json:"ignored,omitempty"`
	combine   AllowCombine
}

// Enforcing reports whether the level's Allow filter enforces anything.
func (l *Level) Enforcing() bool {
	if l == nil {
		return false
	}
	if l.combine == CombineAllPolicies {
		return len(l.Allow) > 0
	}
	return len(l.Merged) > 0
}

// RuleLessAllow returns the first rule-less Allow policy of the level, or nil.
func (l *Level) RuleLessAllow() *Policy {
	if l == nil {
		return nil
	}
	for _, p := range l.Allow {
		if p.RuleLess {
			return p
		}
	}
	return nil
}

// HasPolicies reports whether the level enforces any policy (ExternalAuth or Allow).
func (l *Level) HasPolicies() bool {
	return l != nil && (l.ExtAuth != nil || len(l.Allow) > 0 || len(l.LegacyExt) > 0)
}

// Chain is the compiled evaluation chain of a (gateway, listener, backend) path.
type Chain struct {
	Semantics Semantics `json:"semantics"`
	Gateway   *Level    `json:"gateway"`
	// Backend is nil when the route's backend is a core Service (or there is no route).
	Backend *Level `json:"backend,omitempty"`
	// SharedExtAuth is true when both levels delegate to the same ExternalAuth config:
	// one ext_authz filter, called once.
	SharedExtAuth bool `json:"sharedExtAuth,omitempty"`
	// OtherDataPlane is set when no XAccessPolicy applies on this gateway at all: a data
	// plane other than kube-agentic-networking serves it (topology.ClassifyGateways). Its
	// levels are then empty. nil on the reference data plane.
	OtherDataPlane *OtherDataPlane `json:"-"`
	// NotEnforced is OtherDataPlane's sentence for -o json, written by render
	// (render.OtherDataPlaneText) in its copy; "" here.
	NotEnforced string `json:"notEnforced,omitempty"`
	levels      []*Level
	steps       []ChainStep
}

// OtherDataPlane is a Gateway another data plane serves, so no XAccessPolicy is
// enforced on it (Chain.OtherDataPlane): render writes its sentence
// (render.OtherDataPlaneText).
type OtherDataPlane struct {
	Gateway   topology.Ref
	DataPlane topology.GatewayDataPlane
}

// Levels returns the levels present, gateway first.
func (c *Chain) Levels() []*Level {
	if c.levels != nil {
		return c.levels
	}
	if c.Backend == nil {
		return []*Level{c.Gateway}
	}
	return []*Level{c.Gateway, c.Backend}
}
