// Why routing takes a request nowhere, and why a route rule or a backendRef answers 500,
// as codes and names: topology writes no sentence of them, render does (render.RouteMissText,
// render.RuleProblemText, render.BackendProblemText; docs/routing.md).

package topology

// RouteMiss is why routing takes a request to no route rule, as data (RouteResult.Miss).
// Which fields are set depends on Why.
type RouteMiss struct {
	// Why is a Miss* constant.
	Why string
	// Gateway is the gateway routed through.
	Gateway Ref
	// Host is the request's host, lower-cased, without its port.
	Host string
	// Listener is the listener named (MissListener*), or the one that took the request
	// (MissNoHostIsolated).
	Listener string
	// Port is the port asked for (MissNoListener, 0 for any; MissListenerPort), or the
	// port of the listener that took the request (MissNoHost).
	Port int
	// ListenerPort is the named listener's port (MissListenerPort).
	ListenerPort int
	// ListenerHost is the named listener's hostname (MissListenerHost).
	ListenerHost string
	// NotProgrammed is why the named listener carries no routes (MissListenerNotProgrammed).
	NotProgrammed *NotProgrammed
	// PlainHTTPPort is set (MissNoListener, MissListener*) when the port aimed at is
	// plain HTTP on the reference data plane: its single filter chain still accepts the
	// request, the gateway-level policies run, then the request finds no virtual host
	// (translator.go:340-356; RouteResult.Port).
	PlainHTTPPort int
	// Routes are the routes ("namespace/name") of the virtual host, VirtualHost its
	// domain, and Method and Path the request's (MissNoRule).
	Routes       []string
	VirtualHost  string
	Method, Path string
}

// Why routing takes a request to no route rule (RouteMiss.Why).
const (
	MissNoListener            = "no-listener"             // no programmed listener (on Port, when set) accepts Host
	MissListenerNotProgrammed = "listener-not-programmed" // the named Listener carries no routes (NotProgrammed)
	MissListenerPort          = "listener-port"           // the named Listener is on ListenerPort, not Port
	MissListenerHost          = "listener-host"           // the named Listener (ListenerHost) does not accept Host
	MissNoListenerNamed       = "no-listener-named"       // the gateway has no listener named Listener
	MissNoHost                = "no-host"                 // no route on Port serves Host: 404 (one route table per port)
	MissNoHostIsolated        = "no-host-isolated"        // no route of Listener serves Host: 404 (listeners isolated)
	MissNoRule                = "no-rule"                 // no rule of Routes (VirtualHost) matches Method Path: 404
)

// BackendProblem is why a backendRef fails to resolve, so that the data plane answers
// 500 for its rule (BackendTarget.Problem), as data. Which fields are set depends on Why.
type BackendProblem struct {
	// Why is a Broken* constant.
	Why string
	// Ref is the object: the Service (BrokenRefNotPermitted, BrokenService*), the
	// XBackend (BrokenXBackendNotFound), the backendRef's kind (BrokenKindUnsupported).
	Ref Ref
	// Of is the XBackend whose spec.mcp.serviceName names the Service Ref (Kind set; the
	// zero Ref for a Service backendRef).
	Of Ref
	// Route is the HTTPRoute whose backendRef crosses namespaces (BrokenRefNotPermitted).
	Route Ref
	// DataPlane is the Gateway's data plane (BrokenXBackendKind).
	DataPlane DataPlane
}

// Why a backendRef fails (BackendProblem.Why), with the Gateway API reason the data plane
// writes in the route's ResolvedRefs condition.
const (
	BrokenRefNotPermitted   = "ref-not-permitted"    // RefNotPermitted: a Service in another namespace without a ReferenceGrant
	BrokenXBackendNotFound  = "xbackend-not-found"   // BackendNotFound: the XBackend is not in a complete snapshot
	BrokenServiceNotFound   = "service-not-found"    // BackendNotFound: the Service is not in a complete snapshot
	BrokenServiceNotInInput = "service-not-in-input" // BackendNotFound: the input carries Services of Ref's namespace, not this one
	BrokenXBackendKind      = "xbackend-kind"        // InvalidKind: an XBackend on a Gateway of another data plane
	BrokenKindUnsupported   = "kind-unsupported"     // InvalidKind: a kind the data plane does not serve
)

// RuleProblem is why the data plane answers 500 for a whole route rule (RouteResult.
// RuleProblem, Path.RuleProblem), as data: a backendRef that fails (weight 0 included),
// or no backendRef with a weight above 0 (httproute.go:105-113, 342-347).
type RuleProblem struct {
	// Why is RuleBackendFails or RuleNoWeight.
	Why string
	// BackendRef is the index of the first failing backendRef in the rule, Backend why it
	// fails (RuleBackendFails).
	BackendRef int
	Backend    *BackendProblem
}

// Why a route rule answers 500 (RuleProblem.Why).
const (
	RuleBackendFails = "backend-ref-fails"   // backendRefs[BackendRef] fails (Backend)
	RuleNoWeight     = "no-weighted-backend" // no backendRef has a weight above 0
)
