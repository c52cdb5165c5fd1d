package effective

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
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

// The legacy translator's built-in allow policies (§16.2, §9.5).
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
	// ToolsCallOnly makes a CEL permission require mcp method tools/call (D19).
	ToolsCallOnly bool `json:"toolsCallOnly,omitempty"`
	// L7 is set when the L7 fields are enforced and the rule has some.
	L7 *L7Match `json:"l7,omitempty"`
	// IgnoredL7 lists the L7 fields present but ignored under the semantics.
	IgnoredL7 []string `json:"ignoredL7,omitempty"`
	// Note explains the permission (e.g. "authorization omitted").
	Note string `json:"note,omitempty"`
}

// L7Match holds the authorization L7 matchers (D8 enforced).
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
	// config (§17 D12), so the authorizer is never called.
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
	// NotEnforced says why no XAccessPolicy applies on this gateway at all: a data plane
	// other than kube-agentic-networking serves it (topology.ClassifyGateways). Its levels
	// are then empty. "" on the reference data plane.
	NotEnforced string `json:"notEnforced,omitempty"`
	levels      []*Level
	steps       []ChainStep
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

// Engine compiles and caches chains for one snapshot and semantics. It is safe for
// concurrent use once built.
type Engine struct {
	Snapshot    *snapshot.Snapshot
	Semantics   Semantics
	TrustDomain string
	Admission   map[*snapshot.XAccessPolicy]Admission

	// extFilters: per gateway, the ExternalAuth config hashes that get an ext_authz filter.
	extFilters map[topology.Ref]map[string]bool
	// byTarget lists the policies naming each target (group, kind, the policy's namespace,
	// name), in snapshot order, each once: buildLevel reads one entry instead of scanning
	// every policy for every level.
	byTarget map[topology.Ref][]*snapshot.XAccessPolicy

	// planes is the data plane of each gateway (topology.ClassifyGateways).
	planes map[topology.Ref]topology.GatewayDataPlane

	mu     sync.Mutex
	levels map[levelKey]*Level
	chains map[chainKey]*Chain
}

type levelKey struct {
	target   topology.Ref
	listener string
}

type chainKey struct {
	gateway  topology.Ref
	listener string
	backend  topology.Ref
}

// NewEngine computes admission and prepares chain compilation.
func NewEngine(s *snapshot.Snapshot, sem Semantics, trustDomain string) *Engine {
	return newEngine(s, sem, trustDomain, topology.ClassifyGateways(s))
}

// NewEngineOn is NewEngine on the snapshot's graph g (topology.BuildGraph of s): the
// engines of several semantics read the data planes g classified once.
func NewEngineOn(g *topology.Graph, s *snapshot.Snapshot, sem Semantics, trustDomain string) *Engine {
	planes := make(map[*snapshot.Gateway]topology.GatewayDataPlane, len(s.Gateways))
	for _, gw := range s.Gateways {
		planes[gw] = g.DataPlane(gw)
	}
	return newEngine(s, sem, trustDomain, planes)
}

func newEngine(s *snapshot.Snapshot, sem Semantics, trustDomain string, planes map[*snapshot.Gateway]topology.GatewayDataPlane) *Engine {
	if trustDomain == "" {
		trustDomain = "cluster.local"
	}
	e := &Engine{Snapshot: s, Semantics: sem, TrustDomain: trustDomain, Admission: Admit(s, sem),
		levels: map[levelKey]*Level{}, chains: map[chainKey]*Chain{}, byTarget: indexByTarget(s)}
	e.planes = make(map[topology.Ref]topology.GatewayDataPlane, len(s.Gateways))
	for gw, p := range planes {
		e.planes[topology.GatewayRef(gw.Namespace, gw.Name)] = p
	}
	e.extFilters = map[topology.Ref]map[string]bool{}
	for _, g := range s.Gateways {
		ref := topology.GatewayRef(g.Namespace, g.Name)
		set := map[string]bool{}
		if l := e.level(ref, ""); l.ExtAuth != nil {
			set[l.ExtAuth.ExtAuthHash] = true
		}
		for _, xb := range e.exactGroupBackends(ref) {
			if l := e.level(xb, ""); l.ExtAuth != nil {
				set[l.ExtAuth.ExtAuthHash] = true
			}
		}
		e.extFilters[ref] = set
	}
	return e
}

