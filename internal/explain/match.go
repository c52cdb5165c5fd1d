package explain

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/interpreter"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/topology"
)

// reqCtx is a request prepared for matching: everything derived once.
type reqCtx struct {
	// principal is the caller's peer principal ("" without a client certificate),
	// unless saNS is set: then it is the SPIFFE ID of a service account,
	// "spiffe://" + td + "/ns/" + saNS + "/sa/" + saName, kept in pieces so that
	// preparing a request builds no string (see principalIs, principalString).
	principal    string
	td           string
	saNS, saName string
	hasMCP       bool
	toolsCall    bool
	mcpMethod    string
	tool         string
	uri          string
	httpMethod   string
	path         string // with query
	urlPath      string // without query
	host         string // :authority as sent
	hostname     string // host without port, lower-case: made on first use (hostnameOf)
	hostnameSet  bool
	port         int
	headers      map[string]string
	time         time.Time

	// cel holds the CEL variables and results, built on first use; nothing in it
	// depends on the caller, so a Query keeps it across callers.
	cel celState

	// steps is where a traced decision records its steps (evaluate), kept by init.
	steps []Step
}

// celState is what CEL evaluation derives from a request, built on first use.
type celState struct {
	act     interpreter.Activation
	results map[*effective.CELCondition]celResult
	// overBudget lists the conditions whose evaluation ran past the runtime cost budget
	// that the decision under way read (decideCEL).
	overBudget []*effective.CELCondition
}

// readOverBudget records that the decision under way read cond, over the budget.
func (s *celState) readOverBudget(cond *effective.CELCondition) {
	if !slices.Contains(s.overBudget, cond) {
		s.overBudget = append(s.overBudget, cond)
	}
}

type celResult struct {
	v bool
	// fail is why the evaluation gave no answer (a non-match), nil when it gave one.
	fail *CELFailure
	// overBudget: the evaluation ran past effective.CELCostLimit, so its outcome is
	// unknown (Envoy evaluates without a limit); fail says so.
	overBudget bool
}

// init prepares c for matching request r, whose path without query is urlPath
// (topology.Resolution.URLPath), made by a caller with the given principal on port.
func (c *reqCtx) init(r *Request, urlPath, principal string, port int) {
	*c = reqCtx{principal: principal, httpMethod: r.HTTP.Method, path: r.HTTP.Path, urlPath: urlPath, host: r.HTTP.Host,
		headers: r.HTTP.Headers, time: r.HTTP.Time, port: port, steps: c.steps}
	if r.MCP != nil {
		c.hasMCP = true
		c.mcpMethod, c.tool, c.uri = r.MCP.Method, r.MCP.Tool, r.MCP.URI
		c.toolsCall = c.mcpMethod == "tools/call"
	}
	// IndexByte first: it is vectorised, LastIndexByte is not, and most hosts have no port.
	if c.port == 0 && strings.IndexByte(c.host, ':') >= 0 {
		if i := strings.LastIndexByte(c.host, ':'); !strings.Contains(c.host[i:], "]") {
			c.port, _ = strconv.Atoi(c.host[i+1:])
		}
	}
}

// hostnameOf is the request's host without port, lower-case. It is made on first use:
// only L7 host matches read it, and lower-casing a host is a good part of preparing a
// request.
func (c *reqCtx) hostnameOf() string {
	if !c.hostnameSet {
		c.hostname, c.hostnameSet = strings.ToLower(topology.StripPort(c.host)), true
	}
	return c.hostname
}

// initCaller is init for the caller r.From as the data plane sees it: anonymous when
// noCert (a plain-HTTP listener has no client certificate), else r.From's principal
// under trust domain td, which for a service account is not built (see principal).
func (c *reqCtx) initCaller(r *Request, urlPath, td string, noCert bool, port int) {
	switch {
	case noCert:
		c.init(r, urlPath, "", port)
	case r.From.Kind == CallerServiceAccount && r.From.Namespace != "" && r.From.Name != "":
		// (An incomplete service account, built in code, takes the string path below:
		// its pieces would read as anonymous.)
		c.init(r, urlPath, "", port)
		c.td, c.saNS, c.saName = td, r.From.Namespace, r.From.Name
	default:
		c.init(r, urlPath, r.From.Principal(td), port)
	}
}

// setPrincipal makes the caller principal p ("" without a client certificate).
func (c *reqCtx) setPrincipal(p string) {
	c.principal, c.td, c.saNS, c.saName = p, "", "", ""
}

// principalIs reports whether the caller's principal is v, without building it.
func (c *reqCtx) principalIs(v string) bool {
	if c.saNS == "" {
		return v == c.principal
	}
	const scheme, nsSep, saSep = "spiffe://", "/ns/", "/sa/"
	if len(v) != len(scheme)+len(c.td)+len(nsSep)+len(c.saNS)+len(saSep)+len(c.saName) {
		return false
	}
	for _, part := range [...]string{scheme, c.td, nsSep, c.saNS, saSep, c.saName} {
		if v[:len(part)] != part {
			return false
		}
		v = v[len(part):]
	}
	return true
}

