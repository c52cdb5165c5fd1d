package explain

import "github.com/agpol/agpol/internal/topology"

// newCtx is a request prepared for matching with caller principal and port.
func newCtx(r *Request, principal string, port int) *reqCtx {
	c := &reqCtx{}
	c.init(r, topology.URLPath(r.HTTP.Path), principal, port)
	return c
}
