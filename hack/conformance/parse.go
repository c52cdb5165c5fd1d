package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// test is one conformance test as read from its Go file.
type test struct {
	Name      string
	Source    string   // tests/<file>.go
	Manifests []string // tests/<file>.yaml, …
	Cases     []*Case
	skip      string   // why it is left out, or ""
	dropped   []string // requests of a converted test left out, with why
}

// parseGoFiles parses the non-test Go files of dir.
func parseGoFiles(fset *token.FileSet, dir string) ([]*ast.File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// suiteConstants reads the string constants of the suite's utils/suite package
// (confsuite.InfrastructureNamespace, InfraBackendServiceNameV1, …).
func suiteConstants(dir string) (map[string]string, error) {
	fset := token.NewFileSet()
	files, err := parseGoFiles(fset, dir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if bl, ok := vs.Values[i].(*ast.BasicLit); ok && bl.Kind == token.STRING {
							out[n.Name], _ = strconv.Unquote(bl.Value)
						}
					}
				}
			}
		}
	}
	return out, nil
}

// fakeImporter imports nothing: the suite's packages stay unresolved, which is enough to
// resolve the identifiers local to the tests.
type fakeImporter struct{}

func (fakeImporter) Import(path string) (*types.Package, error) {
	if path == "strings" || path == "testing" || path == "fmt" {
		return importer.Default().Import(path)
	}
	return nil, errors.New("not imported")
}

// parseTests reads every conformance test of the tests package.
func parseTests(dir string, consts map[string]string) ([]*test, error) {
	fset := token.NewFileSet()
	files, err := parseGoFiles(fset, dir)
	if err != nil {
		return nil, err
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}}
	conf := types.Config{Importer: fakeImporter{}, Error: func(error) {}}
	_, _ = conf.Check("tests", fset, files, info) // errors are the unresolved imports
	r := &resolver{fset: fset, info: info, consts: consts, assigns: map[types.Object][]assign{}}
	for _, f := range files {
		r.collect(f)
	}
	var out []*test
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for _, v := range vs.Values {
					cl, ok := v.(*ast.CompositeLit)
					if !ok || !isSel(cl.Type, "ConformanceTest") {
						continue
					}
					t := r.test(cl)
					t.Source = "tests/" + filepath.Base(fset.Position(cl.Pos()).Filename)
					out = append(out, t)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

type assign struct {
	pos token.Pos
	rhs ast.Expr
	// rangeOf: the variable is the value of a range over rhs (its elements).
	rangeOf bool
}

type resolver struct {
	fset    *token.FileSet
	info    *types.Info
	consts  map[string]string
	assigns map[types.Object][]assign
	// env binds the variable of a range over a table (a slice of literals) to the
	// element a case is read with.
	env map[types.Object]ast.Expr
}

func (r *resolver) obj(id *ast.Ident) types.Object {
	if o := r.info.Defs[id]; o != nil {
		return o
	}
	return r.info.Uses[id]
}

// collect records every assignment to a variable, in source order.
func (r *resolver) collect(f *ast.File) {
	ast.Inspect(f, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			if len(s.Lhs) != len(s.Rhs) {
				// v, err := f(): the first result is what the tests read.
				if id, ok := s.Lhs[0].(*ast.Ident); ok && len(s.Rhs) == 1 {
					if o := r.obj(id); o != nil {
						r.assigns[o] = append(r.assigns[o], assign{pos: s.Pos(), rhs: s.Rhs[0]})
					}
				}
				return true
			}
			for i, l := range s.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					if o := r.obj(id); o != nil {
						r.assigns[o] = append(r.assigns[o], assign{pos: s.Pos(), rhs: s.Rhs[i]})
					}
				}
			}
		case *ast.ValueSpec:
			for i, id := range s.Names {
				var rhs ast.Expr // nil: the zero value
				if i < len(s.Values) {
					rhs = s.Values[i]
				}
				if o := r.obj(id); o != nil {
					r.assigns[o] = append(r.assigns[o], assign{pos: s.Pos(), rhs: rhs})
				}
			}
		case *ast.RangeStmt:
			if id, ok := s.Value.(*ast.Ident); ok {
				if o := r.obj(id); o != nil {
					r.assigns[o] = append(r.assigns[o], assign{pos: s.Pos(), rhs: s.X, rangeOf: true})
				}
			}
		}
		return true
	})
}

