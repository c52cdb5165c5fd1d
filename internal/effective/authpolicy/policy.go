// Package authpolicy owns the effective Kuadrant AuthPolicy: the Gateway API paths
// (Gateway → listener → HTTPRoute → rule) the way Kuadrant's policy machinery builds
// them, the CRD validation the API server would apply to an AuthPolicy read from a file,
// the Defaults & Overrides fold of every policy along a path (with a record of every rule
// that lost and why), the enforcement status of each policy computed over all paths the
// way kuadrant-operator computes it, and what a request must present to pass the
// effective policy. It decides; it never prints.
//
// The rules followed are in docs/semantics.md#kuadrant-rules (kuadrant-operator v1.5.2
// api/v1 merge strategies, policy-machinery v0.9.0 topology, the AuthPolicy status updater).
package authpolicy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
	"github.com/agpol/agpol/internal/snapshot"
)

// GatewayGroup is the only group an AuthPolicy may target.
const GatewayGroup = "gateway.networking.k8s.io"

// Level is how specific an attachment point is.
type Level int

// Levels from least to most specific.
const (
	LevelGateway Level = iota + 1
	LevelListener
	LevelRoute
	LevelRouteRule
)

func (l Level) String() string {
	switch l {
	case LevelGateway:
		return "gateway"
	case LevelListener:
		return "listener"
	case LevelRoute:
		return "route"
	case LevelRouteRule:
		return "route rule"
	}
	return "unknown"
}

// Mode says which block of the spec holds a policy's rules.
type Mode string

// Modes.
const (
	ModeBare      Mode = "rules"
	ModeDefaults  Mode = "defaults"
	ModeOverrides Mode = "overrides"
)

// Strategy is how a (less specific) policy combines with what is below it.
type Strategy string

// The four strategies of kuadrant-operator's api/v1/merge_strategies.go.
const (
	AtomicDefaults  Strategy = "atomic defaults"
	MergeDefaults   Strategy = "merge defaults"
	AtomicOverrides Strategy = "atomic overrides"
	MergeOverrides  Strategy = "merge overrides"
)

// Target is a policy's targetRef, resolved in the policy's namespace.
type Target struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Section   string `json:"sectionName,omitempty"`
}

// String is "Kind ns/name[#section]".
func (t Target) String() string {
	s := t.Kind + " " + t.Namespace + "/" + t.Name
	if t.Section != "" {
		s += "#" + t.Section
	}
	return s
}

// Rule is one mergeable unit of a policy: a named rule of a section, a singleton
// response slot, a named pattern, or the whole policy-level `when` list.
type Rule struct {
	// Key is kuadrant-operator's rule identity, e.g. "authentication#jwt", "conditions#".
	Key string `json:"key"`
	// Group and Name are the JSON contract's spelling: e.g. "authentication"/"jwt",
	// "response"/"unauthenticated", "when"/"predicates".
	Group string `json:"group"`
	Name  string `json:"name"`
	// Spec is the rule body as canonical JSON (sorted keys); it is never merged field by field.
	Spec json.RawMessage `json:"spec"`
	// Source is the policy ("ns/name") the rule came from.
	Source string `json:"source"`
	// Position is where the rule is written, resolved on first use.
	Position Position `json:"-"`
}

// Policy is one AuthPolicy as the fold sees it.
type Policy struct {
	// Ref is "namespace/name".
	Ref       string
	Namespace string
	Name      string
	Created   time.Time
	Object    *snapshot.AuthPolicy
	Mode      Mode
	Strategy  Strategy
	Target    Target
	// Level is the level of the target (0 when the target kind is not supported).
	Level Level
	// Rules by key.
	Rules map[string]Rule
	// Invalid lists why the API server would reject the object; such a policy takes no part.
	Invalid []string
	// TargetNotFound is set (to the Accepted=False message) when the target does not resolve.
	TargetNotFound string
	// node is the topology node the policy attaches to ("" when unresolved).
	node string
}

// Usable reports whether the policy takes part in the fold (valid and its target resolves).
func (p *Policy) Usable() bool { return len(p.Invalid) == 0 && p.TargetNotFound == "" && p.node != "" }

// Empty mirrors kuadrant-operator's Empty(): no `rules` block.
func (p *Policy) Empty() bool { return emptyRules(p.Rules) }

// Keys returns the policy's rule keys, sorted.
func (p *Policy) Keys() []string { return sortedKeys(p.Rules) }

