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
	// Note explains Any/None when the source was incomplete or omitted.
	Note string `json:"note,omitempty"`
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
	// Note explains the permission (e.g. "authorization omitted").
	Note string `json:"note,omitempty"`
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
	// Skipped is set when the rule is in the policy but the translator drops it.
	Skipped string `json:"skipped,omitempty"`
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

// Ignored is a policy on a level's target that the level does not enforce, and why.
type Ignored struct {
	Policy *snapshot.XAccessPolicy `json:"-"`
	ID     string                  `json:"policy"`
	Reason string                  `json:"reason"`
	// Code is Reason as a CamelCase word (the Reason* constants of enforcement.go).
	Code string `json:"code,omitempty"`
}

// Level is one enforcement level of a chain.
type Level struct {
	Name   LevelName    `json:"name"`
	Target topology.Ref `json:"target"`
	// ExtAuth is the ExternalAuth policy the level uses (the first), nil when none.
	ExtAuth *Policy `json:"extAuth,omitempty"`
	// ExtAuthFilter is false when the data plane has no ext_authz filter for ExtAuth's
	// config (docs/semantics.md#extauth-backendref-group), so the authorizer is never called.
	ExtAuthFilter bool   `json:"extAuthFilter"`
	ExtAuthNote   string `json:"extAuthNote,omitempty"`
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