// binding is the last assignment to id's variable before pos.
func (r *resolver) binding(id *ast.Ident, pos token.Pos) (assign, bool) {
	o := r.obj(id)
	if o == nil {
		return assign{}, false
	}
	var best assign
	found := false
	for _, a := range r.assigns[o] {
		if a.pos < pos && (!found || a.pos > best.pos) {
			best, found = a, true
		}
	}
	return best, found
}

func isSel(e ast.Expr, name string) bool {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		return x.Sel.Name == name
	case *ast.Ident:
		return x.Name == name
	}
	return false
}

func callName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.SelectorExpr:
		return f.Sel.Name
	case *ast.Ident:
		return f.Name
	}
	return ""
}

// str evaluates a string expression at pos: a literal, a constant, a suite constant, or
// a variable whose last assignment is one of those.
func (r *resolver) str(e ast.Expr, pos token.Pos) (string, error) {
	if tv, ok := r.info.Types[e]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
		return constant.StringVal(tv.Value), nil
	}
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			return strconv.Unquote(x.Value)
		}
		return x.Value, nil
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			if el, ok := r.env[r.obj(id)]; ok {
				cl, ok := el.(*ast.CompositeLit)
				if !ok {
					break
				}
				for _, f := range cl.Elts {
					if kv, ok := f.(*ast.KeyValueExpr); ok && kv.Key.(*ast.Ident).Name == x.Sel.Name {
						return r.str(kv.Value, pos)
					}
				}
				return "", nil // the field's zero value
			}
		}
		if v, ok := r.consts[x.Sel.Name]; ok {
			return v, nil
		}
	case *ast.Ident:
		if el, ok := r.env[r.obj(x)]; ok {
			return r.str(el, pos)
		}
		if a, ok := r.binding(x, pos); ok && !a.rangeOf && a.rhs != nil {
			return r.str(a.rhs, a.pos)
		}
	case *ast.ParenExpr:
		return r.str(x.X, pos)
	case *ast.CallExpr:
		// A conversion: string(ns), v1.Namespace(…), v1.SectionName(…).
		if len(x.Args) == 1 && (callName(x) == "string" || isConversion(callName(x))) {
			return r.str(x.Args[0], pos)
		}
	}
	return "", fmt.Errorf("%s: not a static string", r.fset.Position(e.Pos()))
}

type target struct {
	gateway  string // namespace/name
	listener string // the listener whose port the address carries, or ""
}

// gatewayTargets are the addresses a request may be sent to: one, or, for a variable
// the test assigns several addresses in turn (gwAddr := gwAddr80; switch port { case
// "8080": gwAddr = gwAddr8080 }), each of them (the case's host port picks one).
func (r *resolver) gatewayTargets(e ast.Expr, pos token.Pos) ([]target, error) {
	if id, ok := e.(*ast.Ident); ok {
		as := r.assigns[r.obj(id)]
		var out []target
		for _, a := range as {
			if a.rangeOf || a.rhs == nil {
				continue
			}
			t, err := r.gatewayTarget(a.rhs, a.pos)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		if len(as) > 1 && len(out) > 0 {
			return out, nil
		}
	}
	t, err := r.gatewayTarget(e, pos)
	if err != nil {
		return nil, err
	}
	return []target{t}, nil
}

// mutates reports whether a call changes objects in the cluster (suite.Client.Delete,
// Update, Patch, Create): the manifests no longer describe what later requests meet.
func mutates(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || !isSel(sel.X, "Client") {
		return false
	}
	switch sel.Sel.Name {
	case "Delete", "Update", "Patch", "Create":
		return true
	}
	return false
}

// gatewayTarget evaluates a gateway address expression (the result of
// GatewayAndHTTPRoutesMustBeAccepted and its kin).
func (r *resolver) gatewayTarget(e ast.Expr, pos token.Pos) (target, error) {
	switch x := e.(type) {
	case *ast.Ident:
		if a, ok := r.binding(x, pos); ok && !a.rangeOf && a.rhs != nil {
			return r.gatewayTarget(a.rhs, a.pos)
		}
	case *ast.CallExpr:
		if strings.HasSuffix(callName(x), "MustBeAccepted") || callName(x) == "WaitForGatewayAddress" {
			for _, arg := range x.Args {
				if t, err := r.gatewayRef(arg, pos); err == nil {
					return t, nil
				}
			}
		}
	}
	return target{}, fmt.Errorf("%s: gateway address not static", r.fset.Position(e.Pos()))
}

// gatewayRef evaluates kubernetes.NewGatewayRef(nn, listeners...) or a variable holding one.
func (r *resolver) gatewayRef(e ast.Expr, pos token.Pos) (target, error) {
	switch x := e.(type) {
	case *ast.Ident:
		if a, ok := r.binding(x, pos); ok && !a.rangeOf {
			return r.gatewayRef(a.rhs, a.pos)
		}
	case *ast.CallExpr:
		if callName(x) == "NewGatewayRef" && len(x.Args) >= 1 {
			ns, name, err := r.namespacedName(x.Args[0], pos)
			if err != nil {
				return target{}, err
			}
			t := target{gateway: ns + "/" + name}
			if len(x.Args) > 1 {
				if t.listener, err = r.str(x.Args[1], pos); err != nil {
					return target{}, err
				}
			}
			return t, nil
		}
	}
	return target{}, fmt.Errorf("%s: not a gateway reference", r.fset.Position(e.Pos()))
}

// namespacedName evaluates types.NamespacedName{Name: …, Namespace: …}.
func (r *resolver) namespacedName(e ast.Expr, pos token.Pos) (string, string, error) {
	switch x := e.(type) {
	case *ast.Ident:
		if a, ok := r.binding(x, pos); ok && !a.rangeOf {
			return r.namespacedName(a.rhs, a.pos)
		}
	case *ast.CompositeLit:
		var ns, name string
		for _, el := range x.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			v, err := r.str(kv.Value, pos)
			if err != nil {
				return "", "", err
			}
			switch kv.Key.(*ast.Ident).Name {
			case "Name":
				name = v
			case "Namespace":
				ns = v
			}
		}
		return ns, name, nil
	}
	return "", "", fmt.Errorf("%s: not a static NamespacedName", r.fset.Position(e.Pos()))
}

