package render

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// AuthPolicyReasonText is the sentence of why an AuthPolicy is not (or not fully) in
// force, why Kuadrant never programs a Gateway, or why a listener never carries a route
// (authpolicy.Reason; docs/semantics.md#kuadrant-programmed, docs/authpolicy-v1beta2.md):
// effective authpolicy's text and JSON, describe, explain, get and lint's AGP212 quote it.
func AuthPolicyReasonText(r authpolicy.Reason) string {
	switch r.Code {
	case authpolicy.ReasonInvalid, authpolicy.ReasonCondition:
		return r.Message // upstream's own text: the API server's, kuadrant-operator's condition
	case authpolicy.ReasonNoGateway:
		return fmt.Sprintf("no Gateway %s in the input", r.Ref)
	case authpolicy.ReasonNoListener:
		return fmt.Sprintf("Gateway %s has no listener %q", r.Ref, r.Section)
	case authpolicy.ReasonNoRoute:
		return fmt.Sprintf("no HTTPRoute %s in the input", r.Ref)
	case authpolicy.ReasonNoRule:
		return fmt.Sprintf("HTTPRoute %s has no rule %q", r.Ref, r.Section)
	case authpolicy.ReasonGRPCRoute:
		return fmt.Sprintf("GRPCRoute %s: agpol does not read GRPCRoutes", r.Ref)
	case authpolicy.ReasonUnsupportedKind:
		return "unsupported target kind " + r.Kind
	case authpolicy.ReasonUnprogrammed:
		return fmt.Sprintf("Kuadrant programs AuthPolicies only on Istio and Envoy Gateway Gateways, not on Gateway %s (data plane %s: %s)",
			r.Ref, r.DataPlane.DataPlane, DataPlaneWhy(r.DataPlane))
	case authpolicy.ReasonUnprogrammedV1beta2:
		return fmt.Sprintf("kuadrant-operator v0.6.1 programs AuthPolicies only on Istio Gateways (an Istio AuthorizationPolicy sends their requests to Authorino), not on Gateway %s (data plane %s: %s)",
			r.Ref, r.DataPlane.DataPlane, DataPlaneWhy(r.DataPlane))
	case authpolicy.ReasonListenerHostname:
		return fmt.Sprintf("listener hostname %s accepts none of the route's hostnames (%s)", r.Host, strings.Join(r.Hosts, ", "))
	case authpolicy.ReasonHostClaimed:
		return fmt.Sprintf("host %s is claimed by the older AuthPolicy %s: Authorino does not link it", r.Host, r.Policy)
	case authpolicy.ReasonNoHostname:
		return "neither the route nor its Gateways' listeners name a hostname: the AuthConfig has no host, and Authorino finds it for no request"
	}
	return "not in force: " + r.Code // a code this function does not know yet: still shown
}

// AuthPolicyReasonsText is the sentences of rs, in order (nil for none).
func AuthPolicyReasonsText(rs []authpolicy.Reason) []string {
	if len(rs) == 0 {
		return nil
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = AuthPolicyReasonText(r)
	}
	return out
}

// unprogrammedText is the sentence of a Gateway Kuadrant never programs; "" for nil.
func unprogrammedText(r *authpolicy.Reason) string {
	if r == nil {
		return ""
	}
	return AuthPolicyReasonText(*r)
}

// V1beta2FoundText is how the kuadrant.io/v1beta2 AuthPolicy of a request was found
// (authpolicy.V1beta2Decision: Found, and where Authorino finds the request's host);
// "" for nil.
func V1beta2FoundText(d *authpolicy.V1beta2Decision) string {
	if d == nil {
		return ""
	}
	var s string
	switch d.Found {
	case authpolicy.FoundRoutePolicy:
		s = "HTTPRoute " + d.Route + " has the AuthPolicy " + d.CheckedBy
	case authpolicy.FoundRouteNotEnforced:
		return "HTTPRoute " + d.Route + " has the AuthPolicy " + d.CheckedBy + ", which is not enforced (" +
			strings.Join(AuthPolicyReasonsText(d.NotEnforced), "; ") + "): it configures no check"
	case authpolicy.FoundGatewayPolicy:
		s = "HTTPRoute " + d.Route + " has no AuthPolicy of its own: the Gateway's AuthPolicy " + d.CheckedBy + " covers it"
	default:
		s = "found: " + d.Found // a code this function does not know yet: still shown
	}
	switch {
	case d.Host == "":
		s += "; the request's host is not known, so which AuthConfig Authorino uses cannot be known"
	case d.Unindexed:
		s += "; no AuthConfig holds host " + d.Host + ": Authorino answers NOT_FOUND"
	case d.AuthConfig != "" && d.AuthConfig != d.CheckedBy:
		s += fmt.Sprintf("; Authorino finds host %s under %s in the AuthConfig of %s", d.Host, d.HostKey, d.AuthConfig)
	}
	return s
}

// v1beta2DecisionView is a copy of d with its text written (Reason, NotProgrammed), for
// -o json; nil stays nil.
func v1beta2DecisionView(d *authpolicy.V1beta2Decision) *authpolicy.V1beta2Decision {
	if d == nil {
		return nil
	}
	v := *d
	v.Reason = V1beta2FoundText(d)
	v.NotProgrammed = unprogrammedText(d.Unprogrammed)
	return &v
}

// v1beta2PolicyView is a copy of p with its text written (Reasons, NotProgrammed), for
// -o json; nil stays nil.
func v1beta2PolicyView(p *authpolicy.V1beta2Policy) *authpolicy.V1beta2Policy {
	if p == nil {
		return nil
	}
	v := *p
	v.Reasons = AuthPolicyReasonsText(p.Why)
	v.NotProgrammed = AuthPolicyReasonsText(p.Unprogrammed)
	return &v
}

// notProgrammedView is a copy of ns with each Reason written, for -o json.
func notProgrammedView(ns []authpolicy.NotProgrammed) []authpolicy.NotProgrammed {
	if ns == nil {
		return nil
	}
	out := make([]authpolicy.NotProgrammed, len(ns))
	for i, n := range ns {
		n.Reason = AuthPolicyReasonText(n.Why)
		out[i] = n
	}
	return out
}
