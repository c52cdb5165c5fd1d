// Why a route does not attach to a listener, why a listener carries no routes and why a
// Gateway does not take a ListenerSet, as codes and names: topology writes no sentence of
// them, render does (render.AttachmentText, render.NotProgrammedText,
// render.ListenerSetReasonText; docs/architecture.md).

package topology

// NotProgrammed is why the data plane carries no routes on a listener, as data. Which
// fields are set depends on Why.
type NotProgrammed struct {
	// Why is a NotProgrammed* constant.
	Why string
	// Protocol is the listener's protocol (NotProgrammedProtocol).
	Protocol string
	// Kind is the unsupported route kind, "Kind.group" (NotProgrammedInvalidKinds).
	Kind string
	// Port is the port the conflicting listeners share (the conflicts).
	Port int32
	// Listener and Other are the two listeners of a Gateway's HostnameConflict, in spec
	// order; Other alone is the earlier listener a ListenerSet's listener yields to
	// (NotProgrammedSet*).
	Listener, Other string
	// Host is the hostname the conflicting listeners share (the hostname conflicts).
	Host string
}

// Why the data plane carries no routes on a listener (NotProgrammed.Why).
const (
	NotProgrammedProtocol            = "protocol"              // Protocol carries no HTTPRoutes
	NotProgrammedInvalidKinds        = "invalid-route-kinds"   // InvalidRouteKinds: allowedRoutes.kinds lists Kind
	NotProgrammedProtocolConflict    = "protocol-conflict"     // ProtocolConflict: TCP/UDP and HTTP/HTTPS/TLS listeners share Port
	NotProgrammedHostnameConflict    = "hostname-conflict"     // HostnameConflict: Listener and Other share Port and Host
	NotProgrammedSetProtocolConflict = "set-protocol-conflict" // ProtocolConflict: a ListenerSet's listener yields to Other on Port
	NotProgrammedSetHostnameConflict = "set-hostname-conflict" // HostnameConflict: a ListenerSet's listener yields to Other (Port, Host)
)

// AttachMiss is why a route does not attach to a listener (Attachment.Miss), as data.
// Which fields are set depends on Why.
type AttachMiss struct {
	// Why is an Attach* constant.
	Why string
	// SectionName is the parentRef's sectionName (AttachSectionName).
	SectionName string
	// Port is the parentRef's port, ListenerPort the listener's (AttachPort).
	Port, ListenerPort int32
	// Namespace is the route's namespace, ListenerNamespace that of the listener's owner
	// (AttachNotSameNamespace, AttachSelectorMismatch); ListenerSet is set when the owner
	// is a ListenerSet.
	Namespace, ListenerNamespace string
	ListenerSet                  bool
	// Selector is the listener's namespace selector (AttachSelectorMismatch); SelectorErr
	// is why LabelSelectorAsSelector refuses it, "" when from is Selector but no selector
	// is set (AttachSelectorUnusable).
	Selector, SelectorErr string
	// From is the listener's allowedRoutes namespaces from (AttachFromUnknown).
	From string
	// RouteHostnames are the route's hostnames, ListenerHost the listener's
	// (AttachHostnames).
	RouteHostnames []string
	ListenerHost   string
	// NotProgrammed is why the listener carries no routes (AttachListenerNotProgrammed).
	NotProgrammed *NotProgrammed
}

// Why a route does not attach to a listener (AttachMiss.Why), with the Gateway API route
// condition reason (Attachment.Reason) each goes with.
const (
	AttachSectionName           = "section-name"            // NoMatchingParent: the parentRef's SectionName selects another listener
	AttachPort                  = "port"                    // NoMatchingParent: the parentRef's Port is not ListenerPort
	AttachNotSameNamespace      = "not-same-namespace"      // NotAllowedByListeners: from Same, Namespace is not ListenerNamespace
	AttachSelectorUnusable      = "selector-unusable"       // NotAllowedByListeners: from Selector, the selector is unusable (SelectorErr)
	AttachSelectorMismatch      = "selector-mismatch"       // NotAllowedByListeners: Namespace does not match Selector
	AttachFromNone              = "from-none"               // NotAllowedByListeners: from None
	AttachFromUnknown           = "from-unknown"            // NotAllowedByListeners: a from Gateway API does not define
	AttachHostnames             = "hostnames"               // NoMatchingListenerHostname: RouteHostnames do not intersect ListenerHost
	AttachListenerNotProgrammed = "listener-not-programmed" // ListenerNotProgrammed: the listener carries no routes (NotProgrammed)
)

// ListenerSetMiss is why a Gateway does not take a ListenerSet (ListenerSetStatus.Miss),
// as data. Which fields are set depends on Why.
type ListenerSetMiss struct {
	// Why is a SetMiss* constant.
	Why string
	// Selector is the Gateway's allowedListeners selector (SetMissSelectorMismatch),
	// SelectorErr why it is invalid (SetMissSelectorInvalid).
	Selector, SelectorErr string
	// From is the Gateway's allowedListeners namespaces from (SetMissFromUnknown).
	From string
}

// Why a Gateway does not take a ListenerSet (ListenerSetMiss.Why), with the reason
// (ListenerSetStatus.Reason) each goes with.
const (
	SetMissNoParent         = "no-parent"         // ParentNotFound: spec.parentRef names no Gateway
	SetMissGatewayNotFound  = "gateway-not-found" // ParentNotFound: the Gateway is not in the input
	SetMissAgentic          = "agentic"           // NotSupported: the reference data plane reads no ListenerSets
	SetMissFromSame         = "from-same"         // NotAllowed: the Gateway takes ListenerSets of its namespace only
	SetMissSelectorMissing  = "selector-missing"  // NotAllowed: from Selector without a selector
	SetMissSelectorInvalid  = "selector-invalid"  // NotAllowed: the selector is invalid (SelectorErr)
	SetMissSelectorMismatch = "selector-mismatch" // NotAllowed: the namespace does not match Selector
	SetMissFromNone         = "from-none"         // NotAllowed: allowedListeners unset or from None
	SetMissFromUnknown      = "from-unknown"      // NotAllowed: a from Gateway API does not define
)

// ListenerSet status reasons agpol gives (ListenerSetStatus.Reason) besides Accepted.
const (
	ReasonParentNotFound = "ParentNotFound"
	ReasonNotSupported   = "NotSupported"
	ReasonNotAllowed     = "NotAllowed"
)
