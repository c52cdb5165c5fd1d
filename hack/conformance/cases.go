// Reading the tests' tables: each test, its cases, their requests and expected answers.

package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"
)

// test reads one ConformanceTest literal.
func (r *resolver) test(cl *ast.CompositeLit) *test {
	t := &test{}
	var body *ast.FuncLit
	for _, el := range cl.Elts {
		kv := el.(*ast.KeyValueExpr)
		switch kv.Key.(*ast.Ident).Name {
		case "ShortName":
			t.Name, _ = r.str(kv.Value, kv.Pos())
		case "Manifests":
			for _, m := range kv.Value.(*ast.CompositeLit).Elts {
				s, _ := r.str(m, m.Pos())
				t.Manifests = append(t.Manifests, s)
			}
		case "Test":
			body = r.testFunc(kv.Value)
		}
	}
	if body == nil {
		t.skip = "no Test function"
		return t
	}
	// A test of another route kind is out of agpol's scope.
	for _, m := range t.Manifests {
		base := filepath.Base(m)
		for _, p := range []string{"grpcroute-", "tlsroute-", "tcproute-", "udproute-", "backendtlspolicy", "mesh"} {
			if strings.HasPrefix(base, p) {
				t.skip = "tests " + strings.TrimSuffix(p, "-") + ": agpol reads HTTPRoutes only"
				return t
			}
		}
	}
	// Each request is made by a call of the http or tls helpers: its gateway address and
	// its test case.
	var problems []string
	seen := map[*ast.CompositeLit]map[string]bool{}
	mutated := token.NoPos
	ast.Inspect(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if mutates(c) && mutated == token.NoPos {
			mutated = c.Pos()
		}
		name := callName(c)
		if !strings.HasPrefix(name, "MakeRequestAndExpect") && !strings.HasPrefix(name, "MakeTLSRequestAndExpect") {
			return true
		}
		if len(c.Args) < 5 {
			return true
		}
		tgts, err := r.gatewayTargets(c.Args[3], c.Pos())
		if err != nil {
			problems = append(problems, err.Error())
			return true
		}
		if mutated != token.NoPos && c.Pos() > mutated {
			t.dropped = append(t.dropped, fmt.Sprintf("the requests made at line %d follow a change the test makes to its objects at run time (line %d)",
				r.fset.Position(c.Pos()).Line, r.fset.Position(mutated).Line))
			return true
		}
		lits, err := r.expected(c.Args[len(c.Args)-1], c.Pos(), 0)
		if err != nil {
			problems = append(problems, err.Error())
			return true
		}
		for _, l := range lits {
			if seen[l] == nil {
				seen[l] = map[string]bool{}
			}
			key := fmt.Sprint(tgts)
			if seen[l][key] {
				continue
			}
			seen[l][key] = true
			v, rows := r.table(l)
			if v == nil {
				rows = []ast.Expr{nil}
			}
			for _, row := range rows {
				r.env = map[types.Object]ast.Expr{}
				if v != nil {
					r.env[v] = row
				}
				cs, err := r.caseOf(l, tgts)
				r.env = nil
				if err != nil {
					problems = append(problems, err.Error())
					continue
				}
				t.Cases = append(t.Cases, cs)
			}
		}
		return true
	})
	switch {
	case len(problems) > 0:
		t.skip = "requests not static: " + strings.Join(problems, "; ")
		t.Cases = nil
	case len(t.Cases) == 0:
		t.skip = "makes no HTTP request with an ExpectedResponse (checks status conditions only)"
	}
	return t
}

// table finds the variable of a range over a slice literal that a case literal reads
// (for _, tc := range cases { … http.ExpectedResponse{Request: {Host: tc.host}} … }),
// and the rows of that slice: the literal is one case per row.
func (r *resolver) table(l *ast.CompositeLit) (types.Object, []ast.Expr) {
	var v types.Object
	var rows []ast.Expr
	ast.Inspect(l, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || v != nil {
			return v == nil
		}
		a, ok := r.binding(id, id.Pos())
		if !ok || !a.rangeOf {
			return true
		}
		src, ok := a.rhs.(*ast.Ident)
		if !ok {
			return true
		}
		b, ok := r.binding(src, a.pos)
		if !ok || b.rhs == nil {
			return true
		}
		if cl, ok := b.rhs.(*ast.CompositeLit); ok {
			if _, ok := cl.Type.(*ast.ArrayType); ok {
				v, rows = r.obj(id), cl.Elts
			}
		}
		return true
	})
	return v, rows
}

// isConversion reports whether a call of this name is a conversion to a Gateway API
// string type.
func isConversion(name string) bool {
	switch name {
	case "Namespace", "ObjectName", "SectionName", "Hostname", "PreciseHostname", "Kind", "Group":
		return true
	}
	return false
}

