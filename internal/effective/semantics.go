package effective

import (
	"fmt"
	"reflect"
	"strings"
)

// AllowCombine is how several Allow policies on one target combine (docs/semantics.md#allow-combine).
type AllowCombine string

// Allow combination choices.
const (
	// CombineUnion merges the rules of all Allow policies of a level; any matching rule admits (reference).
	CombineUnion AllowCombine = "union"
	// CombineAllPolicies requires every Allow policy of a level to allow (proposal 0059, legacy translator).
	CombineAllPolicies AllowCombine = "all-policies"
	// CombinePR220 is the union, but a level where no rule selects the caller is passed (PR #220).
	CombinePR220 AllowCombine = "pr220"
)

// ExtAuthPlacement is where the ExternalAuth checks sit relative to the Allow checks (docs/semantics.md#filter-order).
type ExtAuthPlacement string

// ExternalAuth placements.
const (
	// ExtAuthFirst runs the ExternalAuth of every level before any Allow filter (reference).
	ExtAuthFirst ExtAuthPlacement = "all-extauth-first"
	// ExtAuthPerLevel runs each level entirely (ExternalAuth, then Allow) before the next (0059, PR #220).
	ExtAuthPerLevel ExtAuthPlacement = "per-level"
	// ExtAuthLast runs every Allow (RBAC) filter first and the authorizers last (legacy translator).
	ExtAuthLast ExtAuthPlacement = "after-allow"
)

// PolicyOrder is the order of policies within a level (docs/semantics.md#policy-order).
type PolicyOrder string

// Policy orders.
const (
	// OrderAgeName sorts ExternalAuth first, then creationTimestamp, then name (reference).
	OrderAgeName PolicyOrder = "age-then-name"
	// OrderName sorts policies by name only, ignoring age and action: the legacy translator
	// used the informer lister's order, which is unspecified (a map), so agpol picks name
	// order to keep answers reproducible whatever the order of the input files.
	OrderName PolicyOrder = "name"
)

// RuleCollision is what happens to same-named rules of different policies on one level (docs/semantics.md#rule-name-collision).
type RuleCollision string

// Rule-name collision choices.
const (
	// CollisionYoungerReplaces keys rules by name: a younger policy's rule replaces the older one (reference).
	CollisionYoungerReplaces RuleCollision = "younger-replaces"
	// CollisionKeepBoth keeps every rule.
	CollisionKeepBoth RuleCollision = "keep-both"
)

// BaseMethods says which base-protocol requests are allowed without a rule (docs/semantics.md#base-protocol).
type BaseMethods string

// Base-method defaults.
const (
	// BaseMethodsNone allows nothing implicitly (reference, since #279).
	BaseMethodsNone BaseMethods = "none"
	// BaseMethodsBuiltin adds the legacy built-in allowances to every enforcing RBAC config:
	// initialize, notifications/initialized, tools/list, any GET, DELETE with mcp-session-id.
	BaseMethodsBuiltin BaseMethods = "builtin-allowances"
)

// NoPolicyDefault is the verdict when no policy applies (docs/semantics.md#no-policy).
type NoPolicyDefault string

// No-policy defaults.
const (
	NoPolicyAllow NoPolicyDefault = "allow" // reference
	NoPolicyDeny  NoPolicyDefault = "deny"  // user journeys, proposal 0008 ("zero trust")
)

// EmptyAuthorization is what a rule without authorization (or with no MCP method) permits (docs/semantics.md#empty-authorization).
type EmptyAuthorization string

// Empty-authorization choices.
const (
	// EmptyAuthAny permits any request (reference, v1alpha1).
	EmptyAuthAny EmptyAuthorization = "any"
	// EmptyAuthDenyTools permits everything but tools/call (legacy NOT(tools/call), proposal 0008:200).
	EmptyAuthDenyTools EmptyAuthorization = "deny-tools"
)

// Enforcement says whether a field the API documents is enforced (docs/semantics.md#l7-fields, #section-name).
type Enforcement string

// Enforcement choices.
const (
	NotEnforced Enforcement = "ignored"  // reference
	Enforced    Enforcement = "enforced" // API documentation
)

// TargetKinds is which targetRef kinds admission accepts (docs/semantics.md#target-kinds).
type TargetKinds string

