package authpolicy

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/agpol/agpol/internal/topology"
)

// Enforcement labels.
const (
	Enforced          = "Enforced"
	PartiallyEnforced = "PartiallyEnforced"
	Overridden        = "Overridden"
	NotInPath         = "NotInPath"
	TargetNotFound    = "TargetNotFound"
	Invalid           = "Invalid"
	// Unprogrammed: the policy is effective only on Gateways Kuadrant never programs (or
	// on one of them as well), so kuadrant-operator waits for them to sync and reports
	// it not enforced.
	Unprogrammed = "NotProgrammed"
)

// Condition is the status condition kuadrant-operator would write for the label.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// PolicyResult is the computed status of one AuthPolicy, over every path of the input.
type PolicyResult struct {
	Policy *Policy `json:"-"`
	// Ref is "ns/name".
	Ref string `json:"policy"`
	// Enforcement is Enforced, PartiallyEnforced, Overridden, NotInPath, NotProgrammed,
	// TargetNotFound or Invalid.
	Enforcement string `json:"enforcement"`
	// OverriddenBy are the policies that displaced it, for an Overridden policy (the issue's
	// contract: "Overridden with the policies that displaced it"; kuadrant-operator names them
	// only in the Overridden condition). A partially enforced policy lists its displacers per
	// rule in OverriddenRules instead, and has an empty OverriddenBy.
	OverriddenBy []string `json:"overriddenBy"`
	// Condition is the condition kuadrant-operator would set (Enforced, or Accepted when not accepted).
	Condition Condition `json:"condition"`
	// Reasons explain Invalid, TargetNotFound and NotProgrammed, as data; render writes
	// them (render.AuthPolicyReasonText).
	Reasons []Reason `json:"-"`
	// OverriddenRules maps each displaced rule key to the policies that displaced it.
	OverriddenRules map[string][]string `json:"overriddenRules,omitempty"`
	// EffectiveOn and DisplacedOn list the IDs of the full paths where at least one of its
	// rules is effective / was displaced.
	EffectiveOn []string `json:"-"`
	DisplacedOn []string `json:"-"`
}

// PathResult is the effective policy of one path or path prefix.
type PathResult struct {
	Path      Path
	Effective *Effective
	// Unprogrammed says why Kuadrant never programs the path's Gateway
	// (ReasonUnprogrammed): the effective policy is computed but no data plane runs it.
	// nil when it does.
	Unprogrammed *Reason
}

// Result is the effective AuthPolicy of every full path and the status of every policy.
type Result struct {
	Topology *Topology
	// Env is what Authorino's rules read besides the request (Secrets, RBAC, Kuadrant's namespace).
	Env *Env
	// Policies, every AuthPolicy of the input in ns/name order.
	Policies []*PolicyResult
	// Paths are the full paths (Gateway → listener → route → rule) in topology order.
	Paths []*PathResult

	byRef  map[string]*PolicyResult
	byNode map[string][]*Policy
	// wasm holds each full path's wasm action sets and their ties (path ID →
	// *pathWasm), computed on first use (TiedPaths).
	wasm sync.Map
}

// Compute builds the topology of g's snapshot, models and validates every AuthPolicy,
// folds the effective policy of every full path and derives each policy's enforcement.
// It reads each Gateway's data plane from g.
func Compute(g *topology.Graph) *Result {
	s := g.Snapshot()
	r := &Result{Topology: BuildTopology(s, g.DataPlanes()), Env: NewEnv(s), byRef: map[string]*PolicyResult{}, byNode: map[string][]*Policy{}}
	for _, ap := range s.AuthPolicies {
		if ap.IsV1beta2() {
			continue // kuadrant.io/v1beta2 has semantics of its own (ComputeV1beta2)
		}
		p := newPolicy(s, ap)
		if _, dup := r.byRef[p.Ref]; dup {
			continue
		}
		p.Level = levelOf(p.Target)
		if len(p.Invalid) == 0 {
			node, why := r.Topology.resolve(p.Target)
			if node == "" {
				p.TargetNotFound = fmt.Sprintf("AuthPolicy target %s was not found", p.Target.Name)
				pr := &PolicyResult{Policy: p, Ref: p.Ref, Reasons: []Reason{why}}
				r.add(pr)
				continue
			}
			p.node = node
			r.byNode[node] = append(r.byNode[node], p)
		}
		var invalid []Reason
		for _, m := range p.Invalid {
			invalid = append(invalid, Reason{Code: ReasonInvalid, Message: m})
		}
		r.add(&PolicyResult{Policy: p, Ref: p.Ref, Reasons: invalid})
	}
	sort.Slice(r.Policies, func(i, j int) bool { return r.Policies[i].Ref < r.Policies[j].Ref })
	for _, ps := range r.byNode {
		OrderPolicies(ps)
	}
	for _, path := range r.Topology.FullPaths() {
		r.Paths = append(r.Paths, &PathResult{Path: path, Effective: Fold(r.PoliciesInPath(path)),
			Unprogrammed: r.Topology.GatewayUnprogrammed(path.Gateway)})
	}
	r.status()
	return r
}