// indexByTarget maps every target a policy names to the policies naming it, in snapshot
// order; a policy naming the same target twice (e.g. with two sectionNames) is listed once.
func indexByTarget(s *snapshot.Snapshot) map[topology.Ref][]*snapshot.XAccessPolicy {
	out := make(map[topology.Ref][]*snapshot.XAccessPolicy, len(s.XAccessPolicies))
	for _, p := range s.XAccessPolicies {
		for j, tr := range p.Spec.TargetRefs {
			ref := topology.Ref{Group: string(tr.Group), Kind: string(tr.Kind), Namespace: p.Namespace, Name: string(tr.Name)}
			dup := false
			for _, prev := range p.Spec.TargetRefs[:j] {
				if prev.Group == tr.Group && prev.Kind == tr.Kind && prev.Name == tr.Name {
					dup = true
					break
				}
			}
			if !dup {
				out[ref] = append(out[ref], p)
			}
		}
	}
	return out
}

// exactGroupBackends lists the XBackends referenced, with group exactly
// agentic.networking.x-k8s.io, by HTTPRoutes whose parentRefs name the gateway.
func (e *Engine) exactGroupBackends(gw topology.Ref) []topology.Ref {
	var out []topology.Ref
	seen := map[topology.Ref]bool{}
	for _, r := range e.Snapshot.HTTPRoutes {
		attached := false
		for _, p := range r.Spec.ParentRefs {
			if ref, ok := topology.ParentGateway(p, r.Namespace); ok && ref == gw {
				attached = true
			}
		}
		if !attached {
			continue
		}
		for _, rule := range r.Spec.Rules {
			for _, b := range rule.BackendRefs {
				if b.Kind == nil || string(*b.Kind) != agentic.KindXBackend || b.Group == nil || string(*b.Group) != agentic.GroupName {
					continue
				}
				ns := r.Namespace
				if b.Namespace != nil {
					ns = string(*b.Namespace)
				}
				ref := topology.XBackendRef(ns, string(b.Name))
				if !seen[ref] {
					seen[ref] = true
					out = append(out, ref)
				}
			}
		}
	}
	return out
}

