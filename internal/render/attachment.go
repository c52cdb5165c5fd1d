package render

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/topology"
)

// The sentences of topology's attachment and listener codes (topology/attachwhy.go): why
// a route does not attach to a listener, why a listener carries no routes, why a Gateway
// does not take a ListenerSet.

// AttachmentText is an attachment's reason as get, graph, describe and lint show it:
// "Accepted", or the Gateway API reason, ": " and why (AttachMissText); "" for nil.
func AttachmentText(a *topology.Attachment) string {
	if a == nil {
		return ""
	}
	if a.Miss == nil {
		return a.Reason
	}
	return a.Reason + ": " + AttachMissText(a.Miss)
}

// AttachMissText is why a route does not attach to a listener (topology.AttachMiss).
func AttachMissText(m *topology.AttachMiss) string {
	switch m.Why {
	case topology.AttachSectionName:
		return fmt.Sprintf("parentRef sectionName %s selects another listener", m.SectionName)
	case topology.AttachPort:
		return fmt.Sprintf("parentRef port %d does not match listener port %d", m.Port, m.ListenerPort)
	case topology.AttachNotSameNamespace:
		owner := "gateway"
		if m.ListenerSet {
			owner = "ListenerSet"
		}
		return fmt.Sprintf("namespace %s is not the %s's namespace %s (allowedRoutes from Same)", m.Namespace, owner, m.ListenerNamespace)
	case topology.AttachSelectorUnusable:
		if m.SelectorErr == "" {
			return "the listener's namespace selector is unusable: from is Selector but no selector is set"
		}
		return "the listener's namespace selector is unusable: invalid selector: " + m.SelectorErr
	case topology.AttachSelectorMismatch:
		return fmt.Sprintf("namespace %s does not match the listener's selector %s", m.Namespace, m.Selector)
	case topology.AttachFromNone:
		return "the listener allows no routes (allowedRoutes from None)"
	case topology.AttachFromUnknown:
		return fmt.Sprintf("unknown allowedRoutes from %q", m.From)
	case topology.AttachHostnames:
		return fmt.Sprintf("route hostnames %s do not intersect listener hostname %s", strings.Join(m.RouteHostnames, ", "), m.ListenerHost)
	case topology.AttachListenerNotProgrammed:
		return NotProgrammedText(m.NotProgrammed)
	}
	return m.Why // a code this function does not know yet: still shown
}

// NotProgrammedText is why the data plane carries no routes on a listener
// (topology.NotProgrammed); "" for nil.
func NotProgrammedText(np *topology.NotProgrammed) string {
	if np == nil {
		return ""
	}
	const yields = ": a ListenerSet's listener yields to the Gateway's and older ListenerSets'"
	switch np.Why {
	case topology.NotProgrammedProtocol:
		return fmt.Sprintf("listener protocol %s carries no HTTPRoutes", np.Protocol)
	case topology.NotProgrammedInvalidKinds:
		return fmt.Sprintf("allowedRoutes.kinds lists %s, which the reference controller does not support (InvalidRouteKinds)", np.Kind)
	case topology.NotProgrammedProtocolConflict:
		return fmt.Sprintf("listener conflicts (ProtocolConflict): TCP/UDP and HTTP/HTTPS/TLS listeners share port %d", np.Port)
	case topology.NotProgrammedHostnameConflict:
		return fmt.Sprintf("listener conflicts (HostnameConflict): listeners %s and %s share port %d and hostname %q", np.Listener, np.Other, np.Port, np.Host)
	case topology.NotProgrammedSetProtocolConflict:
		return fmt.Sprintf("listener conflicts (ProtocolConflict) with listener %s on port %d", np.Other, np.Port) + yields
	case topology.NotProgrammedSetHostnameConflict:
		return fmt.Sprintf("listener conflicts (HostnameConflict) with listener %s (port %d, hostname %q)", np.Other, np.Port, np.Host) + yields
	}
	return np.Why // a code this function does not know yet: still shown
}

// ListenerSetReasonText is whether a Gateway takes a ListenerSet as get and lint show
// it: "Accepted", or the reason, ": " and why (ListenerSetMissText).
func ListenerSetReasonText(st *topology.ListenerSetStatus) string {
	if st.Miss == nil {
		return st.Reason
	}
	return st.Reason + ": " + ListenerSetMissText(st)
}

// ListenerSetMissText is why a Gateway does not take a ListenerSet (its Miss); "" when
// it takes it.
func ListenerSetMissText(st *topology.ListenerSetStatus) string {
	m := st.Miss
	if m == nil {
		return ""
	}
	gw := st.Gateway.Namespace + "/" + st.Gateway.Name
	switch m.Why {
	case topology.SetMissNoParent:
		return "spec.parentRef names no Gateway"
	case topology.SetMissGatewayNotFound:
		return fmt.Sprintf("Gateway %s is not in the input", gw)
	case topology.SetMissAgentic:
		return "the kube-agentic-networking data plane reads no ListenerSets; its listeners carry no traffic"
	case topology.SetMissFromSame:
		return fmt.Sprintf("Gateway %s allows ListenerSets of its own namespace only (allowedListeners from Same)", gw)
	case topology.SetMissSelectorMissing:
		return fmt.Sprintf("Gateway %s allowedListeners from Selector has no selector", gw)
	case topology.SetMissSelectorInvalid:
		return fmt.Sprintf("Gateway %s allowedListeners selector is invalid: %s", gw, m.SelectorErr)
	case topology.SetMissSelectorMismatch:
		ns := ""
		if st.ListenerSet != nil {
			ns = st.ListenerSet.Namespace
		}
		return fmt.Sprintf("namespace %s does not match Gateway %s allowedListeners selector %s", ns, gw, m.Selector)
	case topology.SetMissFromNone:
		return fmt.Sprintf("Gateway %s allows no ListenerSets (allowedListeners unset or from None)", gw)
	case topology.SetMissFromUnknown:
		return fmt.Sprintf("unknown allowedListeners from %q", m.From)
	}
	return m.Why // a code this function does not know yet: still shown
}