// Target-kind choices.
const (
	// TargetKindsAny admits any kind; only Gateway and XBackend are enforced (reference).
	TargetKindsAny TargetKinds = "any"
	// TargetKindsGatewayXBackend rejects policies that target anything else (0059, v0alpha0 CRD).
	TargetKindsGatewayXBackend TargetKinds = "gateway-xbackend"
)

// SourceFailOpen is what an incomplete rule source matches (docs/semantics.md#source-fail-open).
type SourceFailOpen string

// Source choices.
const (
	// SourceAny matches any caller (reference).
	SourceAny SourceFailOpen = "any"
	// SourceNone matches nobody ("Type must be set").
	SourceNone SourceFailOpen = "none"
)

// ExtAuthBackendRefGroup is whether a backend ExternalAuth needs a route backendRef with the
// exact agentic group to get an ext_authz filter (docs/semantics.md#extauth-backendref-group).
type ExtAuthBackendRefGroup string

// ExternalAuth filter choices.
const (
	ExtAuthGroupRequired ExtAuthBackendRefGroup = "required" // reference
	ExtAuthAlways        ExtAuthBackendRefGroup = "always"   // api-doc: always delegate
)

// AdmissionSource is where admission comes from (docs/semantics.md#recorded-status).
type AdmissionSource string

// Admission choices.
const (
	// AdmissionRecordedFirst uses the recorded status when present, else recomputes (reference).
	AdmissionRecordedFirst AdmissionSource = "recorded-status-first"
	// AdmissionRecompute always recomputes the controller's rules.
	AdmissionRecompute AdmissionSource = "recompute"
)

// V0alpha0Objects is how XAccessPolicies written at v0alpha0 are treated (docs/semantics.md#v0alpha0).
type V0alpha0Objects string

// v0alpha0 choices.
const (
	V0alpha0Inert  V0alpha0Objects = "inert"  // reference: empty action, never enforced
	V0alpha0Legacy V0alpha0Objects = "legacy" // enforced as the legacy translator did
)

// EmptyMethods is what an explicit empty MCP method list (methods: []) permits.
type EmptyMethods string

// Empty method-list choices.
const (
	// EmptyMethodsAny: like an absent list, any request (reference: the translator
	// cannot tell [] from absent).
	EmptyMethodsAny EmptyMethods = "any"
	// EmptyMethodsNone: nothing (kube-agentic-networking #293, open).
	EmptyMethodsNone EmptyMethods = "none"
)

// InvalidCEL is what a CEL rule that does not compile does to its policy.
type InvalidCEL string

// Invalid-CEL choices.
const (
	// InvalidCELRejectsPolicy: the controller rejects the whole policy (InvalidCEL) (reference).
	InvalidCELRejectsPolicy InvalidCEL = "reject-policy"
	// InvalidCELSkipsRule: the policy stays accepted; the bad rule is skipped and the
	// rest enforced (kube-agentic-networking #236, open).
	InvalidCELSkipsRule InvalidCEL = "skip-rule"
)

