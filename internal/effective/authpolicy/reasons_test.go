package authpolicy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// TestReasonCodesListed: every Reason* constant of reasons.go is in ReasonCodes, the
// list render's TestAuthPolicyReasonText writes a sentence for.
func TestReasonCodesListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "reasons.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, name := range spec.(*ast.ValueSpec).Names {
				if !strings.HasPrefix(name.Name, "Reason") {
					continue
				}
				n++
				lit := spec.(*ast.ValueSpec).Values[0].(*ast.BasicLit).Value
				if !slices.Contains(ReasonCodes, strings.Trim(lit, `"`)) {
					t.Errorf("%s is not in ReasonCodes", name.Name)
				}
			}
		}
	}
	if n != len(ReasonCodes) {
		t.Errorf("%d Reason constants, ReasonCodes lists %d", n, len(ReasonCodes))
	}
}
