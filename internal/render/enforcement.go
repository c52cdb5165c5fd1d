package render

import (
	"fmt"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
)

// EnforcementMessage is the sentence of why the data plane does not enforce an
// XAccessPolicy on a target (effective.Unenforced; docs/checks.md#data-planes): the
// message of get's Item.Enforcement (which no -o format prints today: tables show the
// cell, kubectl's printers the objects). "" for nil (enforced).
func EnforcementMessage(u *effective.Unenforced) string {
	if u == nil {
		return ""
	}
	t := u.Target
	switch u.Why {
	case effective.UnenforcedNotAccepted:
		return fmt.Sprintf("not accepted (%s status): %s", u.From, u.Detail)
	case effective.UnenforcedLegacyNoAction:
		return "a v0alpha0 object is stored as v1alpha1 without spec.action: the translator never enforces it"
	case effective.UnenforcedNoAction:
		return "no spec.action (as a v0alpha0 object reads back): the translator never enforces it"
	case effective.UnenforcedNoTarget:
		return "the policy names no target"
	case effective.UnenforcedTargetNotFound:
		return fmt.Sprintf("%s %s/%s is not in the input", t.Kind, t.Namespace, t.Name)
	case effective.UnenforcedGatewayOtherPlane:
		return fmt.Sprintf("the %s data plane serves Gateway %s/%s (%s)", u.DataPlane.DataPlane, t.Namespace, t.Name, DataPlaneWhy(u.DataPlane))
	case effective.UnenforcedRoutesNotRead:
		return fmt.Sprintf("no route read sends traffic to XBackend %s/%s, but the cluster was read in one namespace: routes of other namespaces were not read (-A reads them)", t.Namespace, t.Name)
	case effective.UnenforcedRoutesOtherPlane:
		return fmt.Sprintf("the routes to XBackend %s/%s are served by another data plane (%s serves Gateway %s/%s)",
			t.Namespace, t.Name, u.DataPlane.DataPlane, u.Gateway.Namespace, u.Gateway.Name)
	case effective.UnenforcedNotRouted:
		return fmt.Sprintf("no HTTPRoute of a Gateway sends traffic to XBackend %s/%s", t.Namespace, t.Name)
	case effective.UnenforcedEveryGatewayOther:
		return fmt.Sprintf("every Gateway routing to XBackend %s/%s is served by another data plane (%s serves %s/%s)",
			t.Namespace, t.Name, u.DataPlane.DataPlane, u.Gateway.Namespace, u.Gateway.Name)
	case effective.UnenforcedUnsupportedKind:
		return fmt.Sprintf("targetRef %s/%s %s: only Gateways (%s) and XBackends (%s) are enforced",
			t.Group, t.Kind, t.Name, snapshot.GatewayGroup, agentic.GroupName)
	case effective.UnenforcedLevelIgnored:
		return IgnoredText(u.Ignored) // the level's own reason
	}
	return "not enforced: " + u.Why // a code this function does not know yet: still shown
}

// enforcementView is a copy of pe with its messages written (get's Item.Enforcement).
func enforcementView(pe effective.PolicyEnforcement) effective.PolicyEnforcement {
	v := pe
	v.Message = EnforcementMessage(pe.Why)
	if pe.Targets != nil {
		v.Targets = make([]effective.TargetEnforcement, len(pe.Targets))
		for i, t := range pe.Targets {
			t.Message = EnforcementMessage(t.Why)
			v.Targets[i] = t
		}
	}
	return v
}