// Describe is "defaults(merge)", "overrides(atomic)" or "rules" (implicit atomic defaults).
func (p *Policy) Describe() string {
	switch p.Mode {
	case ModeDefaults:
		if p.Strategy == MergeDefaults {
			return "defaults(merge)"
		}
		return "defaults(atomic)"
	case ModeOverrides:
		if p.Strategy == MergeOverrides {
			return "overrides(merge)"
		}
		return "overrides(atomic)"
	}
	return "rules"
}

// newPolicy models an AuthPolicy: validation, strategy, rule keys and positions.
func newPolicy(s *snapshot.Snapshot, ap *snapshot.AuthPolicy) *Policy {
	p := &Policy{
		Ref:       ap.Namespace + "/" + ap.Name,
		Namespace: ap.Namespace,
		Name:      ap.Name,
		Created:   ap.CreationTimestamp.Time,
		Object:    ap,
		Rules:     map[string]Rule{},
	}
	tr := ap.Spec.TargetRef
	p.Target = Target{Group: string(tr.Group), Kind: string(tr.Kind), Namespace: ap.Namespace, Name: string(tr.Name)}
	if tr.SectionName != nil {
		p.Target.Section = string(*tr.SectionName)
	}
	p.Invalid = validate(ap)

	spec := &ap.Spec
	proper, block := &spec.AuthPolicySpecProper, "spec"
	p.Mode, p.Strategy = ModeBare, AtomicDefaults
	switch {
	case spec.Defaults != nil:
		proper, block = &spec.Defaults.AuthPolicySpecProper, "spec.defaults"
		p.Mode = ModeDefaults
		if spec.Defaults.Strategy == kuadrantv1.StrategyMerge {
			p.Strategy = MergeDefaults
		}
	case spec.Overrides != nil:
		proper, block = &spec.Overrides.AuthPolicySpecProper, "spec.overrides"
		p.Mode, p.Strategy = ModeOverrides, AtomicOverrides
		if spec.Overrides.Strategy == kuadrantv1.StrategyMerge {
			p.Strategy = MergeOverrides
		}
	}
	add := func(key, fieldPath string, body any) {
		group, name := contractName(key)
		raw, err := canonicalJSON(body)
		if err != nil {
			p.Invalid = append(p.Invalid, fmt.Sprintf("%s: %v", fieldPath, err))
			return
		}
		p.Rules[key] = Rule{Key: key, Group: group, Name: name, Spec: raw, Source: p.Ref,
			Position: fieldPosition(s, ap.Source, fieldPath)}
	}
	for name, body := range proper.NamedPatterns {
		add("patterns#"+name, block+".patterns."+name, body)
	}
	if len(proper.Conditions) > 0 {
		add("conditions#", block+".when", proper.Conditions)
	}
	if a := proper.AuthScheme; a != nil {
		rb := block + ".rules"
		for _, sec := range []struct {
			name  string
			rules map[string]apiextv1.JSON
		}{{"authentication", a.Authentication}, {"metadata", a.Metadata}, {"authorization", a.Authorization}, {"callbacks", a.Callbacks}} {
			for name, body := range sec.rules {
				add(sec.name+"#"+name, rb+"."+sec.name+"."+name, body)
			}
		}
		if r := a.Response; r != nil {
			if r.Unauthenticated != nil {
				add("response.unauthenticated#", rb+".response.unauthenticated", *r.Unauthenticated)
			}
			if r.Unauthorized != nil {
				add("response.unauthorized#", rb+".response.unauthorized", *r.Unauthorized)
			}
			for name, body := range r.Success.Headers {
				add("response.success.headers#"+name, rb+".response.success.headers."+name, body)
			}
			for name, body := range r.Success.Filters {
				add("response.success.metadata#"+name, rb+".response.success.filters."+name, body)
			}
		}
	}
	return p
}

func isNonAuthKey(k string) bool {
	return strings.HasPrefix(k, "patterns#") || k == "conditions#"
}

func emptyRules(rules map[string]Rule) bool {
	for k := range rules {
		if !isNonAuthKey(k) {
			return false
		}
	}
	return true
}

// Group names of the JSON contract, in display order.
var Groups = []string{"authentication", "metadata", "authorization", "callbacks", "response",
	"responseSuccessHeaders", "responseSuccessFilters", "patterns", "when"}

// contractName maps a rule key to the JSON contract's group and name.
func contractName(key string) (group, name string) {
	sec, name, _ := strings.Cut(key, "#")
	switch sec {
	case "conditions":
		return "when", "predicates"
	case "response.unauthenticated":
		return "response", "unauthenticated"
	case "response.unauthorized":
		return "response", "unauthorized"
	case "response.success.headers":
		return "responseSuccessHeaders", name
	case "response.success.metadata":
		return "responseSuccessFilters", name
	}
	return sec, name
}

