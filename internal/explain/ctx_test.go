package explain

// newCtx is a request prepared for matching with caller principal and port.
func newCtx(r *Request, principal string, port int) *reqCtx {
	c := &reqCtx{}
	c.init(r, principal, port)
	return c
}