// expected evaluates an expression holding test cases (a slice literal, an append, an
// element of one, a variable) to the ExpectedResponse literals it holds.
func (r *resolver) expected(e ast.Expr, pos token.Pos, depth int) ([]*ast.CompositeLit, error) {
	if depth > 20 {
		return nil, errors.New("too deep")
	}
	switch x := e.(type) {
	case *ast.Ident:
		a, ok := r.binding(x, pos)
		if !ok {
			return nil, fmt.Errorf("%s: %s has no static value", r.fset.Position(x.Pos()), x.Name)
		}
		if a.rhs == nil {
			return nil, nil // declared empty
		}
		return r.expected(a.rhs, a.pos, depth+1) // a range value: the elements of the ranged slice
	case *ast.IndexExpr:
		return r.expected(x.X, pos, depth+1)
	case *ast.CompositeLit:
		if at, ok := x.Type.(*ast.ArrayType); ok {
			if !isSel(at.Elt, "ExpectedResponse") {
				return nil, fmt.Errorf("%s: not a slice of ExpectedResponse", r.fset.Position(x.Pos()))
			}
			var out []*ast.CompositeLit
			for _, el := range x.Elts {
				cl, ok := el.(*ast.CompositeLit)
				if !ok {
					return nil, fmt.Errorf("%s: element not a literal", r.fset.Position(el.Pos()))
				}
				out = append(out, cl)
			}
			return out, nil
		}
		if isSel(x.Type, "ExpectedResponse") {
			return []*ast.CompositeLit{x}, nil
		}
	case *ast.CallExpr:
		if callName(x) == "append" {
			var out []*ast.CompositeLit
			for i, a := range x.Args {
				if i > 0 && x.Ellipsis == token.NoPos {
					cl, ok := a.(*ast.CompositeLit)
					if !ok {
						return nil, fmt.Errorf("%s: element not a literal", r.fset.Position(a.Pos()))
					}
					out = append(out, cl)
					continue
				}
				l, err := r.expected(a, pos, depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, l...)
			}
			return out, nil
		}
	case *ast.UnaryExpr:
		return r.expected(x.X, pos, depth+1)
	}
	return nil, fmt.Errorf("%s: test cases not static", r.fset.Position(e.Pos()))
}

// testFunc is the Test function of a ConformanceTest: a function literal, or another
// test's (OtherTest.Test).
func (r *resolver) testFunc(e ast.Expr) *ast.FuncLit {
	switch x := e.(type) {
	case *ast.FuncLit:
		return x
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		if !ok || x.Sel.Name != "Test" {
			return nil
		}
		as := r.assigns[r.obj(id)]
		if len(as) == 0 {
			return nil
		}
		cl, ok := as[0].rhs.(*ast.CompositeLit)
		if !ok {
			return nil
		}
		for _, el := range cl.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok && kv.Key.(*ast.Ident).Name == "Test" {
				return r.testFunc(kv.Value)
			}
		}
	}
	return nil
}