// Chain returns the compiled chain for a gateway, listener (may be empty) and XBackend
// (nil for a Service backend or no route). Chains are cached.
func (e *Engine) Chain(gw topology.Ref, listener string, backend *topology.Ref) *Chain {
	if e.Semantics.SectionName != Enforced {
		listener = ""
	}
	k := chainKey{gateway: gw, listener: listener}
	if backend != nil {
		k.backend = *backend
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.chains[k]; ok {
		return c
	}
	if p, ok := e.planes[gw]; ok && !p.Agentic() {
		c := &Chain{Semantics: e.Semantics, Gateway: &Level{Name: LevelGateway, Target: gw},
			NotEnforced: fmt.Sprintf("XAccessPolicies are not enforced on Gateway %s/%s: the %s data plane serves it (%s)", gw.Namespace, gw.Name, p.DataPlane, p.Why)}
		c.levels = c.Levels()
		c.steps = chainSteps(&c.Semantics, len(c.levels))
		e.chains[k] = c
		return c
	}
	c := &Chain{Semantics: e.Semantics, Gateway: e.levelLocked(gw, listener)}
	if backend != nil {
		be := *e.levelLocked(*backend, listener) // copy: the filter flag depends on the gateway
		if be.ExtAuth != nil {
			switch {
			case e.Semantics.ExtAuthBackendRefGroup == ExtAuthAlways:
				be.ExtAuthFilter = true
			case e.extFilters[gw][be.ExtAuth.ExtAuthHash]:
				be.ExtAuthFilter = true
			default:
				be.ExtAuthFilter = false
				be.ExtAuthNote = fmt.Sprintf("no ext_authz filter on gateway %s/%s for this config: no HTTPRoute of the gateway references XBackend %s/%s with group %s",
					gw.Namespace, gw.Name, backend.Namespace, backend.Name, agentic.GroupName)
			}
			if c.Gateway.ExtAuth != nil && c.Gateway.ExtAuth.ExtAuthHash == be.ExtAuth.ExtAuthHash {
				c.SharedExtAuth = true
			}
		}
		c.Backend = &be
	}
	c.levels = c.Levels()
	c.steps = chainSteps(&c.Semantics, len(c.levels))
	e.chains[k] = c
	return c
}

func (e *Engine) level(target topology.Ref, listener string) *Level {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.levelLocked(target, listener)
}

func (e *Engine) levelLocked(target topology.Ref, listener string) *Level {
	k := levelKey{target, listener}
	if l, ok := e.levels[k]; ok {
		return l
	}
	l := e.buildLevel(target, listener)
	e.levels[k] = l
	return l
}

func (e *Engine) buildLevel(target topology.Ref, listener string) *Level {
	sem := e.Semantics
	name := LevelGateway
	if target.Kind == agentic.KindXBackend {
		name = LevelBackend
	}
	l := &Level{Name: name, Target: target, ExtAuthFilter: true, combine: sem.AllowCombine}
	var cands []*snapshot.XAccessPolicy
	for _, p := range e.byTarget[target] {
		var hit *gwapiv1.LocalPolicyTargetReferenceWithSectionName
		for i, tr := range p.Spec.TargetRefs {
			if string(tr.Group) == target.Group && string(tr.Kind) == target.Kind && string(tr.Name) == target.Name {
				hit = &p.Spec.TargetRefs[i]
				break
			}
		}
		if hit == nil {
			continue
		}
		if a := e.Admission[p]; !a.Effective.Accepted {
			l.Ignored = append(l.Ignored, Ignored{p, p.Namespace + "/" + p.Name,
				fmt.Sprintf("not accepted (%s, %s): %s", a.Effective.Reason, a.From, a.Effective.Message), a.Effective.Reason})
			continue
		}
		if sem.SectionName == Enforced && hit.SectionName != nil {
			sn := string(*hit.SectionName)
			switch {
			case target.Kind != "Gateway":
				l.Ignored = append(l.Ignored, Ignored{p, p.Namespace + "/" + p.Name, fmt.Sprintf("sectionName %q: %s has no sections, the policy does not attach", sn, target.Kind), ReasonSectionNotFound})
				continue
			case !e.hasListener(target, sn):
				l.Ignored = append(l.Ignored, Ignored{p, p.Namespace + "/" + p.Name, fmt.Sprintf("sectionName %q names no listener of the gateway, the policy does not attach", sn), ReasonSectionNotFound})
				continue
			case listener != "" && listener != sn:
				l.Ignored = append(l.Ignored, Ignored{p, p.Namespace + "/" + p.Name, fmt.Sprintf("sectionName %q: applies only to listener %s", sn, sn), ReasonOtherListener})
				continue
			}
		}
		if p.Legacy != nil && sem.V0alpha0 != V0alpha0Legacy {
			l.Ignored = append(l.Ignored, Ignored{p, p.Namespace + "/" + p.Name, "v0alpha0 object: stored without spec.action, never enforced", ReasonNoAction})
			continue
		}
		cands = append(cands, p)
	}
	if sem.PolicyOrder == OrderName {
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].Name < cands[j].Name })
	} else {
		sort.SliceStable(cands, func(i, j int) bool {
			ai, aj := cands[i].Spec.Action == v1alpha1.ActionTypeExternalAuth, cands[j].Spec.Action == v1alpha1.ActionTypeExternalAuth
			if ai != aj {
				return ai
			}
			return MoreSenior(cands[i], cands[j])
		})
	}
	for _, p := range cands {
		switch {
		case p.Legacy != nil:
			cp := e.compileLegacy(p)
			l.Allow = append(l.Allow, cp)
			for _, r := range cp.All {
				if r.ExtAuth && r.Skipped == "" {
					l.LegacyExt = append(l.LegacyExt, r)
				}
			}
		case p.Spec.Action == v1alpha1.ActionTypeExternalAuth:
			if l.ExtAuth != nil {
				l.Ignored = append(l.Ignored, Ignored{p, p.Namespace + "/" + p.Name, "not the first ExternalAuth policy on the target (only " + l.ExtAuth.ID() + " is used)", ReasonExtAuthNotFirst})
				continue
			}
			l.ExtAuth = e.compile(p, false)
		case p.Spec.Action == v1alpha1.ActionTypeAllow:
			l.Allow = append(l.Allow, e.compile(p, sem.AllowCombine == CombineAllPolicies))
		default:
			l.Ignored = append(l.Ignored, Ignored{p, p.Namespace + "/" + p.Name, fmt.Sprintf("action %q is neither Allow nor ExternalAuth", p.Spec.Action), actionCode(p.Spec.Action)})
		}
	}
	if sem.AllowCombine != CombineAllPolicies {
		e.merge(l)
	}
	return l
}

