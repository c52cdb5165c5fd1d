package render

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Each attachment and listener outcome's sentence, from topology's codes and names.
func TestAttachmentSentences(t *testing.T) {
	miss := func(reason string, m topology.AttachMiss) string {
		return AttachmentText(&topology.Attachment{Reason: reason, Miss: &m})
	}
	np := func(n topology.NotProgrammed) string {
		return miss(topology.ReasonListenerNotProgrammed, topology.AttachMiss{Why: topology.AttachListenerNotProgrammed, NotProgrammed: &n})
	}
	ls := &snapshot.ListenerSet{}
	ls.Namespace = "other"
	set := func(reason string, m topology.ListenerSetMiss) string {
		return ListenerSetReasonText(&topology.ListenerSetStatus{ListenerSet: ls, Gateway: topology.GatewayRef("infra", "gw"), Reason: reason, Miss: &m})
	}
	for _, c := range []struct{ got, want string }{
		{AttachmentText(&topology.Attachment{Reason: topology.ReasonAccepted, Accepted: true}), "Accepted"},
		{miss(topology.ReasonNoMatchingParent, topology.AttachMiss{Why: topology.AttachSectionName, SectionName: "https"}),
			"NoMatchingParent: parentRef sectionName https selects another listener"},
		{miss(topology.ReasonNoMatchingParent, topology.AttachMiss{Why: topology.AttachPort, Port: 443, ListenerPort: 80}),
			"NoMatchingParent: parentRef port 443 does not match listener port 80"},
		{miss(topology.ReasonNotAllowedByListeners, topology.AttachMiss{Why: topology.AttachNotSameNamespace, Namespace: "team-a", ListenerNamespace: "infra"}),
			"NotAllowedByListeners: namespace team-a is not the gateway's namespace infra (allowedRoutes from Same)"},
		{miss(topology.ReasonNotAllowedByListeners, topology.AttachMiss{Why: topology.AttachNotSameNamespace, Namespace: "team-a", ListenerNamespace: "infra", ListenerSet: true}),
			"NotAllowedByListeners: namespace team-a is not the ListenerSet's namespace infra (allowedRoutes from Same)"},
		{miss(topology.ReasonNotAllowedByListeners, topology.AttachMiss{Why: topology.AttachSelectorUnusable}),
			"NotAllowedByListeners: the listener's namespace selector is unusable: from is Selector but no selector is set"},
		{miss(topology.ReasonNotAllowedByListeners, topology.AttachMiss{Why: topology.AttachSelectorUnusable, SelectorErr: `"=" is not a valid label selector operator`}),
			`NotAllowedByListeners: the listener's namespace selector is unusable: invalid selector: "=" is not a valid label selector operator`},
		{miss(topology.ReasonNotAllowedByListeners, topology.AttachMiss{Why: topology.AttachSelectorMismatch, Namespace: "infra", Selector: "env=prod"}),
			"NotAllowedByListeners: namespace infra does not match the listener's selector env=prod"},
		{miss(topology.ReasonNotAllowedByListeners, topology.AttachMiss{Why: topology.AttachFromNone}),
			"NotAllowedByListeners: the listener allows no routes (allowedRoutes from None)"},
		{miss(topology.ReasonNotAllowedByListeners, topology.AttachMiss{Why: topology.AttachFromUnknown, From: "Elsewhere"}),
			`NotAllowedByListeners: unknown allowedRoutes from "Elsewhere"`},
		{miss(topology.ReasonNoMatchingListenerHostname, topology.AttachMiss{Why: topology.AttachHostnames, RouteHostnames: []string{"a.org", "b.org"}, ListenerHost: "*.example.com"}),
			"NoMatchingListenerHostname: route hostnames a.org, b.org do not intersect listener hostname *.example.com"},
		{np(topology.NotProgrammed{Why: topology.NotProgrammedProtocol, Protocol: "TCP"}),
			"ListenerNotProgrammed: listener protocol TCP carries no HTTPRoutes"},
		{np(topology.NotProgrammed{Why: topology.NotProgrammedInvalidKinds, Kind: "GRPCRoute.gateway.networking.k8s.io"}),
			"ListenerNotProgrammed: allowedRoutes.kinds lists GRPCRoute.gateway.networking.k8s.io, which the reference controller does not support (InvalidRouteKinds)"},
		{np(topology.NotProgrammed{Why: topology.NotProgrammedProtocolConflict, Port: 90}),
			"ListenerNotProgrammed: listener conflicts (ProtocolConflict): TCP/UDP and HTTP/HTTPS/TLS listeners share port 90"},
		{np(topology.NotProgrammed{Why: topology.NotProgrammedHostnameConflict, Port: 80, Listener: "one", Other: "two", Host: "dup.example.com"}),
			`ListenerNotProgrammed: listener conflicts (HostnameConflict): listeners one and two share port 80 and hostname "dup.example.com"`},
		{NotProgrammedText(&topology.NotProgrammed{Why: topology.NotProgrammedSetProtocolConflict, Port: 80, Other: "main"}),
			"listener conflicts (ProtocolConflict) with listener main on port 80: a ListenerSet's listener yields to the Gateway's and older ListenerSets'"},
		{NotProgrammedText(&topology.NotProgrammed{Why: topology.NotProgrammedSetHostnameConflict, Port: 80, Other: "main", Host: "main.example.com"}),
			`listener conflicts (HostnameConflict) with listener main (port 80, hostname "main.example.com"): a ListenerSet's listener yields to the Gateway's and older ListenerSets'`},
		{NotProgrammedText(nil), ""},
		{ListenerSetReasonText(&topology.ListenerSetStatus{Reason: topology.ReasonAccepted, Accepted: true}), "Accepted"},
		{set(topology.ReasonParentNotFound, topology.ListenerSetMiss{Why: topology.SetMissNoParent}), "ParentNotFound: spec.parentRef names no Gateway"},
		{set(topology.ReasonParentNotFound, topology.ListenerSetMiss{Why: topology.SetMissGatewayNotFound}), "ParentNotFound: Gateway infra/gw is not in the input"},
		{set(topology.ReasonNotSupported, topology.ListenerSetMiss{Why: topology.SetMissAgentic}),
			"NotSupported: the kube-agentic-networking data plane reads no ListenerSets; its listeners carry no traffic"},
		{set(topology.ReasonNotAllowed, topology.ListenerSetMiss{Why: topology.SetMissFromSame}),
			"NotAllowed: Gateway infra/gw allows ListenerSets of its own namespace only (allowedListeners from Same)"},
		{set(topology.ReasonNotAllowed, topology.ListenerSetMiss{Why: topology.SetMissSelectorMissing}),
			"NotAllowed: Gateway infra/gw allowedListeners from Selector has no selector"},
		{set(topology.ReasonNotAllowed, topology.ListenerSetMiss{Why: topology.SetMissSelectorInvalid, SelectorErr: "bad"}),
			"NotAllowed: Gateway infra/gw allowedListeners selector is invalid: bad"},
		{set(topology.ReasonNotAllowed, topology.ListenerSetMiss{Why: topology.SetMissSelectorMismatch, Selector: "team=x"}),
			"NotAllowed: namespace other does not match Gateway infra/gw allowedListeners selector team=x"},
		{set(topology.ReasonNotAllowed, topology.ListenerSetMiss{Why: topology.SetMissFromNone}),
			"NotAllowed: Gateway infra/gw allows no ListenerSets (allowedListeners unset or from None)"},
		{set(topology.ReasonNotAllowed, topology.ListenerSetMiss{Why: topology.SetMissFromUnknown, From: "Elsewhere"}),
			`NotAllowed: unknown allowedListeners from "Elsewhere"`},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}

// Every code topology gives an attachment, a listener or a ListenerSet outcome
// (attachwhy.go) has a sentence in render: a new code without one fails here.
func TestAttachmentCodesHaveSentences(t *testing.T) {
	codes := topologyConsts(t, "../topology/attachwhy.go")
	if len(codes) < 24 {
		t.Fatalf("found %d codes in topology, want the Attach*, NotProgrammed*, SetMiss* and Reason* constants", len(codes))
	}
	for name, why := range codes {
		var text string
		switch {
		case strings.HasPrefix(name, "Attach"):
			text = AttachMissText(&topology.AttachMiss{Why: why, NotProgrammed: &topology.NotProgrammed{Why: topology.NotProgrammedProtocol}})
		case strings.HasPrefix(name, "NotProgrammed"):
			text = NotProgrammedText(&topology.NotProgrammed{Why: why})
		case strings.HasPrefix(name, "SetMiss"):
			text = ListenerSetMissText(&topology.ListenerSetStatus{Miss: &topology.ListenerSetMiss{Why: why}})
		case strings.HasPrefix(name, "Reason"):
			continue // a Gateway API reason, printed as is
		default:
			t.Errorf("constant %s (%q): not of a family render knows; give it a sentence and a case here", name, why)
			continue
		}
		if text == why || text == "" {
			t.Errorf("%s (%q) has no sentence in render: %q", name, why, text)
		}
	}
}