func (r *Result) add(pr *PolicyResult) {
	r.byRef[pr.Ref] = pr
	r.Policies = append(r.Policies, pr)
}

// Policy returns the result of a policy by "ns/name".
func (r *Result) Policy(ref string) *PolicyResult { return r.byRef[ref] }

// PoliciesInPath returns the usable policies attached along a path or prefix, least
// specific first; policies on one node oldest first (then ns/name).
func (r *Result) PoliciesInPath(p Path) []*Policy {
	var out []*Policy
	for _, n := range p.nodes() {
		out = append(out, r.byNode[n]...)
	}
	return out
}

// ForPrefix folds the policies attached along a path prefix: gateway ("ns/name"),
// then optionally listener, route ("ns/name") and rule. Empty trailing arguments end the prefix.
func (r *Result) ForPrefix(gateway, listener, route, rule string) (*PathResult, error) {
	p := Path{Gateway: gateway, Listener: listener, Route: route, Rule: rule}
	g := r.Topology.Gateway(gateway)
	if g == nil {
		return nil, fmt.Errorf("gateway %s: %w", gateway, ErrNotFound)
	}
	p.GatewayClass = g.Class
	if listener == "" && (route != "" || rule != "") {
		return nil, fmt.Errorf("a route prefix needs a listener")
	}
	if listener != "" && !contains(g.Listeners, listener) {
		return nil, fmt.Errorf("gateway %s has no listener %q (listeners: %s): %w", gateway, listener, strings.Join(g.Listeners, ", "), ErrNotFound)
	}
	if route != "" {
		rn := r.Topology.Route(route)
		if rn == nil {
			return nil, fmt.Errorf("httproute %s: %w", route, ErrNotFound)
		}
		if !contains(parentsOf(rn), gateway+"#"+listener) {
			return nil, fmt.Errorf("httproute %s is not attached to listener %s of gateway %s: %w", route, listener, gateway, ErrNotFound)
		}
		if rule != "" && !contains(rn.Rules, rule) {
			return nil, fmt.Errorf("httproute %s has no rule %q (rules: %s): %w", route, rule, strings.Join(rn.Rules, ", "), ErrNotFound)
		}
	} else if rule != "" {
		return nil, fmt.Errorf("a rule prefix needs a route")
	}
	return &PathResult{Path: p, Effective: Fold(r.PoliciesInPath(p)), Unprogrammed: g.Unprogrammed}, nil
}

// ErrNotFound is wrapped by Query and ForPrefix when a named object or section does not exist.
var ErrNotFound = errors.New("not found")

// Query selects the path prefixes ending at a target.
type Query struct {
	// Kind is "Gateway" or "HTTPRoute".
	Kind      string
	Namespace string
	Name      string
	// Section is a listener name (Gateway) or a rule name (HTTPRoute).
	Section string
	// Gateway ("ns/name") and Listener narrow an HTTPRoute target to some parents.
	Gateway  string
	Listener string
}