func canonicalJSON(v any) (json.RawMessage, error) {
	var b []byte
	var err error
	switch x := v.(type) {
	case apiextv1.JSON:
		b = x.Raw
	default:
		if b, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	if len(b) == 0 {
		return json.RawMessage("null"), nil
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return nil, err
	}
	return json.Marshal(generic)
}

// validate applies the AuthPolicy CRD's validation rules (CEL and enums) that the API
// server enforces, so that objects read from files are judged like admitted ones.
func validate(ap *snapshot.AuthPolicy) []string {
	var out []string
	spec := &ap.Spec
	tr := spec.TargetRef
	if string(tr.Group) != GatewayGroup {
		out = append(out, "spec.targetRef: Invalid targetRef.group. The only supported value is 'gateway.networking.k8s.io'")
	}
	switch string(tr.Kind) {
	case "HTTPRoute", "GRPCRoute", "Gateway":
	default:
		out = append(out, "spec.targetRef: Invalid targetRef.kind. The only supported values are 'HTTPRoute', 'GRPCRoute', and 'Gateway'")
	}
	if tr.Name == "" {
		out = append(out, "spec.targetRef.name: Required value")
	}
	raw := rawSpec(ap)
	has := func(fields ...string) bool {
		if raw != nil {
			_, found, _ := unstructured.NestedFieldNoCopy(raw, fields...)
			return found
		}
		return false
	}
	bare := &spec.AuthPolicySpecProper
	hasBare := has("patterns") || has("when") || has("rules") ||
		bare.NamedPatterns != nil || bare.Conditions != nil || bare.AuthScheme != nil
	hasDefaults, hasOverrides := spec.Defaults != nil, spec.Overrides != nil
	if hasDefaults && hasBare {
		out = append(out, "spec: Invalid value: Implicit and explicit defaults are mutually exclusive")
	}
	if hasOverrides && hasBare {
		out = append(out, "spec: Invalid value: Implicit defaults and explicit overrides are mutually exclusive")
	}
	if hasDefaults && hasOverrides {
		out = append(out, "spec: Invalid value: Explicit overrides and explicit defaults are mutually exclusive")
	}
	check := func(block string, m *kuadrantv1.MergeableAuthPolicySpec) {
		switch m.Strategy {
		case "", kuadrantv1.StrategyAtomic, kuadrantv1.StrategyMerge:
		default:
			out = append(out, fmt.Sprintf("spec.%s.strategy: Unsupported value: %q: supported values: \"atomic\", \"merge\"", block, m.Strategy))
		}
		if !hasAnyRule(m.AuthScheme) {
			out = append(out, fmt.Sprintf("spec: Invalid value: At least one spec.%s.rules must be defined", block))
		}
		out = append(out, checkPredicates("spec."+block, m.Conditions)...)
	}
	if hasDefaults {
		check("defaults", spec.Defaults)
	}
	if hasOverrides {
		check("overrides", spec.Overrides)
	}
	if !hasDefaults && !hasOverrides {
		if !hasAnyRule(bare.AuthScheme) {
			out = append(out, "spec: Invalid value: At least one spec.rules must be defined")
		}
		out = append(out, checkPredicates("spec", bare.Conditions)...)
	}
	return out
}

func checkPredicates(block string, when []kuadrantv1.WhenPredicate) []string {
	var out []string
	for i, w := range when {
		if w.Predicate == "" {
			out = append(out, fmt.Sprintf("%s.when[%d].predicate: Invalid value: should be at least 1 chars long", block, i))
		}
	}
	return out
}

func rawSpec(ap *snapshot.AuthPolicy) map[string]any {
	raw := ap.Object()
	if raw == nil {
		return nil
	}
	spec, ok := raw.Object["spec"].(map[string]any)
	if !ok {
		return nil
	}
	return spec
}

// hasAnyRule is the CRD's "At least one ... rules must be defined" rule.
func hasAnyRule(a *kuadrantv1.AuthSchemeSpec) bool {
	if a == nil {
		return false
	}
	if len(a.Authentication) > 0 || len(a.Metadata) > 0 || len(a.Authorization) > 0 || len(a.Callbacks) > 0 {
		return true
	}
	if r := a.Response; r != nil {
		return r.Unauthenticated != nil || r.Unauthorized != nil || len(r.Success.Headers) > 0 || len(r.Success.Filters) > 0
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// older reports whether a is established before b at the same node: earlier
// creationTimestamp, then "namespace/name" ascending (policy-machinery ObjectsByCreationTimestamp).
func older(a, b *Policy) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	return a.Ref < b.Ref
}
