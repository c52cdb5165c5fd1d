package explain

import "github.com/agpol/agpol/internal/effective"

// Query is a request prepared once for many untraced decisions (Decide): what matching
// reads, derived from the request, the caller's peer principal and the listener port,
// plus the authorizer answers. Queries derived with WithPrincipal share the CEL
// variables and results (nothing CEL reads depends on the caller), so a Query and the
// Queries derived from it must not be used by several goroutines at once.
type Query struct {
	c   reqCtx
	ans ExtAuth
}

// Query prepares r (normalized in place, as Explain does) for Decide. principal is the
// peer principal the data plane sees: "" without a client certificate, which is what
// every caller presents on a plain-HTTP listener (Explain drops the principal there;
// the caller of Query decides). The port is r.HTTP.Port, or else that of r's listener
// on r's gateway, as Explain takes it.
func (sim *Simulator) Query(r *Request, principal string) *Query {
	r.Normalize()
	port := r.HTTP.Port
	if port == 0 {
		port = sim.listenerPort(r, PathInfo{Listener: r.Listener})
	}
	return &Query{c: *newCtx(r, principal, port), ans: r.ExtAuth}
}

// WithPrincipal returns the same request made by another caller. The two Queries share
// their CEL variables and results.
func (q *Query) WithPrincipal(principal string) *Query {
	if q.c.cel == nil {
		q.c.cel = &celShared{}
	}
	n := *q
	n.c.principal = principal
	return &n
}

// Decide decides q on a compiled chain (effective.Engine.Chain, as Simulator.Engines
// compile them) without a trace: the verdict, level, deciding rule, explicitness and
// per-answer branches are those Explain gives the same request on the same path under
// the chain's semantics; Reason and Trace stay empty, and no string is built for them.
func Decide(chain *effective.Chain, q *Query) Decision {
	return decide(chain, &q.c, q.ans, false, nil)
}