// principalString is the caller's principal ("" without a client certificate).
func (c *reqCtx) principalString() string {
	if c.saNS == "" {
		return c.principal
	}
	return effective.SPIFFEID(c.td, c.saNS, c.saName)
}

// activation builds the CEL variables once per request.
func (c *reqCtx) activation() interpreter.Activation {
	if c.cel.act != nil {
		return c.cel.act
	}
	h := make(map[string]string, len(c.headers))
	for k, v := range c.headers {
		h[k] = v
	}
	req := map[string]any{
		"path": c.path, "url_path": c.urlPath, "method": c.httpMethod, "host": c.host, "headers": h,
	}
	if !c.time.IsZero() {
		req["time"] = c.time
	}
	fm := map[string]any{}
	if c.hasMCP {
		params := map[string]any{}
		if c.tool != "" {
			params["name"] = c.tool
		}
		if c.uri != "" {
			params["uri"] = c.uri
		}
		fm["mcp_proxy"] = map[string]any{"method": c.mcpMethod, "params": params}
	}
	act, err := interpreter.NewActivation(map[string]any{"request": req, "metadata": map[string]any{"filter_metadata": fm}})
	if err != nil {
		panic(err) // a map is always a valid activation
	}
	c.cel.act = act
	return act
}

// matchPrincipal reports whether the caller is selected; mm (when non-nil) says why not.
func matchPrincipal(p *effective.Principal, c *reqCtx, mm *Mismatch) bool {
	switch {
	case p.None:
		if mm != nil {
			*mm = Mismatch{Field: "source", Test: "nobody", Principal: p}
		}
		return false
	case p.Any:
		return true
	case c.principalIs(p.Value):
		return true
	}
	if mm != nil {
		*mm = Mismatch{Field: "source", Wants: p.Value, Saw: c.principalString()}
		if p.DefaultedNamespace != "" {
			mm.Test, mm.Note = "namespace-defaulted", p.DefaultedNamespace
		}
	}
	return false
}

func matchMethod(m *effective.MethodMatcher, c *reqCtx) bool {
	if !c.hasMCP {
		return false
	}
	if m.Prefix {
		if !strings.HasPrefix(c.mcpMethod, m.Name) {
			return false
		}
	} else if c.mcpMethod != m.Name {
		return false
	}
	if len(m.Params) == 0 {
		return true
	}
	for _, p := range m.Params {
		if p == c.tool && c.tool != "" {
			return true
		}
	}
	return false
}

func matchBase(c *reqCtx) bool {
	if c.httpMethod == "GET" {
		return true
	}
	if c.httpMethod == "DELETE" {
		if _, ok := c.headers["mcp-session-id"]; ok {
			return true
		}
	}
	if !c.hasMCP {
		return false
	}
	switch c.mcpMethod {
	case "initialize", "tools/list", "ping":
		return true
	}
	return strings.HasPrefix(c.mcpMethod, "completion/") || strings.HasPrefix(c.mcpMethod, "logging/") ||
		strings.HasPrefix(c.mcpMethod, "notifications/")
}

// evalCEL evaluates a compiled condition once per request (the result does not depend
// on the caller); an error (missing key) is a non-match. An evaluation over the runtime
// cost budget is a non-match too, marked so that decideCEL decides both ways.
func evalCEL(cond *effective.CELCondition, c *reqCtx) (bool, *CELFailure) {
	act := c.activation()
	if r, ok := c.cel.results[cond]; ok {
		if r.overBudget {
			c.cel.readOverBudget(cond)
		}
		return r.v, r.fail
	}
	var r celResult
	out, _, err := cond.Program.Eval(act)
	switch {
	case err != nil && effective.CELOverBudget(err):
		r.overBudget = true
		c.cel.readOverBudget(cond)
		r.fail = &CELFailure{Why: CELFailOverBudget, Limit: effective.CELCostLimit}
	case err != nil:
		r.fail = &CELFailure{Why: CELFailEval, Err: err.Error()}
	default:
		b, ok := out.Value().(bool)
		if !ok {
			r.fail = &CELFailure{Why: CELFailNotBool, Type: out.Type().TypeName()}
		}
		r.v = b
	}
	if c.cel.results == nil {
		c.cel.results = map[*effective.CELCondition]celResult{}
	}
	c.cel.results[cond] = r
	return r.v, r.fail
}

