package render

import (
	"fmt"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/topology"
)

// DataPlaneWhy is the phrase of where agpol learned which data plane serves a Gateway
// (topology.GatewayDataPlane: the class's controllerName, the configuration's mapping,
// or an assumption when the GatewayClass is not in the input; docs/checks.md#data-planes), as every
// view quotes it: describe's "Data plane:" line, explain's assumed data plane, describe's
// JSON why. "" for the zero value (a Gateway not in the input).
func DataPlaneWhy(d topology.GatewayDataPlane) string {
	switch d.From {
	case "":
		return ""
	case topology.PlaneFromConfig:
		return fmt.Sprintf("GatewayClass %s is mapped to %s by the configuration", d.Class, d.DataPlane)
	case topology.PlaneFromController:
		return fmt.Sprintf("GatewayClass %s names controller %s", d.Class, d.Controller)
	case topology.PlaneFromUnknownController:
		return fmt.Sprintf("GatewayClass %s names controller %s, which agpol does not model: routed as Gateway API specifies (map the class to a data plane with --data-plane %s=PLANE)", d.Class, d.Controller, d.Class)
	case topology.PlaneFromHint:
		return fmt.Sprintf("GatewayClass %s is not in the input; assumed the kube-agentic-networking data plane: %s", d.Class, planeHint(d.Hint))
	case topology.PlaneFromDefault:
		return fmt.Sprintf("GatewayClass %s is not in the input, no XAccessPolicy targets the Gateway and no route of it sends traffic to an XBackend: assumed an implementation routing as Gateway API specifies", d.Class)
	}
	return "data plane " + string(d.DataPlane) + " (" + d.From + ")" // a code this function does not know yet: still shown
}

// planeHint is the object that made agpol assume the reference data plane.
func planeHint(h *topology.Ref) string {
	if h == nil {
		return "an object around the Gateway"
	}
	if h.Kind == "HTTPRoute" {
		return fmt.Sprintf("HTTPRoute %s/%s sends traffic to an XBackend", h.Namespace, h.Name)
	}
	return fmt.Sprintf("%s %s/%s targets it", h.Kind, h.Namespace, h.Name)
}

// dataPlaneView is a copy of d with its Why written (nil stays nil), for -o json.
func dataPlaneView(d *topology.GatewayDataPlane) *topology.GatewayDataPlane {
	if d == nil {
		return nil
	}
	v := *d
	v.Why = DataPlaneWhy(v)
	return &v
}

// dataPlaneAssumed is the note of a path whose Gateway's data plane agpol assumed (its
// GatewayClass is not in the input); "" when it assumed none.
func dataPlaneAssumed(p *explain.PathInfo) string {
	if p.DataPlaneAssumed != "" || p.DataPlaneAssumption == nil {
		return p.DataPlaneAssumed
	}
	return DataPlaneWhy(*p.DataPlaneAssumption)
}

// OtherDataPlaneText is the sentence of a Gateway on which no XAccessPolicy is enforced
// because another data plane serves it (effective.OtherDataPlane; docs/checks.md#data-planes):
// explain's step and reason, describe's chains and policies. "" for nil.
func OtherDataPlaneText(o *effective.OtherDataPlane) string {
	if o == nil {
		return ""
	}
	return fmt.Sprintf("XAccessPolicies are not enforced on Gateway %s/%s: the %s data plane serves it (%s)",
		o.Gateway.Namespace, o.Gateway.Name, o.DataPlane.DataPlane, DataPlaneWhy(o.DataPlane))
}
