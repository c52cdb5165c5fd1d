package authpolicy

import "github.com/agpol/agpol/internal/topology"

// Reason is why an AuthPolicy is not (or not fully) in force, why Kuadrant never
// programs a Gateway, or why a listener never carries a route, as data: a code (one of
// the Reason* constants) and the names its sentence needs. render writes the sentence
// (render.AuthPolicyReasonText); docs/semantics.md#kuadrant-programmed and
// docs/authpolicy-v1beta2.md state the rules.
type Reason struct {
	Code string `json:"-"`
	// Ref is the object named ("ns/name"): the Gateway or HTTPRoute a target names
	// (ReasonNo*, ReasonGRPCRoute), the Gateway Kuadrant never programs
	// (ReasonUnprogrammed*).
	Ref string `json:"-"`
	// Kind is the target's kind (ReasonUnsupportedKind).
	Kind string `json:"-"`
	// Section is the listener or rule a target names (ReasonNoListener, ReasonNoRule).
	Section string `json:"-"`
	// Host is the host another policy claims (ReasonHostClaimed), or the listener's
	// hostname (ReasonListenerHostname; "" for any host).
	Host string `json:"-"`
	// Hosts are the route's hostnames (ReasonListenerHostname).
	Hosts []string `json:"-"`
	// Policy is the older policy that claims Host (ReasonHostClaimed).
	Policy string `json:"-"`
	// DataPlane is the data plane of the Gateway Kuadrant never programs, and where agpol
	// learned it (ReasonUnprogrammed*).
	DataPlane topology.GatewayDataPlane `json:"-"`
	// Message is upstream's own text, quoted as it is: the API server's rejection
	// (ReasonInvalid) or the message of the condition the policy fails with
	// (ReasonCondition).
	Message string `json:"-"`
}

// Reason codes (Reason.Code).
const (
	// ReasonInvalid: the API server would reject the policy (Message).
	ReasonInvalid = "invalid"
	// ReasonNoGateway: the target names a Gateway not in the input (Ref).
	ReasonNoGateway = "no-gateway"
	// ReasonNoListener: the target's Gateway has no listener Section.
	ReasonNoListener = "no-listener"
	// ReasonNoRoute: the target names an HTTPRoute not in the input (Ref).
	ReasonNoRoute = "no-route"
	// ReasonNoRule: the target's HTTPRoute has no rule Section.
	ReasonNoRule = "no-rule"
	// ReasonGRPCRoute: the target is a GRPCRoute, which agpol does not read.
	ReasonGRPCRoute = "grpcroute"
	// ReasonUnsupportedKind: the target's kind is none Kuadrant attaches to (Kind).
	ReasonUnsupportedKind = "unsupported-kind"
	// ReasonUnprogrammed: Kuadrant programs AuthPolicies on Istio and Envoy Gateway
	// Gateways only, and another data plane serves Gateway Ref (DataPlane).
	ReasonUnprogrammed = "unprogrammed"
	// ReasonUnprogrammedV1beta2: kuadrant-operator v0.6.1 programs AuthPolicies on Istio
	// Gateways only, and another data plane serves Gateway Ref (DataPlane).
	ReasonUnprogrammedV1beta2 = "unprogrammed-v1beta2"
	// ReasonListenerHostname: the listener's hostname (Host) accepts none of the
	// route's hostnames (Hosts).
	ReasonListenerHostname = "listener-hostname"
	// ReasonHostClaimed: the older AuthPolicy Policy claims Host; Authorino does not
	// link it to this policy.
	ReasonHostClaimed = "host-claimed"
	// ReasonNoHostname: neither the route nor its Gateways' listeners name a hostname:
	// the AuthConfig has no host.
	ReasonNoHostname = "no-hostname"
	// ReasonCondition: the policy fails with the condition whose message is Message.
	ReasonCondition = "condition"
)

// ReasonCodes are every Reason code, for the test that render writes a sentence for each.
var ReasonCodes = []string{ReasonInvalid, ReasonNoGateway, ReasonNoListener, ReasonNoRoute, ReasonNoRule,
	ReasonGRPCRoute, ReasonUnsupportedKind, ReasonUnprogrammed, ReasonUnprogrammedV1beta2,
	ReasonListenerHostname, ReasonHostClaimed, ReasonNoHostname, ReasonCondition}
