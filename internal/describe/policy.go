package describe

import (
	"fmt"
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
	// Shadows says which of its rules another policy replaces, or which it replaces,
	// where a level merges rules by name.
	Shadows []string `json:"shadows,omitempty"`
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
	// NotEnforced says why the policy applies on no path of this target, "" when it
	// applies on some; OtherDataPlane when it is that another data plane serves the
	// gateway (render writes that sentence, and NotEnforced in -o json).
	NotEnforced    string                    `json:"notEnforced,omitempty"`
	OtherDataPlane *effective.OtherDataPlane `json:"-"`
	// Paths are the paths through the target, each with whether the policy runs there.
	Paths []PolicyPath `json:"paths,omitempty"`
}

// PolicyPath is one path through a target of a described policy.
type PolicyPath struct {
	Path
	// Applies is true when the policy runs on the path; Reason says why not, or
	// OtherDataPlane (render writes that sentence, and Reason in -o json).
	Applies        bool                      `json:"applies"`
	Reason         string                    `json:"reason,omitempty"`
	OtherDataPlane *effective.OtherDataPlane `json:"-"`
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
	shadows := map[string]bool{}
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
			pt.NotEnforced = fmt.Sprintf("%s is neither a Gateway nor an XBackend: the data plane attaches nothing to it", tr.Kind)
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
				pp.OtherDataPlane = c.OtherDataPlane
			} else {
				pp.Applies, pp.Reason = appliesOn(lvl, obj, id)
			}
			if pp.Applies {
				applied++
			}
			total++
			if lvl != nil {
				for _, col := range lvl.Collisions {
					switch {
					case col.Replaced != "" && strings.HasPrefix(col.Replaced, id+"#"):
						shadows[fmt.Sprintf("rule %q is replaced by %s on %s", col.Name, col.Kept, lvl.Target.Namespace+"/"+lvl.Target.Name)] = true
					case col.Replaced != "" && strings.HasPrefix(col.Kept, id+"#"):
						shadows[fmt.Sprintf("rule %q replaces %s on %s", col.Name, col.Replaced, lvl.Target.Namespace+"/"+lvl.Target.Name)] = true
					}
				}
			}
			pt.Paths = append(pt.Paths, pp)
		}
		if pt.DataPlane != nil && pt.NotEnforced == "" {
			pt.OtherDataPlane = e.Chain(ref, "", nil).OtherDataPlane
		}
		switch {
		case pt.NotEnforced != "" || pt.OtherDataPlane != nil:
		case !pt.Found:
			pt.NotEnforced = fmt.Sprintf("%s %s is not in the input", pt.Kind, pt.Name)
		case len(pt.Paths) == 0 && ref.Kind == agentic.KindXBackend:
			pt.NotEnforced = "no route of any gateway reaches this XBackend"
		case len(pt.Paths) == 0:
			pt.NotEnforced = "no route is attached to the gateway: no path runs the gateway level"
		default:
			pt.NotEnforced, pt.OtherDataPlane = commonReason(pt.Paths)
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
		if (pt.NotEnforced != "" || pt.OtherDataPlane != nil) && v.NotEnforced == "" && v.OtherDataPlane == nil {
			v.NotEnforced, v.OtherDataPlane = pt.NotEnforced, pt.OtherDataPlane
		}
	}
	if v.Enforcement == Enforced {
		v.NotEnforced, v.OtherDataPlane = "", nil
	}
	for sh := range shadows {
		v.Shadows = append(v.Shadows, sh)
	}
	sort.Strings(v.Shadows)
	d.AccessPolicy = v
	return d, nil
}

// appliesOn says whether policy obj (ID id) runs at level lvl of a chain the data plane
// enforces, and why not.
func appliesOn(lvl *effective.Level, obj *snapshot.XAccessPolicy, id string) (bool, string) {
	if lvl == nil {
		return false, "the path has no level for this target"
	}
	if lvl.ExtAuth != nil && lvl.ExtAuth.Obj == obj {
		if !lvl.ExtAuthFilter {
			return false, "inert: " + lvl.ExtAuthNote
		}
		return true, ""
	}
	for _, p := range lvl.Allow {
		if p.Obj == obj {
			return true, ""
		}
	}
	for _, ig := range lvl.Ignored {
		if ig.Policy == obj || ig.ID == id {
			return false, ig.Reason
		}
	}
	return false, "not on this level"
}

// commonReason is the reason every path gives when the policy runs on none of them
// (the same other data plane, or the same text), "runs on no path (see each path)" when
// they differ; "" and nil when it runs on some.
func commonReason(paths []PolicyPath) (string, *effective.OtherDataPlane) {
	reason, set := "", false
	var other *effective.OtherDataPlane
	for _, p := range paths {
		if p.Applies {
			return "", nil
		}
		if set && (p.Reason != reason || !sameGateway(p.OtherDataPlane, other)) {
			return "runs on no path (see each path)", nil
		}
		reason, other, set = p.Reason, p.OtherDataPlane, true
	}
	return reason, other
}

// sameGateway reports whether a and b are the same Gateway of another data plane (both
// nil included): they state the same sentence.
func sameGateway(a, b *effective.OtherDataPlane) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Gateway == b.Gateway
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