// Semantics gathers the choices where upstream's code and documents part
// (docs/semantics.md#proposals, #v0alpha0).
type Semantics struct {
	Name string `json:"name"`
	// AllowCombine: docs/semantics.md#allow-combine.
	AllowCombine AllowCombine `json:"allowCombine"`
	// ExtAuthPlacement: docs/semantics.md#filter-order.
	ExtAuthPlacement ExtAuthPlacement `json:"extAuthPlacement"`
	// PolicyOrder: docs/semantics.md#policy-order.
	PolicyOrder PolicyOrder `json:"policyOrder"`
	// RuleCollision: docs/semantics.md#rule-name-collision.
	RuleCollision RuleCollision `json:"ruleCollision"`
	// BaseMethods: docs/semantics.md#base-protocol.
	BaseMethods BaseMethods `json:"baseMethods"`
	// NoPolicyDefault: docs/semantics.md#no-policy.
	NoPolicyDefault NoPolicyDefault `json:"noPolicyDefault"`
	// EmptyAuthorization: docs/semantics.md#empty-authorization.
	EmptyAuthorization EmptyAuthorization `json:"emptyAuthorization"`
	// L7Fields: docs/semantics.md#l7-fields (authorization.methods/paths/headers/hosts/ports).
	L7Fields Enforcement `json:"l7Fields"`
	// SectionName: docs/semantics.md#section-name (targetRefs[].sectionName selects a listener).
	SectionName Enforcement `json:"sectionName"`
	// TargetKinds: docs/semantics.md#target-kinds.
	TargetKinds TargetKinds `json:"targetKinds"`
	// SourceFailOpen: docs/semantics.md#source-fail-open.
	SourceFailOpen SourceFailOpen `json:"sourceFailOpen"`
	// ExtAuthBackendRefGroup: docs/semantics.md#extauth-backendref-group.
	ExtAuthBackendRefGroup ExtAuthBackendRefGroup `json:"extAuthBackendRefGroup"`
	// Admission: docs/semantics.md#recorded-status.
	Admission AdmissionSource `json:"admission"`
	// ExtAuthSeniority: one ExternalAuth per target at admission (absent from the legacy controller).
	ExtAuthSeniority bool `json:"extAuthSeniority"`
	// V0alpha0: docs/semantics.md#v0alpha0.
	V0alpha0 V0alpha0Objects `json:"v0alpha0"`
	// CELOnlyToolsCall: docs/semantics.md#cel-only-tools-call, a CEL rule only matches tools/call.
	CELOnlyToolsCall bool `json:"celOnlyToolsCall"`
	// EmptyMethods: an explicit methods: [] (upstream #293).
	EmptyMethods EmptyMethods `json:"emptyMethods"`
	// InvalidCEL: a CEL rule that does not compile (upstream #236).
	InvalidCEL InvalidCEL `json:"invalidCEL"`
}

// Preset names.
const (
	PresetReference = "reference"
	PresetProposal  = "proposal-0059"
	PresetPR220     = "pr-220"
	PresetLegacy    = "v0alpha0-legacy"
	PresetPR293     = "pr-293"
	// The halves of pr-293, each alone (a maintainer objected to the methods half).
	PresetPR293Methods = "pr-293-methods"
	PresetPR293Keys    = "pr-293-keys"
	PresetPR236        = "pr-236"
)

// Reference is what the upstream controller, translator and Envoy enforce at HEAD.
func Reference() Semantics {
	return Semantics{
		Name:                   PresetReference,
		AllowCombine:           CombineUnion,
		ExtAuthPlacement:       ExtAuthFirst,
		PolicyOrder:            OrderAgeName,
		RuleCollision:          CollisionYoungerReplaces,
		BaseMethods:            BaseMethodsNone,
		NoPolicyDefault:        NoPolicyAllow,
		EmptyAuthorization:     EmptyAuthAny,
		L7Fields:               NotEnforced,
		SectionName:            NotEnforced,
		TargetKinds:            TargetKindsAny,
		SourceFailOpen:         SourceAny,
		ExtAuthBackendRefGroup: ExtAuthGroupRequired,
		Admission:              AdmissionRecordedFirst,
		ExtAuthSeniority:       true,
		V0alpha0:               V0alpha0Inert,
		CELOnlyToolsCall:       true,
		EmptyMethods:           EmptyMethodsAny,
		InvalidCEL:             InvalidCELRejectsPolicy,
	}
}

