package explain

import (
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// DecidedTLSHandshake: the caller fails the TLS handshake of the listener (no client
// certificate, or one the listener's trust anchor does not validate): the connection
// closes before any HTTP request, so no route or policy is consulted.
const DecidedTLSHandshake = "tls-handshake"

// certKind is the client certificate a caller presents in the TLS handshake.
type certKind uint8

const (
	noCert   certKind = iota // anonymous: no client certificate
	svidCert                 // a SPIFFE SVID (sa:, spiffe://)
	caCert                   // a CA-signed certificate without a SPIFFE ID (cert:)
)

// certOf is the certificate caller c presents.
func certOf(c Caller) certKind {
	switch c.Kind {
	case CallerServiceAccount, CallerSPIFFE:
		return svidCert
	case CallerCertificate:
		return caCert
	}
	return noCert
}

// CertificatePrincipal stands, in Decide's principal, for a caller holding a CA-signed
// certificate without a SPIFFE ID (cert:): it passes the handshake of a listener that
// CA validates, and no rule names it. It is not a SPIFFE ID, so no rule matches it.
const CertificatePrincipal = "x509:<certificate without a SPIFFE ID>"

// PathEnd is what decides a call on one path beside the chain's verdict. Every decision
// explain, simulate and the decision space of can-i, who-can, matrix and diff make on a
// path is finished by its PathEnd (finish), in one order.
type PathEnd struct {
	// refused is set when the data plane answers the request itself (DecidedNoRoute,
	// DecidedNoBackend), noBackend says why (nil untraced, or for no route).
	refused   string
	noBackend *topology.NoBackend
	// unread are the kinds a live read could not read that the decision depends on.
	unread []snapshot.Warning
	// authPolicy is what Kuadrant's effective AuthPolicy asks of the request on a
	// routed path of a Gateway another data plane serves: it decides there.
	authPolicy *AuthPolicyInfo
	// authPolicies are the AuthPolicies that decide on a Gateway another data plane
	// serves but that agpol cannot evaluate (the request names the backend, not the
	// route; the decision space's callers present no credentials).
	authPolicies []string
	// uncertain says why Envoy may route the request otherwise than agpol did.
	uncertain *topology.RegexDiffers
	// listener and clientCert are the listener of the path and what its TLS handshake
	// asks of a client certificate (topology.ClientCertificate).
	listener   string
	clientCert topology.ClientCertificate
}

// handshakeFails says why a caller presenting cert fails the TLS handshake of the
// path's listener (a Handshake* constant), "" when it passes (docs/routing.md, "The TLS
// handshake").
func (e *PathEnd) handshakeFails(cert certKind) string {
	if !e.clientCert.Required {
		return ""
	}
	switch {
	case cert == noCert:
		return HandshakeNoCertificate
	case cert == caCert && e.clientCert.CA == "":
		return HandshakeNotSVID
	}
	return ""
}

// handshakeCA is the CA agpol assumes issued the caller's SVID on a listener that
// validates client certificates against its own CA, not the SPIFFE trust bundle; ""
// when it assumes nothing.
func (e *PathEnd) handshakeCA(cert certKind) string {
	if e.clientCert.Required && cert == svidCert && e.clientCert.CA != "" {
		return e.clientCert.CA
	}
	return ""
}

// finish turns the chain's verdict d into the decision the caller gets, in this order:
// the TLS handshake of the listener (a caller presenting cert that fails it makes no
// request), the data plane's own refusal (no route, no backend), then objects agpol
// could not read (indeterminate), then, on a Gateway another data plane serves,
// Kuadrant's AuthPolicy. traced says whether d is traced: only then are causes and
// steps recorded.
func (e *PathEnd) finish(d *Decision, traced bool, cert certKind) {
	if why := e.handshakeFails(cert); why != "" {
		*d = Decision{Verdict: Deny, Level: string(effective.LevelGateway), DecidedBy: DecidedTLSHandshake, Semantics: d.Semantics}
		if traced {
			d.Cause = &Cause{Event: CauseTLSHandshake, Listener: e.listener, Handshake: why}
			d.Trace = []Step{{Level: string(effective.LevelGateway), Phase: "tls", Outcome: OutcomeNotMatched, Event: EventTLSHandshakeFails, Listener: e.listener, Handshake: why}}
		}
		return
	}
	if traced {
		if ca := e.handshakeCA(cert); ca != "" {
			d.Trace = append([]Step{{Level: string(effective.LevelGateway), Phase: "tls", Outcome: OutcomeInfo, Event: EventTLSCAAssumed, Listener: e.listener, CA: ca}}, d.Trace...)
		}
	}
	if e.refused != "" {
		refuse(d, e.refused, e.noBackend, traced)
	}
	if e.uncertain != nil {
		*d = uncertainRoute(*d, e.uncertain)
	}
	if len(e.unread) > 0 {
		*d = UnreadDecision(*d, e.unread)
	}
	if e.authPolicy != nil {
		kuadrantDecides(d, e.authPolicy, traced)
	}
	if len(e.authPolicies) > 0 {
		authPolicyUnevaluated(d, e.authPolicies, traced)
	}
}

// TargetEnd is the PathEnd of a routed path of the decision space: through gw's
// listener on the given routes ("ns/name") to a backend in namespace backendNS, for
// callers whose credentials are not known.
func (sim *Simulator) TargetEnd(gw *snapshot.Gateway, listener string, routes []string, backendNS string) PathEnd {
	e := PathEnd{authPolicies: sim.AuthPoliciesOn(gw, listener, routes), listener: listener}
	if gw != nil {
		e.unread = Unread(sim.Snapshot, gw.Namespace, backendNS)
		e.clientCert = sim.Graph.ClientCertificate(topology.GatewayRef(gw.Namespace, gw.Name), listener)
	}
	return e
}

// pathEnd is the PathEnd of choice ch of request r, routed in rt; ap is the AuthPolicy
// view of the path when computed (on another data plane, or when asked for).
func (sim *Simulator) pathEnd(r *Request, rt *routing, ch *choice, ap *AuthPolicyInfo) PathEnd {
	e := PathEnd{refused: ch.refused, noBackend: ch.noBackend, unread: sim.unread(rt.gw, ch), listener: ch.info.Listener, uncertain: ch.uncertain}
	if rt.agentic {
		if rt.gw != nil && ch.info.Protocol != string(gwapiv1.HTTPProtocolType) {
			e.clientCert = sim.Graph.ClientCertificate(topology.GatewayRef(rt.gw.Namespace, rt.gw.Name), ch.info.Listener)
		}
		return e
	}
	e.authPolicy = ap
	if ap == nil && ch.info.Route == "" && ch.info.Backend != "" {
		// The request names the backend, not the route: the AuthPolicies of the routes
		// to it decide, with credentials agpol does not know.
		e.authPolicies = sim.authPoliciesToward(rt.gw, ch.info.Listener, ch.info.Backend)
	}
	return e
}

// authPolicyOf is the AuthPolicy view of choice ch when the decision needs it (on a
// Gateway another data plane serves) or the caller asks for it (want).
func (sim *Simulator) authPolicyOf(r *Request, rt *routing, ch *choice, want bool) *AuthPolicyInfo {
	if rt.agentic && !want {
		return nil
	}
	return sim.authPolicyFor(r, ch.info)
}

// refuse turns the decision on a path that reaches no backend (refused: DecidedNoRoute,
// DecidedNoBackend, nb saying why) into the deny the caller gets: a gateway-level deny
// stands (403 before routing); an allow or an answer that waits on the authorizer
// becomes a deny by the data plane's own answer, since neither authorizer answer lets
// the call reach a tool.
func refuse(d *Decision, refused string, nb *topology.NoBackend, traced bool) {
	if d.Verdict == Deny {
		return
	}
	was, wasBy := d.Verdict, d.DecidedBy
	d.Verdict, d.Explicit, d.Level, d.DecidedBy, d.Branches = Deny, false, string(effective.LevelGateway), refused, nil
	if !traced {
		return // no text
	}
	before := BeforeAllowed
	switch {
	case wasBy == DecidedOtherDataPlane:
		before = BeforeOtherDataPlane
	case was == Indeterminate:
		before = BeforeIndeterminate
	}
	seeLast := nb != nil && refused != DecidedNoRoute
	if refused == DecidedNoRoute && (nb == nil || len(nb.HostsThatRoute) == 0) {
		nb = nil // the routing step says why; the decision says 404
	}
	d.Reason, d.Cause = "", &Cause{Event: CauseRefused, NoBackend: nb, Before: before}
	// The reason is said once, where it decides: the routing step that stated it before
	// the gateway-level policies ran points here instead.
	for i, s := range d.Trace {
		if seeLast && s.Event == EventNoBackend {
			d.Trace[i].Event = EventNoBackendSeeLast
		}
	}
	d.Trace = append(d.Trace, Step{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo, Event: EventRefused, NoBackend: nb, Before: before})
}
