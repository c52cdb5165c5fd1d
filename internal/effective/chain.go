package effective

import (
	"sort"
	"strings"
	"sync"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

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
		trustDomain = DefaultTrustDomain
	}
	e := &Engine{Snapshot: s, Semantics: sem, TrustDomain: trustDomain, Admission: Admit(s, sem),
		levels: map[levelKey]*Level{}, chains: map[chainKey]*Chain{}, byTarget: indexByTarget(s)}
	e.planes = make(map[topology.Ref]topology.GatewayDataPlane, len(s.Gateways))
	for gw, p := range planes {
		e.planes[topology.GatewayRef(gw.Namespace, gw.Name)] = p
	}
	e.extFilters = map[topology.Ref]map[string]bool{}
	return e
}

// extFilterLocked reports whether gateway gw has an ext_authz filter for the
// ExternalAuth config hash: its own gateway level's, or that of an XBackend one of its
// HTTPRoutes references with group exactly agentic.networking.x-k8s.io. Computed for a
// gateway on the first chain that asks (a command describing one gateway compiles no
// other gateway's levels); e.mu is held.
func (e *Engine) extFilterLocked(gw topology.Ref, hash string) bool {
	set, ok := e.extFilters[gw]
	if !ok {
		set = map[string]bool{}
		if _, known := e.planes[gw]; known { // a gateway of the snapshot
			if l := e.levelLocked(gw, ""); l.ExtAuth != nil {
				set[l.ExtAuth.ExtAuthHash] = true
			}
			for _, xb := range e.exactGroupBackends(gw) {
				if l := e.levelLocked(xb, ""); l.ExtAuth != nil {
					set[l.ExtAuth.ExtAuthHash] = true
				}
			}
		}
		e.extFilters[gw] = set
	}
	return set[hash]
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
			OtherDataPlane: &OtherDataPlane{Gateway: gw, DataPlane: p}}
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
			case e.extFilterLocked(gw, be.ExtAuth.ExtAuthHash):
				be.ExtAuthFilter = true
			default:
				be.ExtAuthFilter = false
				be.NoFilter = &NoExtAuthFilter{Gateway: gw, Backend: *backend}
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
			l.Ignored = append(l.Ignored, Ignored{Policy: p, ID: p.Namespace + "/" + p.Name, Code: a.Effective.Reason,
				Why: IgnoredNotAccepted, From: a.From, Message: a.Effective.Message})
			continue
		}
		if sem.SectionName == Enforced && hit.SectionName != nil {
			sn := string(*hit.SectionName)
			ig := Ignored{Policy: p, ID: p.Namespace + "/" + p.Name, Code: ReasonSectionNotFound, SectionName: sn, TargetKind: target.Kind}
			switch {
			case target.Kind != "Gateway":
				ig.Why = IgnoredNoSections
			case !e.hasListener(target, sn):
				ig.Why = IgnoredNoListener
			case listener != "" && listener != sn:
				ig.Why, ig.Code = IgnoredOtherListener, ReasonOtherListener
			}
			if ig.Why != "" {
				l.Ignored = append(l.Ignored, ig)
				continue
			}
		}
		if p.Legacy != nil && sem.V0alpha0 != V0alpha0Legacy {
			l.Ignored = append(l.Ignored, Ignored{Policy: p, ID: p.Namespace + "/" + p.Name, Code: ReasonNoAction, Why: IgnoredLegacyNoAction})
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
				if r.ExtAuth && r.CELError == "" {
					l.LegacyExt = append(l.LegacyExt, r)
				}
			}
		case p.Spec.Action == v1alpha1.ActionTypeExternalAuth:
			if l.ExtAuth != nil {
				l.Ignored = append(l.Ignored, Ignored{Policy: p, ID: p.Namespace + "/" + p.Name, Code: ReasonExtAuthNotFirst,
					Why: IgnoredExtAuthNotFirst, UsedExtAuth: l.ExtAuth.ID()})
				continue
			}
			l.ExtAuth = e.compile(p, false)
		case p.Spec.Action == v1alpha1.ActionTypeAllow:
			l.Allow = append(l.Allow, e.compile(p, sem.AllowCombine == CombineAllPolicies))
		default:
			l.Ignored = append(l.Ignored, Ignored{Policy: p, ID: p.Namespace + "/" + p.Name, Code: actionCode(p.Spec.Action),
				Why: IgnoredUnknownAction, Action: string(p.Spec.Action)})
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

// merge builds the union rule map keyed by rule name (docs/semantics.md#rule-name-collision).
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

// DataPlane returns the data plane that serves gateway gw; ok is false when gw is not
// in the snapshot.
func (e *Engine) DataPlane(gw topology.Ref) (p topology.GatewayDataPlane, ok bool) {
	p, ok = e.planes[gw]
	return p, ok
}