func (e *Engine) hasListener(gw topology.Ref, name string) bool {
	for _, g := range e.Snapshot.Gateways {
		if g.Namespace == gw.Namespace && g.Name == gw.Name {
			for _, ls := range g.Spec.Listeners {
				if string(ls.Name) == name {
					return true
				}
			}
		}
	}
	return false
}

// merge builds the union rule map keyed by rule name (D4).
func (e *Engine) merge(l *Level) {
	byKey := map[string]*Rule{}
	var keys []string
	for _, p := range l.Allow {
		for _, r := range p.Rules {
			k := r.Name
			if e.Semantics.RuleCollision == CollisionKeepBoth {
				k = r.Name + "\x00" + p.ID()
			}
			if old, ok := byKey[k]; ok {
				l.Collisions = append(l.Collisions, Collision{Name: r.Name, Kept: r.ID(), Replaced: old.ID()})
			} else {
				keys = append(keys, k)
			}
			byKey[k] = r
		}
	}
	if e.Semantics.RuleCollision == CollisionKeepBoth {
		// Report same-named rules that are kept side by side.
		names := map[string][]string{}
		for _, k := range keys {
			names[byKey[k].Name] = append(names[byKey[k].Name], byKey[k].ID())
		}
		for n, ids := range names {
			if len(ids) > 1 {
				l.Collisions = append(l.Collisions, Collision{Name: n, Kept: strings.Join(ids, ",")})
			}
		}
		sort.Slice(l.Collisions, func(i, j int) bool { return l.Collisions[i].Name < l.Collisions[j].Name })
	}
	if len(keys) > 0 && e.Semantics.BaseMethods == BaseMethodsBuiltin {
		for _, b := range builtins(l.Allow[0]) {
			b.id = l.Allow[0].ID() + "#" + b.Name
			if _, ok := byKey[b.Name]; !ok {
				byKey[b.Name] = b
				keys = append(keys, b.Name)
			}
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		l.Merged = append(l.Merged, byKey[k])
	}
}

// builtins are the legacy translator's three allow policies, attributed to p.
func builtins(p *Policy) []*Rule {
	src := fixedSource(p.Source)
	return []*Rule{
		{Name: BuiltinInitialize, Policy: p, Index: -1, Builtin: true, Principal: Principal{Any: true},
			Permission: Permission{Methods: []MethodMatcher{{Name: "initialize"}, {Name: "notifications/initialized"}, {Name: "tools/list"}},
				Note: "built-in allowance"}, Source: src},
		{Name: BuiltinHTTPGet, Policy: p, Index: -1, Builtin: true, Principal: Principal{Any: true},
			Permission: Permission{HTTPMethods: []string{"GET"}, Note: "built-in allowance"}, Source: src},
		{Name: BuiltinSessionClose, Policy: p, Index: -1, Builtin: true, Principal: Principal{Any: true},
			Permission: Permission{SessionClose: true, Note: "built-in allowance"}, Source: src},
	}
}

func (e *Engine) newPolicy(p *snapshot.XAccessPolicy, action string) *Policy {
	return &Policy{Namespace: p.Namespace, Name: p.Name, Action: action, Obj: p, Source: p.Source,
		CreationStamp: p.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z")}
}

func (e *Engine) ruleSource(p *snapshot.XAccessPolicy, i int) RuleSource {
	return fieldSource(e.Snapshot, p.Source, ruleField(i))
}

// finish sorts the rules into RBAC map order and adds built-ins for the per-policy combination.
func (e *Engine) finish(cp *Policy, perPolicy bool) *Policy {
	for _, r := range cp.All {
		if r.Skipped == "" {
			cp.Rules = append(cp.Rules, r)
		}
	}
	cp.RuleLess = len(cp.All) == 0
	if perPolicy && e.Semantics.BaseMethods == BaseMethodsBuiltin && cp.Action != string(v1alpha1.ActionTypeExternalAuth) {
		cp.Rules = append(cp.Rules, builtins(cp)...)
	}
	sort.SliceStable(cp.Rules, func(i, j int) bool { return cp.Rules[i].Name < cp.Rules[j].Name })
	cp.id = cp.Namespace + "/" + cp.Name
	for _, r := range append(append([]*Rule(nil), cp.All...), cp.Rules...) {
		r.id = cp.id + "#" + r.Name
	}
	if cp.ExtAuth != nil {
		b, _ := json.Marshal(cp.ExtAuth)
		sum := sha256.Sum256(b)
		cp.ExtAuthHash = hex.EncodeToString(sum[:])
	}
	return cp
}

// Compile compiles one policy as a level would (per-policy rules, no built-ins), for
// describing a policy whatever its admission: a v0alpha0 object through the legacy
// compiler.
func (e *Engine) Compile(p *snapshot.XAccessPolicy) *Policy {
	if p.Legacy != nil {
		return e.compileLegacy(p)
	}
	return e.compile(p, false)
}

// compile compiles a v1alpha1 policy.
func (e *Engine) compile(p *snapshot.XAccessPolicy, perPolicy bool) *Policy {
	cp := e.newPolicy(p, string(p.Spec.Action))
	cp.ExtAuth = p.Spec.ExternalAuth
	for i := range p.Spec.Rules {
		r := &p.Spec.Rules[i]
		cr := &Rule{Name: r.Name, Policy: cp, Index: i, Source: e.ruleSource(p, i)}
		cr.Principal = e.principal(string(r.Source.Type), r.Source.SPIFFE != nil, spiffeOf(r.Source.SPIFFE), saOf(r.Source.ServiceAccount), p.Namespace)
		cr.Permission, cr.Skipped = e.permission(r.Authorization)
		cp.All = append(cp.All, cr)
	}
	return e.finish(cp, perPolicy)
}

func spiffeOf(s *v1alpha1.AuthorizationSourceSPIFFE) string {
	if s == nil {
		return ""
	}
	return string(*s)
}

func saOf(sa *v1alpha1.AuthorizationSourceServiceAccount) *[2]string {
	if sa == nil {
		return nil
	}
	return &[2]string{sa.Namespace, sa.Name}
}

// principal maps a rule source to the peer principal it requires (§9.1, D11).
func (e *Engine) principal(typ string, hasSPIFFE bool, spiffe string, sa *[2]string, policyNS string) Principal {
	switch {
	case typ == string(v1alpha1.AuthorizationSourceTypeSPIFFE) && hasSPIFFE:
		return Principal{Value: spiffe}
	case typ == string(v1alpha1.AuthorizationSourceTypeServiceAccount) && sa != nil:
		ns := sa[0]
		if ns == "" {
			ns = policyNS
		}
		return Principal{Value: SPIFFEID(e.TrustDomain, ns, sa[1])}
	case typ == "" && !hasSPIFFE && sa == nil:
		return Principal{Any: true, Omitted: true, Note: "source omitted: any caller"}
	}
	note := fmt.Sprintf("source type %q without its field", typ)
	if typ == "" {
		note = "source field without type"
	} else if (typ == "SPIFFE" && sa != nil) || (typ == "ServiceAccount" && hasSPIFFE) {
		note = fmt.Sprintf("source type %q with the other kind's field", typ)
	}
	if e.Semantics.SourceFailOpen == SourceNone {
		return Principal{None: true, Note: note + ": matches nobody"}
	}
	return Principal{Any: true, Note: note + ": matches any caller"}
}

// SPIFFEID is the identity of a ServiceAccount in a trust domain.
func SPIFFEID(trustDomain, ns, name string) string {
	return "spiffe://" + trustDomain + "/ns/" + ns + "/sa/" + name
}

func (e *Engine) emptyPermission(note string) Permission {
	if e.Semantics.EmptyAuthorization == EmptyAuthDenyTools {
		return Permission{NotToolsCall: true, Note: note + ": everything but tools/call"}
	}
	return Permission{Any: true, Note: note + ": any request"}
}

// permission compiles a v1alpha1 authorization (§9.2-9.4, D7, D8, D19).
func (e *Engine) permission(a *v1alpha1.AuthorizationRule) (Permission, string) {
	if a == nil {
		return e.emptyPermission("authorization omitted"), ""
	}
	var perm Permission
	switch a.Type {
	case v1alpha1.AuthorizationRuleTypeInline:
		for _, m := range a.MCP.Methods {
			mm := MethodMatcher{Name: string(m.Name)}
			switch m.Name {
			case "tools", "prompts", "resources":
				mm.Prefix = true
				mm.Name += "/"
			}
			for _, p := range m.Params {
				mm.Params = append(mm.Params, string(p))
			}
			perm.Methods = append(perm.Methods, mm)
		}
		perm.Base = a.MCP.MCPBaseProtocolMethodsOption == v1alpha1.MCPBaseProtocolMethodsOptionMatch
		switch {
		case len(perm.Methods) > 0 || perm.Base:
		case a.MCP.Methods != nil && e.Semantics.EmptyMethods == EmptyMethodsNone:
			perm = Permission{Note: "methods: [] lists no MCP method: matches nothing"}
		default:
			perm = e.emptyPermission("no MCP method listed")
		}
	case v1alpha1.AuthorizationRuleTypeCEL:
		if a.CEL == nil {
			perm = e.emptyPermission("CEL rule without expression")
			break
		}
		prg, err := CompileCEL(a.CEL.Expression)
		if err != nil {
			return perm, "CEL does not compile, the translator drops the rule: " + err.Error()
		}
		perm.CEL = &CELCondition{Expression: a.CEL.Expression, Program: prg}
		perm.ToolsCallOnly = e.Semantics.CELOnlyToolsCall
	default:
		perm = e.emptyPermission(fmt.Sprintf("authorization type %q", a.Type))
	}
	l7, fields := compileL7(a)
	if len(fields) > 0 {
		if e.Semantics.L7Fields == Enforced {
			perm.L7 = l7
		} else {
			perm.IgnoredL7 = fields
		}
	}
	return perm, ""
}

func compileL7(a *v1alpha1.AuthorizationRule) (*L7Match, []string) {
	var fields []string
	m := &L7Match{}
	for _, x := range a.Methods {
		m.Methods = append(m.Methods, string(x))
	}
	if len(a.Methods) > 0 {
		fields = append(fields, "methods")
	}
	for _, p := range a.Paths {
		pm := PathMatcher{Type: string(v1alpha1.PathMatchPathPrefix)}
		if p.Type != nil {
			pm.Type = string(*p.Type)
		}
		if p.Value != nil {
			pm.Value = *p.Value
		}
		if pm.Type == string(v1alpha1.PathMatchRegularExpression) {
			pm.Re, _ = regexp.Compile("^(?:" + pm.Value + ")$")
		}
		m.Paths = append(m.Paths, pm)
	}
	if len(a.Paths) > 0 {
		fields = append(fields, "paths")
	}
	for _, h := range a.Headers {
		hm := HeaderMatcher{Name: strings.ToLower(string(h.Name)), Type: string(v1alpha1.HeaderMatchExact), Value: h.Value}
		if h.Type != nil {
			hm.Type = string(*h.Type)
		}
		if hm.Type == string(v1alpha1.HeaderMatchRegularExpression) {
			hm.Re, _ = regexp.Compile("^(?:" + h.Value + ")$")
		}
		m.Headers = append(m.Headers, hm)
	}
	if len(a.Headers) > 0 {
		fields = append(fields, "headers")
	}
	for _, h := range a.Hosts {
		m.Hosts = append(m.Hosts, strings.ToLower(string(h)))
	}
	if len(a.Hosts) > 0 {
		fields = append(fields, "hosts")
	}
	for _, p := range a.Ports {
		m.Ports = append(m.Ports, int32(p))
	}
	if len(a.Ports) > 0 {
		fields = append(fields, "ports")
	}
	return m, fields
}

// compileLegacy compiles a v0alpha0 policy as the legacy translator did (§16.2).
func (e *Engine) compileLegacy(p *snapshot.XAccessPolicy) *Policy {
	cp := e.newPolicy(p, "")
	cp.Legacy = true
	for i := range p.Legacy.Spec.Rules {
		r := &p.Legacy.Spec.Rules[i]
		cr := &Rule{Name: r.Name, Policy: cp, Index: i, Source: e.ruleSource(p, i)}
		var sa *[2]string
		if r.Source.ServiceAccount != nil {
			sa = &[2]string{r.Source.ServiceAccount.Namespace, r.Source.ServiceAccount.Name}
		}
		sp := ""
		if r.Source.SPIFFE != nil {
			sp = string(*r.Source.SPIFFE)
		}
		cr.Principal = e.principal(string(r.Source.Type), r.Source.SPIFFE != nil, sp, sa, p.Namespace)
		a := r.Authorization
		switch {
		case a == nil:
			cr.Permission = e.emptyPermission("authorization omitted")
		case a.Type == v0alpha0.AuthorizationRuleTypeInlineTools && len(a.Tools) > 0:
			cr.Permission = Permission{Methods: []MethodMatcher{{Name: "tools/call", Params: append([]string(nil), a.Tools...)}}}
		case a.Type == v0alpha0.AuthorizationRuleTypeInlineTools:
			cr.Permission = e.emptyPermission("empty tool list")
		case a.Type == v0alpha0.AuthorizationRuleTypeExternalAuth:
			cr.Permission = Permission{Methods: []MethodMatcher{{Name: "tools/call"}}, Note: "ExternalAuth rule: tools/call, then the authorizer"}
			cr.ExtAuth, cr.ExtAuthConfig = true, a.ExternalAuth
		case a.Type == v0alpha0.AuthorizationRuleTypeCEL && a.CEL != nil:
			prg, err := CompileCEL(a.CEL.Expression)
			if err != nil {
				cr.Skipped = "CEL does not compile, the translator drops the rule: " + err.Error()
				break
			}
			cr.Permission = Permission{CEL: &CELCondition{Expression: a.CEL.Expression, Program: prg}, ToolsCallOnly: true}
		default:
			cr.Permission = e.emptyPermission(fmt.Sprintf("authorization type %q", a.Type))
		}
		cp.All = append(cp.All, cr)
	}
	return e.finish(cp, true)
}

// DataPlane returns the data plane that serves gateway gw; ok is false when gw is not
// in the snapshot.
func (e *Engine) DataPlane(gw topology.Ref) (p topology.GatewayDataPlane, ok bool) {
	p, ok = e.planes[gw]
	return p, ok
}
