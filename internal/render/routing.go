package render

import (
	"fmt"

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