// Query returns the effective policy of each prefix ending at the target: Gateway →
// [gateway]; Gateway#listener → [gateway, listener]; HTTPRoute → [gateway, listener, route]
// for each listener it attaches to; HTTPRoute#rule → [gateway, listener, route, rule].
func (r *Result) Query(q Query) ([]*PathResult, error) {
	ref := nsName(q.Namespace, q.Name)
	switch q.Kind {
	case "Gateway":
		if q.Gateway != "" && q.Gateway != ref {
			return nil, fmt.Errorf("--gateway %s does not match the target gateway %s", q.Gateway, ref)
		}
		if q.Listener != "" && q.Section != "" && q.Listener != q.Section {
			return nil, fmt.Errorf("--listener %s does not match the target listener %s", q.Listener, q.Section)
		}
		l := q.Section
		if l == "" {
			l = q.Listener
		}
		pr, err := r.ForPrefix(ref, l, "", "")
		if err != nil {
			return nil, err
		}
		return []*PathResult{pr}, nil
	case "HTTPRoute":
		rn := r.Topology.Route(ref)
		if rn == nil {
			return nil, fmt.Errorf("httproute %s: %w", ref, ErrNotFound)
		}
		if q.Section != "" && !contains(rn.Rules, q.Section) {
			return nil, fmt.Errorf("httproute %s has no rule %q (rules: %s): %w", ref, q.Section, strings.Join(rn.Rules, ", "), ErrNotFound)
		}
		if q.Gateway != "" && r.Topology.Gateway(q.Gateway) == nil {
			return nil, fmt.Errorf("gateway %s: %w", q.Gateway, ErrNotFound)
		}
		out := []*PathResult{}
		for _, p := range rn.Parents {
			if (q.Gateway != "" && p.Gateway != q.Gateway) || (q.Listener != "" && p.Listener != q.Listener) {
				continue
			}
			pr, err := r.ForPrefix(p.Gateway, p.Listener, ref, q.Section)
			if err != nil {
				return nil, err
			}
			out = append(out, pr)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported target kind %q: use Gateway or HTTPRoute", q.Kind)
}

func parentsOf(rn *RouteNode) []string {
	out := make([]string, len(rn.Parents))
	for i, p := range rn.Parents {
		out[i] = p.Gateway + "#" + p.Listener
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// status derives each policy's enforcement the way kuadrant-operator's
// AuthPolicyStatusUpdater.enforcedCondition does, over every full path (route and
// listener readiness, CEL validation and component sync are not known offline).
func (r *Result) status() {
	for _, pr := range r.Policies {
		p := pr.Policy
		switch {
		case len(p.Invalid) > 0:
			pr.Enforcement = Invalid
			pr.Condition = Condition{Type: "Accepted", Status: "False", Reason: "Invalid",
				Message: "AuthPolicy is invalid (the API server would reject it): " + strings.Join(p.Invalid, "; ")}
			continue
		case p.TargetNotFound != "":
			pr.Enforcement = TargetNotFound
			pr.Condition = Condition{Type: "Accepted", Status: "False", Reason: "TargetNotFound", Message: p.TargetNotFound}
			continue
		}
		overridden := map[string][]string{}
		affected := false
		var unsynced []string // the Gateways Kuadrant never programs among those affected
		var unsyncedWhy []Reason
		markAffected := func(path *PathResult) {
			affected = true
			pr.EffectiveOn = append(pr.EffectiveOn, path.Path.ID())
			if path.Unprogrammed != nil && !contains(unsynced, path.Path.Gateway) {
				unsynced = append(unsynced, path.Path.Gateway)
				unsyncedWhy = append(unsyncedWhy, *path.Unprogrammed)
			}
		}
		for _, path := range r.Paths {
			if !containsPolicy(path.Effective.Policies, p) {
				continue
			}
			e := path.Effective
			if len(e.Rules) == 0 {
				markAffected(path)
				continue
			}
			pathAffected, pathDisplaced := false, false
			for _, k := range p.Keys() {
				cur, ok := e.Rules[k]
				if ok && cur.Source == p.Ref {
					pathAffected = true
					continue
				}
				by := e.Sources()
				if ok {
					by = []string{cur.Source}
				}
				overridden[k] = appendUnique(overridden[k], by...)
				pathDisplaced = true
			}
			if pathAffected {
				markAffected(path)
			}
			if pathDisplaced {
				pr.DisplacedOn = append(pr.DisplacedOn, path.Path.ID())
			}
		}
		var by []string
		for _, ps := range overridden {
			for _, x := range ps {
				if x != p.Ref {
					by = appendUnique(by, x)
				}
			}
		}
		sort.Strings(by)
		if by == nil {
			by = []string{}
		}
		if len(overridden) > 0 {
			for k := range overridden {
				sort.Strings(overridden[k])
			}
			pr.OverriddenRules = overridden
		}
		switch {
		case !affected && len(overridden) == 0:
			pr.Enforcement = NotInPath
			pr.Condition = Condition{Type: "Enforced", Status: "False", Reason: "Unknown",
				Message: "AuthPolicy is not in the path to any existing routes"}
		case !affected:
			pr.Enforcement = Overridden
			pr.OverriddenBy = by
			pr.Condition = Condition{Type: "Enforced", Status: "False", Reason: "Overridden",
				Message: "AuthPolicy is overridden by [" + strings.Join(by, " ") + "]"}
		case len(unsynced) > 0:
			// enforcedCondition lists such a Gateway among the components to sync, which
			// wins over a partial override.
			components := make([]string, len(unsynced))
			for i, g := range unsynced {
				components[i] = "Gateway (" + g + ")"
			}
			pr.Enforcement = Unprogrammed
			pr.Reasons = unsyncedWhy
			pr.Condition = Condition{Type: "Enforced", Status: "False", Reason: "Unknown",
				Message: "AuthPolicy waiting for the following components to sync: [" + strings.Join(components, " ") + "]"}
		case len(overridden) > 0:
			pr.Enforcement = PartiallyEnforced
			pr.Condition = Condition{Type: "Enforced", Status: "True", Reason: "Enforced",
				Message: "AuthPolicy has been partially enforced"}
		default:
			pr.Enforcement = Enforced
			pr.Condition = Condition{Type: "Enforced", Status: "True", Reason: "Enforced",
				Message: "AuthPolicy has been successfully enforced"}
		}
	}
	for _, pr := range r.Policies {
		if pr.OverriddenBy == nil {
			pr.OverriddenBy = []string{}
		}
	}
}

func containsPolicy(ps []*Policy, p *Policy) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

func appendUnique(list []string, items ...string) []string {
	for _, it := range items {
		if !contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}

// Displacers are the policies that displaced any of its rules on some path, sorted: the
// same as OverriddenBy for an Overridden policy, and the per-rule displacers of a partially
// enforced one.
func (pr *PolicyResult) Displacers() []string {
	var by []string
	for _, ps := range pr.OverriddenRules {
		for _, x := range ps {
			if x != pr.Ref {
				by = appendUnique(by, x)
			}
		}
	}
	sort.Strings(by)
	return by
}
