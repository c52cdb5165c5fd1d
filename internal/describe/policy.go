package describe

import (
	"slices"
	"sort"
	"strings"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Enforcement values of a described XAccessPolicy.
const (
	Enforced          = "Enforced"
	PartiallyEnforced = "PartiallyEnforced"
	NotEnforced       = "NotEnforced"
)

// AccessPolicyView is the view of one XAccessPolicy.
type AccessPolicyView struct {
	Policy
	// Enforcement is Enforced (on every path through its targets), PartiallyEnforced or
	// NotEnforced.
	Enforcement string `json:"enforcement"`
	// Targets are its targetRefs, in spec order.
	Targets []PolicyTarget `json:"targets"`
	// Rules are its rules in spec order (a v0alpha0 object's as the legacy translator
	// reads them).
	Rules []*effective.Rule `json:"rules"`
	// Shadowing says which of its rules another policy replaces, or which it replaces,
	// where a level merges rules by name; Shadows are its sentences for -o json, written
	// by render (render.ShadowText) in its copy.
	Shadows   []string `json:"shadows,omitempty"`
	Shadowing []Shadow `json:"-"`
}

// Shadow is a rule of the described policy and another policy's of the same name, one
// replacing the other on a level that merges rules by name.
type Shadow struct {
	// Rule is the rule name, Other the other policy's rule (NS/POLICY#RULE) and On the
	// level's target ("ns/name").
	Rule, Other, On string
	// Replaces is true when the described policy's rule replaces Other, false when
	// Other replaces it.
	Replaces bool
}

// PolicyTarget is one targetRef of a described XAccessPolicy.
type PolicyTarget struct {
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName,omitempty"`
	Found       bool   `json:"found"`
	// PoliciesOnTarget counts the XAccessPolicies naming the target, this one
	// included (the controller admits effective.MaxPoliciesPerTarget).
	PoliciesOnTarget int `json:"policiesOnTarget"`
	// DataPlane serves a Gateway target.
	DataPlane *topology.GatewayDataPlane `json:"dataPlane,omitempty"`
	// Why says why the policy applies on no path of this target, nil when it applies on
	// some; NotEnforced is its sentence for -o json, written by render
	// (render.NotRunText) in its copy.
	NotEnforced string  `json:"notEnforced,omitempty"`
	Why         *NotRun `json:"-"`
	// Paths are the paths through the target, each with whether the policy runs there.
	Paths []PolicyPath `json:"paths,omitempty"`
}

// PolicyPath is one path through a target of a described policy.
type PolicyPath struct {
	Path
	// Applies is true when the policy runs on the path; Why says why not, and Reason is
	// its sentence for -o json, written by render (render.NotRunText) in its copy.
	Applies bool    `json:"applies"`
	Reason  string  `json:"reason,omitempty"`
	Why     *NotRun `json:"-"`
}

// accessPolicyView fills d with the view of the XAccessPolicy d.Target names.
func accessPolicyView(s *snapshot.Snapshot, g *topology.Graph, e *effective.Engine, d *View) (*View, error) {
	var obj *snapshot.XAccessPolicy
	for _, p := range s.XAccessPolicies {
		if p.Namespace == d.Target.Namespace && p.Name == d.Target.Name {
			obj = p
		}
	}
	if obj == nil {
		return nil, notFound(s, "xaccesspolicy", d.Target.Namespace, d.Target.Name)
	}
	id := obj.Namespace + "/" + obj.Name
	d.Source = obj.Source.String()
	v := &AccessPolicyView{Policy: Policy{ID: id, Action: string(obj.Spec.Action), Version: obj.APIVersion(),
		Source: d.Source, Admission: e.Admission[obj]}}
	if v.Action == "" {
		v.Action = "<no action>"
	}
	cp := e.Compile(obj)
	v.Rules = cp.All
	d.RuleSources = map[string]string{}
	for _, r := range cp.All {
		d.RuleSources[r.ID()] = r.Source.String()
	}
	targets := topology.IndexTargets(s)
	shadows := map[Shadow]bool{}
	applied, total := 0, 0
	for _, tr := range obj.Spec.TargetRefs {
		pt := PolicyTarget{Kind: string(tr.Kind), Name: obj.Namespace + "/" + string(tr.Name)}
		if tr.SectionName != nil {
			pt.SectionName = string(*tr.SectionName)
		}
		var ref topology.Ref
		var paths []topology.Path
		switch {
		case string(tr.Group) == snapshot.GatewayGroup && tr.Kind == "Gateway":
			ref = topology.GatewayRef(obj.Namespace, string(tr.Name))
			if gw := g.Gateway(ref); gw != nil {
				pt.Found = true
				dp := g.DataPlane(gw)
				pt.DataPlane = &dp
				paths = g.Paths(ref)
			}
		case agentic.IsGroup(string(tr.Group)) && string(tr.Kind) == agentic.KindXBackend:
			ref = topology.XBackendRef(obj.Namespace, string(tr.Name))
			if g.XBackend(ref) != nil {
				pt.Found = true
				for _, gr := range g.GatewaysOfBackend(ref) {
					for _, p := range g.Paths(gr) {
						if p.Backend.Kind == topology.BackendXBackend && p.Backend.Ref.Namespace == ref.Namespace && p.Backend.Ref.Name == ref.Name {
							paths = append(paths, p)
						}
					}
				}
			}
		default:
			pt.Why = &NotRun{Why: NotRunUnsupportedKind, Kind: string(tr.Kind)}
		}
		if ref.Kind != "" {
			pt.PoliciesOnTarget = len(targets.AccessPolicies[ref])
		}
		for _, tp := range paths {
			full := path(e, tp)
			c := full.Chain
			full.Chain = nil // the policy's own rules are listed once; chains are the object's view
			pp := PolicyPath{Path: full}
			lvl := c.Gateway
			if ref.Kind == agentic.KindXBackend {
				lvl = c.Backend
			}
			if c.OtherDataPlane != nil {
				pp.Why = &NotRun{Why: NotRunOtherDataPlane, OtherDataPlane: c.OtherDataPlane}
			} else {
				pp.Applies, pp.Why = appliesOn(lvl, obj, id)
			}
			if pp.Applies {
				applied++
			}
			total++
			if lvl != nil {
				on := lvl.Target.Namespace + "/" + lvl.Target.Name
				for _, col := range lvl.Collisions {
					switch {
					case col.Replaced != "" && strings.HasPrefix(col.Replaced, id+"#"):
						shadows[Shadow{Rule: col.Name, Other: col.Kept, On: on}] = true
					case col.Replaced != "" && strings.HasPrefix(col.Kept, id+"#"):
						shadows[Shadow{Rule: col.Name, Other: col.Replaced, On: on, Replaces: true}] = true
					}
				}
			}
			pt.Paths = append(pt.Paths, pp)
		}
		if pt.DataPlane != nil && pt.Why == nil {
			if o := e.Chain(ref, "", nil).OtherDataPlane; o != nil {
				pt.Why = &NotRun{Why: NotRunOtherDataPlane, OtherDataPlane: o}
			}
		}
		switch {
		case pt.Why != nil:
		case !pt.Found:
			pt.Why = &NotRun{Why: NotRunTargetNotFound, Kind: pt.Kind, Name: pt.Name}
		case len(pt.Paths) == 0 && ref.Kind == agentic.KindXBackend:
			pt.Why = &NotRun{Why: NotRunBackendNotRouted}
		case len(pt.Paths) == 0:
			pt.Why = &NotRun{Why: NotRunGatewayNoRoute}
		default:
			pt.Why = commonReason(pt.Paths)
		}
		v.Targets = append(v.Targets, pt)
	}
	switch {
	case applied > 0 && applied == total:
		v.Enforcement = Enforced
	case applied > 0:
		v.Enforcement = PartiallyEnforced
	default:
		v.Enforcement = NotEnforced
	}
	for _, pt := range v.Targets {
		if pt.Why != nil && v.Why == nil {
			v.Why = pt.Why
		}
	}
	if v.Enforcement == Enforced {
		v.Why = nil
	}
	for sh := range shadows {
		v.Shadowing = append(v.Shadowing, sh)
	}
	sort.Slice(v.Shadowing, func(i, j int) bool {
		a, b := v.Shadowing[i], v.Shadowing[j]
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		if a.Replaces != b.Replaces {
			return !a.Replaces
		}
		if a.Other != b.Other {
			return a.Other < b.Other
		}
		return a.On < b.On
	})
	d.AccessPolicy = v
	return d, nil
}

// appliesOn says whether policy obj (ID id) runs at level lvl of a chain the data plane
// enforces, and why not.
func appliesOn(lvl *effective.Level, obj *snapshot.XAccessPolicy, id string) (bool, *NotRun) {
	if lvl == nil {
		return false, &NotRun{Why: NotRunNoLevel}
	}
	if lvl.ExtAuth != nil && lvl.ExtAuth.Obj == obj {
		if !lvl.ExtAuthFilter {
			return false, &NotRun{Why: NotRunInert, NoFilter: lvl.NoFilter}
		}
		return true, nil
	}
	for _, p := range lvl.Allow {
		if p.Obj == obj {
			return true, nil
		}
	}
	for i := range lvl.Ignored {
		if ig := &lvl.Ignored[i]; ig.Policy == obj || ig.ID == id {
			return false, &NotRun{Why: NotRunIgnored, Ignored: ig}
		}
	}
	return false, &NotRun{Why: NotRunNotOnLevel}
}

// commonReason is the reason every path gives when the policy runs on none of them
// (the same one), NotRunPathsDiffer when they differ; nil when it runs on some.
func commonReason(paths []PolicyPath) *NotRun {
	var common *NotRun
	for i, p := range paths {
		if p.Applies {
			return nil
		}
		if i > 0 && !p.Why.same(common) {
			return &NotRun{Why: NotRunPathsDiffer}
		}
		common = p.Why
	}
	return common
}

// AuthPolicyView is the view of one Kuadrant AuthPolicy.
type AuthPolicyView struct {
	authpolicyStatus
	// Rules are its rule keys with where each is written.
	Rules []AuthRule `json:"rules"`
	// AppliesOn are the paths (gateway › listener › route › rule) where at least one
	// of its rules is effective; DisplacedOn those where another policy displaced one.
	AppliesOn   []string `json:"appliesOn,omitempty"`
	DisplacedOn []string `json:"displacedOn,omitempty"`
	// Displaces are the policies some of whose rules it displaced.
	Displaces []string `json:"displaces,omitempty"`
}

// authpolicyStatus is the computed status, as agpol effective authpolicy gives it.
type authpolicyStatus struct {
	Policy          string               `json:"policy"`
	Target          string               `json:"target"`
	Mode            string               `json:"mode"`
	Enforcement     string               `json:"enforcement"`
	OverriddenBy    []string             `json:"overriddenBy,omitempty"`
	Condition       authpolicy.Condition `json:"condition"`
	Reasons         []string             `json:"reasons,omitempty"` // written by render from Why
	OverriddenRules map[string][]string  `json:"overriddenRules,omitempty"`
	Why             []authpolicy.Reason  `json:"-"`
}

// AuthRule is one rule of a described AuthPolicy.
type AuthRule struct {
	Key    string `json:"key"`
	Source string `json:"source,omitempty"`
}

// authPolicyView fills d with the view of the AuthPolicy d.Target names.
func authPolicyView(m *model.Model, d *View) (*View, error) {
	s, res := m.Snapshot, m.AuthPolicy()
	pr := res.Policy(d.Name)
	if pr == nil && findV1beta2(s, d.Target.Namespace, d.Target.Name) != nil {
		return v1beta2PolicyView(m, d)
	}
	if pr == nil {
		return nil, notFound(s, "authpolicy", d.Target.Namespace, d.Target.Name)
	}
	d.Source = pr.Policy.Object.Source.String()
	v := &AuthPolicyView{authpolicyStatus: authpolicyStatus{Policy: pr.Ref, Target: pr.Policy.Target.String(),
		Mode: pr.Policy.Describe(), Enforcement: pr.Enforcement, OverriddenBy: pr.OverriddenBy,
		Condition: pr.Condition, Why: pr.Reasons, OverriddenRules: pr.OverriddenRules}}
	for _, k := range pr.Policy.Keys() {
		r := pr.Policy.Rules[k]
		ar := AuthRule{Key: k}
		if r.Position.Known() {
			ar.Source = r.Position.String()
		}
		v.Rules = append(v.Rules, ar)
	}
	for _, p := range res.Paths {
		if p.Effective == nil {
			continue
		}
		if slices.Contains(p.Effective.Sources(), pr.Ref) {
			v.AppliesOn = append(v.AppliesOn, p.Path.String())
		}
		for _, l := range p.Effective.Lost {
			if l.Source == pr.Ref {
				v.DisplacedOn = append(v.DisplacedOn, p.Path.String())
				break
			}
		}
	}
	for _, o := range res.Policies {
		if o.Ref == pr.Ref {
			continue
		}
		if slices.Contains(o.Displacers(), pr.Ref) {
			v.Displaces = append(v.Displaces, o.Ref)
		}
	}
	d.AuthPolicyStatus = v
	return d, nil
}

// Names lists the objects of kind in namespace ns ("" for every namespace) as
// [namespace, name] pairs, in namespace/name order.
func Names(s *snapshot.Snapshot, kind, ns string) [][2]string {
	var out [][2]string
	add := func(n, name string) {
		if ns == "" || n == ns {
			out = append(out, [2]string{n, name})
		}
	}
	switch kind {
	case KindGateway:
		for _, o := range s.Gateways {
			add(o.Namespace, o.Name)
		}
	case KindHTTPRoute:
		for _, o := range s.HTTPRoutes {
			add(o.Namespace, o.Name)
		}
	case KindXBackend:
		for _, o := range s.XBackends {
			add(o.Namespace, o.Name)
		}
	case KindXAccessPolicy:
		for _, o := range s.XAccessPolicies {
			add(o.Namespace, o.Name)
		}
	case KindAuthPolicy:
		for _, o := range s.AuthPolicies {
			add(o.Namespace, o.Name)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	return slices.CompactFunc(out, func(a, b [2]string) bool { return a == b })
}
