package effective

import (
	"fmt"
	"slices"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Reasons a data plane does not enforce an XAccessPolicy on a target (beyond the
// admission reasons, which are used as they are).
const (
	ReasonTargetNotFound        = "TargetNotFound"
	ReasonUnsupportedTargetKind = "UnsupportedTargetKind"
	ReasonOtherDataPlane        = "OtherDataPlane"
	ReasonNotRouted             = "NotRouted"
	ReasonNoAction              = "NoAction"
	ReasonUnknownAction         = "UnknownAction"
	ReasonExtAuthNotFirst       = "ExternalAuthNotFirst"
	ReasonSectionNotFound       = "SectionNotFound"
	ReasonOtherListener         = "OtherListener"
	// ReasonNotRead: the answer depends on objects the input does not hold (a live read
	// of one namespace cannot see the routes of other namespaces).
	ReasonNotRead = "NotRead"
)

func actionCode(a v1alpha1.AccessPolicyActionType) string {
	if a == "" {
		return ReasonNoAction
	}
	return ReasonUnknownAction
}

// TargetEnforcement is whether the data plane enforces a policy on one of its targets.
type TargetEnforcement struct {
	Target   topology.Ref `json:"target"`
	Enforced bool         `json:"enforced"`
	// Unknown is set when the input does not hold what the answer depends on.
	Unknown bool   `json:"unknown,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// PolicyEnforcement is what the data plane does with an XAccessPolicy: whether it
// enforces it on each target it names, and why not.
type PolicyEnforcement struct {
	// Enforced is true when the policy is enforced on every target; Partial when on some.
	Enforced bool `json:"enforced"`
	Partial  bool `json:"partial,omitempty"`
	// Unknown is set when no target is known not to enforce it, and some are unknown.
	Unknown bool `json:"unknown,omitempty"`
	// Reason and Message are the first target's that is not enforced (else unknown).
	Reason  string              `json:"reason,omitempty"`
	Message string              `json:"message,omitempty"`
	Targets []TargetEnforcement `json:"targets"`
}

// Cell is the table cell: "True", "False(Reason)", "Partial(Reason)" when the policy
// is enforced on some of its targets only, "Unknown(NotRead)" when the input cannot tell.
func (p PolicyEnforcement) Cell() string {
	switch {
	case p.Enforced:
		return "True"
	case p.Unknown:
		return "Unknown(" + p.Reason + ")"
	case p.Partial:
		return "Partial(" + p.Reason + ")"
	}
	return "False(" + p.Reason + ")"
}

// InForce reports whether the policy is enforced on at least one target.
func (p PolicyEnforcement) InForce() bool { return p.Enforced || p.Partial }

// Enforcement computes, for every XAccessPolicy of the snapshot, whether the data plane
// enforces it on each target: not when the admission the semantics follows rejects it,
// when it has no action (a v0alpha0 object as stored), when the target does not exist or
// is of a kind no level reads, when another data plane serves the Gateway (or every
// Gateway routing to the XBackend), when no route sends traffic to the XBackend, or when
// its level leaves it out (Level.Ignored). g is the snapshot's graph (model.Model.Graph).
func (e *Engine) Enforcement(g *topology.Graph) map[*snapshot.XAccessPolicy]PolicyEnforcement {
	out := make(map[*snapshot.XAccessPolicy]PolicyEnforcement, len(e.Snapshot.XAccessPolicies))
	for _, p := range e.Snapshot.XAccessPolicies {
		out[p] = e.policyEnforcement(g, p)
	}
	return out
}

func (e *Engine) policyEnforcement(g *topology.Graph, p *snapshot.XAccessPolicy) PolicyEnforcement {
	var pe PolicyEnforcement
	seen := map[topology.Ref]bool{}
	for _, tr := range p.Spec.TargetRefs {
		ref := topology.Ref{Group: string(tr.Group), Kind: string(tr.Kind), Namespace: p.Namespace, Name: string(tr.Name)}
		if seen[ref] {
			continue
		}
		seen[ref] = true
		t := e.targetEnforcement(g, p, ref)
		pe.Targets = append(pe.Targets, t)
	}
	enforced, unknown := 0, 0
	for _, t := range pe.Targets {
		switch {
		case t.Enforced:
			enforced++
		case t.Unknown:
			unknown++
		case pe.Reason == "":
			pe.Reason, pe.Message = t.Reason, t.Message
		}
	}
	switch {
	case len(pe.Targets) == 0:
		pe.Reason, pe.Message = ReasonTargetNotFound, "the policy names no target"
	case enforced == len(pe.Targets):
		pe.Enforced = true
	case unknown > 0 && enforced+unknown == len(pe.Targets):
		pe.Unknown = true
		for _, t := range pe.Targets {
			if t.Unknown {
				pe.Reason, pe.Message = t.Reason, t.Message
				break
			}
		}
	case enforced > 0:
		pe.Partial = true
	}
	return pe
}

func (e *Engine) targetEnforcement(g *topology.Graph, p *snapshot.XAccessPolicy, ref topology.Ref) TargetEnforcement {
	no := func(reason, format string, args ...any) TargetEnforcement {
		return TargetEnforcement{Target: ref, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	if a, ok := e.Admission[p]; ok && !a.Effective.Accepted {
		return no(a.Effective.Reason, "not accepted (%s status): %s", a.From, a.Effective.Message)
	}
	if p.Legacy != nil && e.Semantics.V0alpha0 != V0alpha0Legacy {
		return no(ReasonNoAction, "a v0alpha0 object is stored as v1alpha1 without spec.action: the translator never enforces it")
	}
	if p.Legacy == nil && p.Spec.Action == "" {
		return no(ReasonNoAction, "no spec.action (as a v0alpha0 object reads back): the translator never enforces it")
	}
	switch {
	case ref.Kind == "Gateway" && ref.Group == snapshot.GatewayGroup:
		gw := g.Gateway(ref)
		if gw == nil {
			return no(ReasonTargetNotFound, "Gateway %s/%s is not in the input", ref.Namespace, ref.Name)
		}
		if dp, ok := e.planes[topology.GatewayRef(ref.Namespace, ref.Name)]; ok && !dp.Agentic() {
			return no(ReasonOtherDataPlane, "the %s data plane serves Gateway %s/%s (%s)", dp.DataPlane, ref.Namespace, ref.Name, dp.Why)
		}
	case ref.Kind == agentic.KindXBackend && ref.Group == agentic.GroupName:
		if g.XBackend(ref) == nil {
			return no(ReasonTargetNotFound, "XBackend %s/%s is not in the input", ref.Namespace, ref.Name)
		}
		gws := g.GatewaysOfBackend(ref)
		if len(gws) == 0 && liveOneNamespace(e.Snapshot) {
			return TargetEnforcement{Target: ref, Unknown: true, Reason: ReasonNotRead,
				Message: fmt.Sprintf("no route read sends traffic to XBackend %s/%s, but the cluster was read in one namespace: routes of other namespaces were not read (-A reads them)", ref.Namespace, ref.Name)}
		}
		if len(gws) == 0 {
			// Another data plane does not route to XBackends at all: name it when one
			// is what the routes to this backend are attached to.
			for _, gw := range e.routeParents(ref) {
				if dp, ok := e.planes[gw]; ok && !dp.Agentic() {
					return no(ReasonOtherDataPlane, "the routes to XBackend %s/%s are served by another data plane (%s serves Gateway %s/%s)",
						ref.Namespace, ref.Name, dp.DataPlane, gw.Namespace, gw.Name)
				}
			}
			return no(ReasonNotRouted, "no HTTPRoute of a Gateway sends traffic to XBackend %s/%s", ref.Namespace, ref.Name)
		}
		agenticGW := false
		for _, gw := range gws {
			if dp, ok := e.planes[gw]; !ok || dp.Agentic() {
				agenticGW = true
			}
		}
		if !agenticGW {
			dp := e.planes[gws[0]]
			return no(ReasonOtherDataPlane, "every Gateway routing to XBackend %s/%s is served by another data plane (%s serves %s/%s)",
				ref.Namespace, ref.Name, dp.DataPlane, gws[0].Namespace, gws[0].Name)
		}
	default:
		return no(ReasonUnsupportedTargetKind, "targetRef %s/%s %s: only Gateways (%s) and XBackends (%s) are enforced",
			ref.Group, ref.Kind, ref.Name, snapshot.GatewayGroup, agentic.GroupName)
	}
	for _, ig := range e.level(ref, "").Ignored {
		if ig.Policy == p {
			return no(ig.Code, "%s", ig.Reason)
		}
	}
	return TargetEnforcement{Target: ref, Enforced: true}
}

// routeParents lists the Gateways named by the parentRefs of the HTTPRoutes whose rules
// name the XBackend xb, attached or not.
func (e *Engine) routeParents(xb topology.Ref) []topology.Ref {
	var out []topology.Ref
	for _, r := range e.Snapshot.HTTPRoutes {
		names := false
		for _, rule := range r.Spec.Rules {
			for _, b := range rule.BackendRefs {
				ns := r.Namespace
				if b.Namespace != nil {
					ns = string(*b.Namespace)
				}
				if b.Kind != nil && string(*b.Kind) == agentic.KindXBackend && ns == xb.Namespace && string(b.Name) == xb.Name {
					names = true
				}
			}
		}
		if !names {
			continue
		}
		for _, p := range r.Spec.ParentRefs {
			if ref, ok := topology.ParentGateway(p, r.Namespace); ok {
				out = append(out, ref)
			}
		}
	}
	return out
}

// liveOneNamespace reports whether the snapshot is a live read that did not cover every
// namespace (files alone are judged as given).
func liveOneNamespace(s *snapshot.Snapshot) bool {
	return !s.Complete && slices.Contains(s.Origins, "cluster")
}
