package render

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/topology"
)

// listenerAssumed is the note of a request that named no listener and no port on a
// gateway where agpol chose between a plain-HTTP and an HTTPS listener (topology's
// ListenerChoice), for the caller as the request names it; "" when there was no choice.
func listenerAssumed(r *explain.Result) string {
	p := &r.Path
	if p.ListenerAssumed != "" || p.ListenerChoice == nil {
		return p.ListenerAssumed
	}
	c := p.ListenerChoice
	if c.Identity {
		return fmt.Sprintf("no listener or port given: the caller %s presents its identity over mTLS, so it arrives on HTTPS listener %s (port %d), not on plain-HTTP listener %s (port %d)",
			r.Request.From.String(), c.Picked.Name, c.Picked.Port, c.Other.Name, c.Other.Port)
	}
	return fmt.Sprintf("no listener or port given: an anonymous caller arrives on plain-HTTP listener %s (port %d), not on HTTPS listener %s (port %d)",
		c.Picked.Name, c.Picked.Port, c.Other.Name, c.Other.Port)
}

// ignoredMethodText is the routing step of a rule that takes a request whose method its
// match does not name.
func ignoredMethodText(m *topology.IgnoredMethod) string {
	return fmt.Sprintf("HTTPRoute %s rule %s matches method %s only, yet takes this %s request: the data plane does not check HTTPRoute method matches (the kube-agentic-networking translator drops them)",
		m.Route, m.Rule, m.Method, m.RequestMethod)
}

// RouteMissText is why routing takes a request to no route rule (topology.RouteMiss):
// no listener takes it, or no route or rule does (404); "" for nil.
func RouteMissText(m *topology.RouteMiss) string {
	if m == nil {
		return ""
	}
	gw := m.Gateway.Namespace + "/" + m.Gateway.Name
	var s string
	switch m.Why {
	case topology.MissNoHost:
		return fmt.Sprintf("no route attached to Gateway %s on port %d serves host %q (404)", gw, m.Port, m.Host)
	case topology.MissNoHostIsolated:
		return fmt.Sprintf("no route attached to listener %s of Gateway %s serves host %q (listeners are isolated: the most specific listener takes the request) (404)", m.Listener, gw, m.Host)
	case topology.MissNoRule:
		return fmt.Sprintf("no rule of HTTPRoute %s (host %s) matches %s %s (404)", strings.Join(m.Routes, ", "), m.VirtualHost, m.Method, m.Path)
	case topology.MissNoListener:
		s = fmt.Sprintf("no listener of Gateway %s accepts host %q", gw, m.Host)
		if m.Port != 0 {
			s = fmt.Sprintf("no listener of Gateway %s on port %d accepts host %q", gw, m.Port, m.Host)
		}
	case topology.MissListenerNotProgrammed:
		s = fmt.Sprintf("listener %s of Gateway %s carries no routes: %s", m.Listener, gw, NotProgrammedText(m.NotProgrammed))
	case topology.MissListenerPort:
		s = fmt.Sprintf("listener %s of Gateway %s is on port %d, not %d", m.Listener, gw, m.ListenerPort, m.Port)
	case topology.MissListenerHost:
		s = fmt.Sprintf("listener %s of Gateway %s (hostname %s) does not accept host %q", m.Listener, gw, m.ListenerHost, m.Host)
	case topology.MissNoListenerNamed:
		s = fmt.Sprintf("Gateway %s has no listener named %s", gw, m.Listener)
	default:
		s = m.Why
	}
	if m.PlainHTTPPort != 0 {
		s += fmt.Sprintf(" (port %d is plain HTTP: its single filter chain still accepts the request, gateway-level policies run, then 404)", m.PlainHTTPPort)
	}
	return s
}