var presets = map[string]func() Semantics{
	PresetReference: Reference,
	// Proposal 0059 (every policy must allow, per level, short-circuit order, kinds restricted).
	PresetProposal: func() Semantics {
		s := Reference()
		s.Name = PresetProposal
		s.AllowCombine = CombineAllPolicies
		s.ExtAuthPlacement = ExtAuthPerLevel
		s.TargetKinds = TargetKindsGatewayXBackend
		return s
	},
	// PR #220 (a level no rule selects the caller at is passed; per level).
	PresetPR220: func() Semantics {
		s := Reference()
		s.Name = PresetPR220
		s.AllowCombine = CombinePR220
		s.ExtAuthPlacement = ExtAuthPerLevel
		return s
	},
	// Open upstream pull request #293, both halves: an explicit methods: [] denies
	// everything instead of allowing all, and each Allow rule is keyed
	// {namespace}/{policy}/{rule} in the merged RBAC map instead of by its name
	// (c7e4194 pkg/translator/accesspolicy.go:183), so same-named rules of different
	// policies are kept side by side; the rest is the reference.
	PresetPR293: func() Semantics {
		s := Reference()
		s.Name = PresetPR293
		s.EmptyMethods = EmptyMethodsNone
		s.RuleCollision = CollisionKeepBoth
		return s
	},
	// The methods half of #293 alone.
	PresetPR293Methods: func() Semantics {
		s := Reference()
		s.Name = PresetPR293Methods
		s.EmptyMethods = EmptyMethodsNone
		return s
	},
	// The rule-key half of #293 alone.
	PresetPR293Keys: func() Semantics {
		s := Reference()
		s.Name = PresetPR293Keys
		s.RuleCollision = CollisionKeepBoth
		return s
	},
	// Open upstream pull request #236: a policy with a CEL rule that does not compile
	// stays accepted, the bad rule is skipped and the rest enforced. Admission is
	// recomputed: a status the current controller recorded would be rewritten.
	PresetPR236: func() Semantics {
		s := Reference()
		s.Name = PresetPR236
		s.InvalidCEL = InvalidCELSkipsRule
		s.Admission = AdmissionRecompute
		return s
	},
	// The legacy translator at b48e458 (docs/semantics.md#v0alpha0): one RBAC filter per policy (AND), built-in
	// allowances, empty authorization = NOT(tools/call), authorizers after the RBAC filters,
	// lister order, no ExternalAuth seniority at admission, v0alpha0 objects enforced, and
	// the v0alpha0 CRD's restriction of targetRefs to Gateway and XBackend (docs/semantics.md#target-kinds).
	PresetLegacy: func() Semantics {
		s := Reference()
		s.Name = PresetLegacy
		s.AllowCombine = CombineAllPolicies
		s.ExtAuthPlacement = ExtAuthLast
		s.PolicyOrder = OrderName
		s.BaseMethods = BaseMethodsBuiltin
		s.EmptyAuthorization = EmptyAuthDenyTools
		s.ExtAuthSeniority = false
		s.V0alpha0 = V0alpha0Legacy
		s.TargetKinds = TargetKindsGatewayXBackend
		return s
	},
}

// PresetNames lists the presets, reference first.
func PresetNames() []string {
	return []string{PresetReference, PresetProposal, PresetPR220, PresetLegacy, PresetPR293, PresetPR293Methods, PresetPR293Keys, PresetPR236}
}

// Preset returns a named preset. "pr220" and "legacy" are accepted as aliases.
func Preset(name string) (Semantics, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "default":
		name = PresetReference
	case "pr220", "pr-220-draft":
		name = PresetPR220
	case "legacy", "v0alpha0":
		name = PresetLegacy
	case "0059":
		name = PresetProposal
	}
	f, ok := presets[name]
	if !ok {
		return Semantics{}, fmt.Errorf("unknown semantics %q (use one of %s)", name, strings.Join(PresetNames(), ", "))
	}
	return f(), nil
}

// ParsePresets parses a --semantics value: a comma-separated list of presets, or "all".
func ParsePresets(value string) ([]Semantics, error) {
	if strings.TrimSpace(value) == "" {
		return []Semantics{Reference()}, nil
	}
	if strings.TrimSpace(value) == "all" {
		value = strings.Join(PresetNames(), ",")
	}
	var out []Semantics
	seen := map[string]bool{}
	for _, n := range strings.Split(value, ",") {
		s, err := Preset(n)
		if err != nil {
			return nil, err
		}
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	return out, nil
}

// FieldDiff is one field on which two Semantics differ.
type FieldDiff struct {
	Field string `json:"field"`
	A     string `json:"a"`
	B     string `json:"b"`
}

// Diff lists the fields (by JSON name) on which a and b differ, the name excluded.
func Diff(a, b Semantics) []FieldDiff {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	var out []FieldDiff
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Name == "Name" {
			continue
		}
		x, y := fmt.Sprint(va.Field(i).Interface()), fmt.Sprint(vb.Field(i).Interface())
		if x != y {
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			out = append(out, FieldDiff{Field: name, A: x, B: y})
		}
	}
	return out
}
