package topology

import (
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ListenerFacts is what a request meets at one listener of a Gateway: its own listeners
// and those ListenerSets add (named "namespace/listenerset/listener").
type ListenerFacts struct {
	Name     string
	Port     int32
	Protocol gwapiv1.ProtocolType
}

// Listener returns the listener of a Gateway by the name routing gives it (a Gateway's
// own listener, or ListenerSetListenerName), false when the Gateway has none of that name.
func (g *Graph) Listener(gw Ref, name string) (ListenerFacts, bool) {
	gi := g.gatewayIndex(gw)
	if gi == nil || name == "" {
		return ListenerFacts{}, false
	}
	for _, li := range gi.listeners {
		if li.name == name {
			return ListenerFacts{Name: li.name, Port: li.port, Protocol: li.protocol}, true
		}
	}
	return ListenerFacts{}, false
}

// ClientCertificate is what the TLS handshake of a listener asks of a caller
// (docs/routing.md, "The TLS handshake"). The kube-agentic-networking translator
// (c7e4194 pkg/translator/listener.go:684-730, buildDownstreamTLSContext) sets
// RequireClientCertificate on the downstream TLS context of every HTTPS and TLS
// listener and validates the certificate against the CA the Gateway's
// spec.tls.frontend names for the listener's port (perPort first, else default; the
// first caCertificateRef, translator.go:409-444) or, without one, against the SPIFFE
// trust bundle. Other data planes: agpol does not model their handshake (Required false).
type ClientCertificate struct {
	Required bool
	// CA is the trust anchor that validates the certificate, "Kind namespace/name";
	// "" for the SPIFFE trust bundle.
	CA string
}

// ClientCertificate is the handshake of a Gateway's listener (by routing name).
func (g *Graph) ClientCertificate(gw Ref, listener string) ClientCertificate {
	gi := g.gatewayIndex(gw)
	if gi == nil || !gi.plane.Agentic() {
		return ClientCertificate{}
	}
	l, ok := g.Listener(gw, listener)
	if !ok || (l.Protocol != gwapiv1.HTTPSProtocolType && l.Protocol != gwapiv1.TLSProtocolType) {
		return ClientCertificate{}
	}
	cc := ClientCertificate{Required: true}
	spec := gi.gw.Spec.TLS
	if spec == nil || spec.Frontend == nil {
		return cc
	}
	var refs []gwapiv1.ObjectReference
	matched := false
	for _, p := range spec.Frontend.PerPort {
		if p.Port == gwapiv1.PortNumber(l.Port) {
			matched = true
			if p.TLS.Validation != nil {
				refs = p.TLS.Validation.CACertificateRefs
			}
			break
		}
	}
	if !matched && spec.Frontend.Default.Validation != nil {
		refs = spec.Frontend.Default.Validation.CACertificateRefs
	}
	if len(refs) > 0 {
		r := refs[0]
		ns := gi.gw.Namespace
		if r.Namespace != nil && *r.Namespace != "" {
			ns = string(*r.Namespace)
		}
		cc.CA = string(r.Kind) + " " + ns + "/" + string(r.Name)
	}
	return cc
}
