package explain

import (
	"sync"

	"github.com/google/cel-go/interpreter"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/topology"
)

// Query is a request prepared once for many untraced decisions (Query.Decide: the
// decision space's form of Decider, on a chain it names rather than a routed path) by any number
// of callers on any number of chains: what matching reads, derived from the request
// and its listener's port, and the authorizer answers. The CEL results are kept
// (nothing CEL reads depends on the caller), so a Query must not be used by several
// goroutines at once; the CEL variables of a request without headers or time are built
// once per simulator and shared by all its queries.
type Query struct {
	c   reqCtx
	ans ExtAuth
	sim *Simulator
	buf []byte // scratch for the caller's principal
}

// Query prepares r (normalized in place, as Explain does) for Decide. The port is
// r.HTTP.Port, or else that of r's listener on r's gateway, as Explain takes it.
func (sim *Simulator) Query(r *Request) *Query {
	r.Normalize()
	urlPath, port := topology.URLPath(r.HTTP.Path), r.HTTP.Port
	if port == 0 && r.Gateway != nil {
		l, _ := sim.Graph.Listener(topology.GatewayRef(r.Gateway.Namespace, r.Gateway.Name), r.Listener) // its own or a ListenerSet's
		port = int(l.Port)
	}
	q := &Query{ans: r.ExtAuth, sim: sim}
	q.c.init(r, urlPath, "", port)
	if len(q.c.headers) == 0 && q.c.time.IsZero() {
		q.c.cel.act = sim.activations.get(&q.c)
	}
	return q
}

// activationCache keeps CEL activations (read-only once built, so safe to share between
// goroutines) by what they hold of a request without headers or time.
type activationCache struct {
	mu sync.Mutex
	m  map[activationKey]interpreter.Activation
}

type activationKey struct {
	method, path, host   string
	hasMCP               bool
	mcpMethod, tool, uri string
}

// get returns the activation of c, which has no headers and no time.
func (ac *activationCache) get(c *reqCtx) interpreter.Activation {
	k := activationKey{method: c.httpMethod, path: c.path, host: c.host, hasMCP: c.hasMCP, mcpMethod: c.mcpMethod, tool: c.tool, uri: c.uri}
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if a, ok := ac.m[k]; ok {
		return a
	}
	if ac.m == nil {
		ac.m = map[activationKey]interpreter.Activation{}
	}
	a := c.activation()
	ac.m[k] = a
	return a
}

// Decide decides q, made by the caller with the given peer principal, on a compiled
// chain (effective.Engine.Chain, as Simulator.Engines compile them) without a trace,
// and finishes the decision with the path's end (TargetEnd). The principal is ""
// without a client certificate, as for every caller on a plain-HTTP listener (where
// Explain drops it). The verdict, level, deciding rule, explicitness and per-answer
// branches are those Explain gives the same request on the same path under the chain's
// semantics; Reason and Trace stay empty, and no string is built for them. A caller
// holding a CA-signed certificate without a SPIFFE ID gives CertificatePrincipal.
func (q *Query) Decide(chain *effective.Chain, principal string, end *PathEnd) Decision {
	cert := svidCert
	switch principal {
	case "":
		cert = noCert
	case CertificatePrincipal:
		cert, principal = caCert, ""
	}
	q.c.setPrincipal(principal)
	cc := q.sim.programOf(chain)
	var rq reqSyms
	q.buf = q.sim.syms.lookup(&q.c, q.buf, &rq) // after compiling: sees the chain's symbols
	d := decide(cc, rq, &q.c, q.ans, false, nil)
	end.finish(&d, false, cert)
	return d
}