// matchPermission reports whether the request is permitted; mm (when non-nil) says why not.
func matchPermission(p *effective.Permission, c *reqCtx, mm *Mismatch) bool {
	ok := false
	switch {
	case p.Any:
		ok = true
	case p.NotToolsCall && !c.toolsCall:
		ok = true
	}
	if !ok && p.CEL != nil {
		if p.ToolsCallOnly && !c.toolsCall {
			if mm != nil {
				*mm = Mismatch{Field: "cel", Test: "tools-call-only", Wants: p.CEL.Expression, Saw: c.call()}
			}
			return false
		}
		res, fail := evalCEL(p.CEL, c)
		if fail != nil {
			if mm != nil {
				*mm = Mismatch{Field: "cel", Test: "error", Wants: p.CEL.Expression, Saw: c.call(), CEL: fail}
			}
			return false
		}
		if !res {
			if mm != nil {
				*mm = Mismatch{Field: "cel", Test: "false", Wants: p.CEL.Expression, Saw: c.call()}
			}
			return false
		}
		ok = true
	}
	if !ok {
		for i := range p.Methods {
			if matchMethod(&p.Methods[i], c) {
				ok = true
				break
			}
		}
	}
	if !ok && p.Base && matchBase(c) {
		ok = true
	}
	if !ok {
		for _, m := range p.HTTPMethods {
			if m == c.httpMethod {
				ok = true
			}
		}
	}
	if !ok && p.SessionClose && c.httpMethod == "DELETE" {
		_, ok = c.headers["mcp-session-id"]
	}
	if !ok {
		if mm != nil {
			*mm = Mismatch{Field: "mcp", Wants: p, Saw: c.call()}
		}
		return false
	}
	if p.L7 != nil {
		return matchL7(p.L7, c, mm)
	}
	return true
}

// call is what a permission sees of the request.
func (c *reqCtx) call() Call {
	return Call{MCP: c.hasMCP, Method: c.mcpMethod, Tool: c.tool, HTTPMethod: c.httpMethod, Path: c.path}
}

func matchL7(m *effective.L7Match, c *reqCtx, mm *Mismatch) bool {
	// fail records f when tracing; f builds the Mismatch only then (its values box).
	fail := func(f func() Mismatch) bool {
		if mm != nil {
			*mm = f()
		}
		return false
	}
	if len(m.Methods) > 0 && !contains(m.Methods, c.httpMethod) {
		return fail(func() Mismatch { return Mismatch{Field: "methods", Wants: m.Methods, Saw: c.httpMethod} })
	}
	if len(m.Paths) > 0 {
		ok := false
		for _, p := range m.Paths {
			if matchPath(p, c.urlPath) {
				ok = true
				break
			}
		}
		if !ok {
			return fail(func() Mismatch { return Mismatch{Field: "paths", Wants: m.Paths, Saw: c.urlPath} })
		}
	}
	for _, h := range m.Headers {
		v, present := c.headers[h.Name]
		switch {
		case !present:
			return fail(func() Mismatch { return Mismatch{Field: "headers", Test: "absent", Name: h.Name, Wants: h.Value} })
		case h.Re != nil && !h.Re.MatchString(v):
			return fail(func() Mismatch {
				return Mismatch{Field: "headers", Test: "regex", Name: h.Name, Wants: h.Value, Saw: v}
			})
		case h.Re == nil && h.Type != "RegularExpression" && v != h.Value:
			return fail(func() Mismatch {
				return Mismatch{Field: "headers", Test: "value", Name: h.Name, Wants: h.Value, Saw: v}
			})
		case h.Re == nil && h.Type == "RegularExpression":
			return fail(func() Mismatch {
				return Mismatch{Field: "headers", Test: "invalid", Name: h.Name, Wants: h.Value, Saw: v}
			})
		}
	}
	if len(m.Hosts) > 0 {
		ok := false
		hostname := c.hostnameOf()
		for _, h := range m.Hosts {
			if hostMatches(h, hostname) {
				ok = true
				break
			}
		}
		if !ok {
			return fail(func() Mismatch { return Mismatch{Field: "hosts", Wants: m.Hosts, Saw: hostname} })
		}
	}
	if len(m.Ports) > 0 {
		ok := false
		for _, p := range m.Ports {
			if int(p) == c.port {
				ok = true
			}
		}
		if !ok {
			return fail(func() Mismatch { return Mismatch{Field: "ports", Wants: m.Ports, Saw: c.port} })
		}
	}
	return true
}

func matchPath(p effective.PathMatcher, path string) bool {
	switch p.Type {
	case "Exact":
		return path == p.Value
	case "RegularExpression":
		return p.Re != nil && p.Re.MatchString(path)
	}
	prefix := strings.TrimRight(p.Value, "/")
	if prefix == "" {
		return true
	}
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func hostMatches(pattern, host string) bool {
	if strings.HasPrefix(pattern, "*.") {
		suffix := pattern[1:]
		return strings.HasSuffix(host, suffix) && len(host) > len(suffix)
	}
	return pattern == host
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// matchRule is principal AND permission.
func matchRule(r *effective.Rule, c *reqCtx, mm *Mismatch) bool {
	return matchPrincipal(&r.Principal, c, mm) && matchPermission(&r.Permission, c, mm)
}
