// Package v1beta2 holds Go types for Kuadrant's AuthPolicy kuadrant.io/v1beta2 as
// kuadrant-operator v0.6.1 served it (Kuadrant/kuadrant-operator@0d571de7e44fe5315c51ec3729fe17740b030ced,
// api/v1beta2/authpolicy_types.go and api/v1beta2/route_selectors.go): one target
// (HTTPRoute or Gateway), top-level and rule-level routeSelectors, policy-level and
// rule-level `when` conditions in Authorino's pattern form, named patterns and the
// rule sections. Rule bodies (Authorino v1beta2 shapes) are kept as raw JSON; only the
// fields agpol reasons about (routeSelectors, when, priority) are typed.
//
// Later v0.x releases (v0.7 to v0.11) added `defaults` and `overrides` blocks to
// v1beta2; agpol does not model them (ExplicitDefaultsOrOverrides reports them).
package v1beta2

import (
	"encoding/json"
	"sort"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GroupName is Kuadrant's API group.
const GroupName = "kuadrant.io"

// Version is this package's API version.
const Version = "v1beta2"

// UpstreamCommit is the kuadrant-operator commit (tag v0.6.1) these types and the
// embedded v1beta2 CRD follow.
const UpstreamCommit = "0d571de7e44fe5315c51ec3729fe17740b030ced"

// BackRefAnnotation is the annotation the v0.6.1 operator writes on the target of the
// AuthPolicy it reconciled first (pkg/common/common.go:L35), naming "ns/name".
const BackRefAnnotation = "kuadrant.io/authpolicy"

// AuthPolicy is a Kuadrant AuthPolicy at v1beta2.
type AuthPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AuthPolicySpec   `json:"spec,omitempty"`
	Status            AuthPolicyStatus `json:"status,omitempty"`
}

// PolicyTargetReference is Gateway API v1alpha2's PolicyTargetReference (with an
// optional namespace, which v0.6.1 only accepts when it is the policy's own).
type PolicyTargetReference struct {
	Group     gwapiv1.Group      `json:"group"`
	Kind      gwapiv1.Kind       `json:"kind"`
	Name      gwapiv1.ObjectName `json:"name"`
	Namespace *gwapiv1.Namespace `json:"namespace,omitempty"`
}

// AuthPolicySpec is the v1beta2 spec.
type AuthPolicySpec struct {
	TargetRef      PolicyTargetReference          `json:"targetRef"`
	RouteSelectors []RouteSelector                `json:"routeSelectors,omitempty"`
	NamedPatterns  map[string][]PatternExpression `json:"patterns,omitempty"`
	Conditions     []PatternExpressionOrRef       `json:"when,omitempty"`
	AuthScheme     AuthSchemeSpec                 `json:"rules,omitempty"`
	// Defaults and Overrides are the blocks v0.7 to v0.11 added to v1beta2. The v0.6.1
	// CRD prunes them; agpol keeps them only to say that it does not model them.
	Defaults  *apiextv1.JSON `json:"defaults,omitempty"`
	Overrides *apiextv1.JSON `json:"overrides,omitempty"`
}

// ExplicitDefaultsOrOverrides reports whether the policy uses the defaults or
// overrides blocks of later v0.x releases, which agpol does not model at v1beta2.
func (s *AuthPolicySpec) ExplicitDefaultsOrOverrides() bool {
	return s.Defaults != nil || s.Overrides != nil
}

// RouteSelector selects HTTPRouteRules and hostnames of the targeted HTTPRoute.
type RouteSelector struct {
	Hostnames []gwapiv1.Hostname       `json:"hostnames,omitempty"`
	Matches   []gwapiv1.HTTPRouteMatch `json:"matches,omitempty"`
}

// Authorino pattern operators.
const (
	OperatorEq      = "eq"
	OperatorNeq     = "neq"
	OperatorIncl    = "incl"
	OperatorExcl    = "excl"
	OperatorMatches = "matches"
)