// caseOf reads one http.ExpectedResponse literal sent to a gateway address.
func (r *resolver) caseOf(l *ast.CompositeLit, tgts []target) (*Case, error) {
	pos := l.Pos()
	c := &Case{Line: r.fset.Position(pos).Line, Gateway: tgts[0].gateway, Method: "GET", Host: gatewayAddress, targets: tgts}
	var backend, ns string
	redirect := false
	for _, el := range l.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("%s: positional ExpectedResponse", r.fset.Position(pos))
		}
		var err error
		switch key := kv.Key.(*ast.Ident).Name; key {
		case "Request":
			err = r.request(kv.Value, c)
		case "Response":
			c.Expect.Status, err = r.status(kv.Value)
		case "Backend":
			backend, err = r.str(kv.Value, pos)
		case "Namespace":
			ns, err = r.str(kv.Value, pos)
		case "RedirectRequest":
			redirect = true
		case "ExpectedRequest", "MirroredTo", "TestCaseName", "BackendSetResponseHeaders", "ServerName":
			// the backend is what agpol checks: a rewritten request, its mirrors, a test
			// case's name and the SNI are not modelled (docs/routing.md)
		default:
			return nil, fmt.Errorf("%s: unknown field %s", r.fset.Position(kv.Pos()), key)
		}
		if err != nil {
			return nil, err
		}
	}
	if c.Expect.Status == 0 {
		c.Expect.Status = 200
	}
	switch {
	case c.Expect.Status != 200:
		// the status is what the test checks (a Backend set beside a 500 is not read)
	case backend != "":
		if ns == "" {
			ns = r.consts["InfrastructureNamespace"]
		}
		c.Expect.Backend = ns + "/" + backend
	case c.Expect.Status == 200 && !redirect:
		c.Expect.Backend = "*"
	}
	return c, nil
}

func (r *resolver) request(e ast.Expr, c *Case) error {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return fmt.Errorf("%s: Request not a literal", r.fset.Position(e.Pos()))
	}
	for _, el := range cl.Elts {
		kv := el.(*ast.KeyValueExpr)
		var err error
		switch key := kv.Key.(*ast.Ident).Name; key {
		case "Host":
			c.Host, err = r.str(kv.Value, kv.Pos())
		case "Method":
			c.Method, err = r.str(kv.Value, kv.Pos())
		case "Path":
			c.Path, err = r.str(kv.Value, kv.Pos())
		case "Headers":
			m, ok := kv.Value.(*ast.CompositeLit)
			if !ok {
				return fmt.Errorf("%s: Headers not a literal", r.fset.Position(kv.Pos()))
			}
			c.Headers = map[string]string{}
			for _, h := range m.Elts {
				hkv := h.(*ast.KeyValueExpr)
				k, err := r.str(hkv.Key, hkv.Pos())
				if err != nil {
					return err
				}
				v, err := r.str(hkv.Value, hkv.Pos())
				if err != nil {
					return err
				}
				c.Headers[k] = v
			}
		case "UnfollowRedirect", "SNI":
		case "Protocol", "Body", "ClientCert":
			return fmt.Errorf("%s: Request.%s is not modelled", r.fset.Position(kv.Pos()), key)
		default:
			return fmt.Errorf("%s: unknown Request field %s", r.fset.Position(kv.Pos()), key)
		}
		if err != nil {
			return err
		}
	}
	if c.Path == "" {
		c.Path = "/"
	}
	if c.Host == "" {
		c.Host = gatewayAddress
	}
	return nil
}

func (r *resolver) status(e ast.Expr) (int, error) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return 0, fmt.Errorf("%s: Response not a literal", r.fset.Position(e.Pos()))
	}
	code := 0
	for _, el := range cl.Elts {
		kv := el.(*ast.KeyValueExpr)
		switch key := kv.Key.(*ast.Ident).Name; key {
		case "StatusCode":
			v, err := r.str(kv.Value, kv.Pos())
			if err != nil {
				return 0, err
			}
			if code, err = strconv.Atoi(v); err != nil {
				return 0, fmt.Errorf("%s: StatusCode %q", r.fset.Position(kv.Pos()), v)
			}
		case "StatusCodes":
			return 0, fmt.Errorf("%s: several acceptable status codes", r.fset.Position(kv.Pos()))
		case "Headers", "AbsentHeaders", "ValidHeaderValues", "IgnoreWhitespace", "Protocol":
			// response headers are not modelled: the status and backend are checked
		default:
			return 0, fmt.Errorf("%s: unknown Response field %s", r.fset.Position(kv.Pos()), key)
		}
	}
	return code, nil
}
