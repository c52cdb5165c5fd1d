package effective

import (
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

// Why a data plane does not enforce a policy on a target (Unenforced.Why); render writes
// the sentence of each (render.EnforcementMessage).
const (
	UnenforcedNotAccepted       = "not-accepted"              // the admission rejects it (From, Detail: its status message)
	UnenforcedLegacyNoAction    = "legacy-no-action"          // a v0alpha0 object stored without spec.action
	UnenforcedNoAction          = "no-action"                 // no spec.action
	UnenforcedNoTarget          = "no-target"                 // the policy names no target
	UnenforcedTargetNotFound    = "target-not-found"          // the Gateway or XBackend Target is not in the input
	UnenforcedGatewayOtherPlane = "gateway-other-data-plane"  // another data plane (DataPlane) serves the Gateway Target
	UnenforcedRoutesNotRead     = "routes-not-read"           // a live read of one namespace sees no route to the XBackend
	UnenforcedRoutesOtherPlane  = "routes-other-data-plane"   // the routes to the XBackend are attached to Gateway, of another data plane
	UnenforcedNotRouted         = "not-routed"                // no route sends traffic to the XBackend
	UnenforcedEveryGatewayOther = "every-gateway-other-plane" // every Gateway routing to the XBackend is another data plane's (the first: Gateway)
	UnenforcedUnsupportedKind   = "unsupported-kind"          // the target is neither a Gateway nor an XBackend
	UnenforcedLevelIgnored      = "level-ignored"             // the target's level leaves the policy out (Ignored: the level's reason)
)

// Unenforced is why the data plane does not enforce a policy on a target, as data: a
// code and the names its sentence needs (render.EnforcementMessage writes it into
// Message).
type Unenforced struct {
	Why    string
	Target topology.Ref
	// Gateway and DataPlane: the Gateway another data plane serves, and that data plane.
	Gateway   topology.Ref
	DataPlane topology.GatewayDataPlane
	// From is where the admission comes from (recorded or computed status).
	From string
	// Detail is text made elsewhere and quoted: the admission's status message.
	Detail string
	// Ignored is why the target's level leaves the policy out (UnenforcedLevelIgnored).
	Ignored *Ignored
}

// TargetEnforcement is whether the data plane enforces a policy on one of its targets.
type TargetEnforcement struct {
	Target   topology.Ref `json:"target"`
	Enforced bool         `json:"enforced"`
	// Unknown is set when the input does not hold what the answer depends on.
	Unknown bool   `json:"unknown,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Message is Why's sentence, written by render (render.EnforcementMessage).
	Message string      `json:"message,omitempty"`
	Why     *Unenforced `json:"-"`
}

// PolicyEnforcement is what the data plane does with an XAccessPolicy: whether it
// enforces it on each target it names, and why not.
type PolicyEnforcement struct {
	// Enforced is true when the policy is enforced on every target; Partial when on some.
	Enforced bool `json:"enforced"`
	Partial  bool `json:"partial,omitempty"`
	// Unknown is set when no target is known not to enforce it, and some are unknown.
	Unknown bool `json:"unknown,omitempty"`
	// Reason, Message and Why are the first target's that is not enforced (else unknown).
	Reason  string              `json:"reason,omitempty"`
	Message string              `json:"message,omitempty"`
	Why     *Unenforced         `json:"-"`
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
			pe.Reason, pe.Why = t.Reason, t.Why
		}
	}
	switch {
	case len(pe.Targets) == 0:
		pe.Reason, pe.Why = ReasonTargetNotFound, &Unenforced{Why: UnenforcedNoTarget}
	case enforced == len(pe.Targets):
		pe.Enforced = true
	case unknown > 0 && enforced+unknown == len(pe.Targets):
		pe.Unknown = true
		for _, t := range pe.Targets {
			if t.Unknown {
				pe.Reason, pe.Why = t.Reason, t.Why
				break
			}
		}
	case enforced > 0:
		pe.Partial = true
	}
	return pe
}

func (e *Engine) targetEnforcement(g *topology.Graph, p *snapshot.XAccessPolicy, ref topology.Ref) TargetEnforcement {
	no := func(reason string, why Unenforced) TargetEnforcement {
		why.Target = ref
		return TargetEnforcement{Target: ref, Reason: reason, Why: &why}
	}
	if a, ok := e.Admission[p]; ok && !a.Effective.Accepted {
		return no(a.Effective.Reason, Unenforced{Why: UnenforcedNotAccepted, From: a.From, Detail: a.Effective.Message})
	}
	if p.Legacy != nil && e.Semantics.V0alpha0 != V0alpha0Legacy {
		return no(ReasonNoAction, Unenforced{Why: UnenforcedLegacyNoAction})
	}
	if p.Legacy == nil && p.Spec.Action == "" {
		return no(ReasonNoAction, Unenforced{Why: UnenforcedNoAction})
	}
	switch {
	case ref.Kind == "Gateway" && ref.Group == snapshot.GatewayGroup:
		gw := g.Gateway(ref)
		if gw == nil {
			return no(ReasonTargetNotFound, Unenforced{Why: UnenforcedTargetNotFound})
		}
		gwRef := topology.GatewayRef(ref.Namespace, ref.Name)
		if dp, ok := e.planes[gwRef]; ok && !dp.Agentic() {
			return no(ReasonOtherDataPlane, Unenforced{Why: UnenforcedGatewayOtherPlane, Gateway: gwRef, DataPlane: dp})
		}
	case ref.Kind == agentic.KindXBackend && ref.Group == agentic.GroupName:
		if g.XBackend(ref) == nil {
			return no(ReasonTargetNotFound, Unenforced{Why: UnenforcedTargetNotFound})
		}
		gws := g.GatewaysOfBackend(ref)
		if len(gws) == 0 && liveOneNamespace(e.Snapshot) {
			t := no(ReasonNotRead, Unenforced{Why: UnenforcedRoutesNotRead})
			t.Unknown = true
			return t
		}
		if len(gws) == 0 {
			// Another data plane does not route to XBackends at all: name it when one
			// is what the routes to this backend are attached to.
			for _, gw := range e.routeParents(ref) {
				if dp, ok := e.planes[gw]; ok && !dp.Agentic() {
					return no(ReasonOtherDataPlane, Unenforced{Why: UnenforcedRoutesOtherPlane, Gateway: gw, DataPlane: dp})
				}
			}
			return no(ReasonNotRouted, Unenforced{Why: UnenforcedNotRouted})
		}
		agenticGW := false
		for _, gw := range gws {
			if dp, ok := e.planes[gw]; !ok || dp.Agentic() {
				agenticGW = true
			}
		}
		if !agenticGW {
			return no(ReasonOtherDataPlane, Unenforced{Why: UnenforcedEveryGatewayOther, Gateway: gws[0], DataPlane: e.planes[gws[0]]})
		}
	default:
		return no(ReasonUnsupportedTargetKind, Unenforced{Why: UnenforcedUnsupportedKind})
	}
	lvl := e.level(ref, "")
	for i := range lvl.Ignored {
		if ig := &lvl.Ignored[i]; ig.Policy == p {
			return no(ig.Code, Unenforced{Why: UnenforcedLevelIgnored, Ignored: ig})
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