// PatternExpression is one Authorino comparison: the value at selector (a JSON path
// into the authorization JSON) compared with value by operator.
type PatternExpression struct {
	Selector string `json:"selector,omitempty"`
	Operator string `json:"operator,omitempty"`
	Value    string `json:"value,omitempty"`
}

// PatternExpressionOrRef is a pattern expression, a reference to a named pattern set,
// or a group (all: logical AND, any: logical OR) of further ones.
type PatternExpressionOrRef struct {
	PatternExpression `json:",inline"`
	PatternRef        string                   `json:"patternRef,omitempty"`
	All               []PatternExpressionOrRef `json:"all,omitempty"`
	Any               []PatternExpressionOrRef `json:"any,omitempty"`
}

// AuthSchemeSpec holds the named rules of each section.
type AuthSchemeSpec struct {
	Authentication map[string]Rule `json:"authentication,omitempty"`
	Metadata       map[string]Rule `json:"metadata,omitempty"`
	Authorization  map[string]Rule `json:"authorization,omitempty"`
	Response       *ResponseSpec   `json:"response,omitempty"`
	Callbacks      map[string]Rule `json:"callbacks,omitempty"`
}

// ResponseSpec holds the deny responses and the success items.
type ResponseSpec struct {
	Unauthenticated *apiextv1.JSON  `json:"unauthenticated,omitempty"`
	Unauthorized    *apiextv1.JSON  `json:"unauthorized,omitempty"`
	Success         SuccessResponse `json:"success,omitempty"`
}

// SuccessResponse holds named success headers and dynamic metadata.
type SuccessResponse struct {
	Headers         map[string]Rule `json:"headers,omitempty"`
	DynamicMetadata map[string]Rule `json:"dynamicMetadata,omitempty"`
}

// Rule is one named rule: its whole body as written (Raw), and the common fields
// every rule carries (CommonAuthRuleSpec plus Authorino's CommonEvaluatorSpec).
type Rule struct {
	RouteSelectors []RouteSelector
	When           []PatternExpressionOrRef
	Priority       int
	// Raw is the rule's body as written, routeSelectors included.
	Raw json.RawMessage
}

type ruleCommon struct {
	RouteSelectors []RouteSelector          `json:"routeSelectors,omitempty"`
	When           []PatternExpressionOrRef `json:"when,omitempty"`
	Priority       int                      `json:"priority,omitempty"`
}

// UnmarshalJSON keeps the raw body and reads the common fields.
func (r *Rule) UnmarshalJSON(b []byte) error {
	var c ruleCommon
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	r.RouteSelectors, r.When, r.Priority = c.RouteSelectors, c.When, c.Priority
	r.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// MarshalJSON writes the raw body back.
func (r Rule) MarshalJSON() ([]byte, error) {
	if len(r.Raw) == 0 {
		return json.Marshal(ruleCommon{RouteSelectors: r.RouteSelectors, When: r.When, Priority: r.Priority})
	}
	return r.Raw, nil
}

// AuthPolicyStatus is the recorded status; v0.6.1 writes one condition, "Available".
type AuthPolicyStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// NamedRule is a rule with its section and name, as the policy lists it.
type NamedRule struct {
	Section string // authentication, metadata, authorization, response.success.headers, ...
	Name    string
	Rule    Rule
}

// Rules lists every named rule of the policy, sorted by section then name.
func (s *AuthSchemeSpec) Rules() []NamedRule {
	var out []NamedRule
	add := func(section string, m map[string]Rule) {
		for _, name := range sortedKeys(m) {
			out = append(out, NamedRule{Section: section, Name: name, Rule: m[name]})
		}
	}
	add("authentication", s.Authentication)
	add("metadata", s.Metadata)
	add("authorization", s.Authorization)
	if s.Response != nil {
		add("response.success.headers", s.Response.Success.Headers)
		add("response.success.dynamicMetadata", s.Response.Success.DynamicMetadata)
	}
	add("callbacks", s.Callbacks)
	return out
}

func sortedKeys(m map[string]Rule) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
