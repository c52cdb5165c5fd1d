//lint:file-ignore SA1019 the OPA v0 API is the one Authorino v0.25.0 uses, so Rego parses (v0 syntax) as it does there

package authpolicy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/ast"
	"github.com/open-policy-agent/opa/rego"
)

// opaSpec is an opa authorization rule (Authorino v1beta3).
type opaSpec struct {
	Rego           string          `json:"rego"`
	ExternalPolicy json.RawMessage `json:"externalPolicy"`
	AllValues      bool            `json:"allValues"`
}

// compiledRego is an inline Rego policy prepared as Authorino prepares it, or why not.
type compiledRego struct {
	query rego.PreparedEvalQuery
	err   error
	// inputs are the input paths the policy reads ("request.headers", "auth.identity.groups");
	// "" when it reads input as a whole or by a computed key.
	inputs []string
}

var regoPolicies sync.Map // rego text → *compiledRego

// packageRe is Authorino's cleanUpRegoDocument (pkg/evaluators/authorization/opa.go).
var packageRe = regexp.MustCompile(`(\s)*package.*[;\n]+`)

// compileRego wraps the rule's Rego in Authorino's package and default (opa.go:26-29,
// precompilePolicy) and prepares the query for `allow`.
func compileRego(text string) *compiledRego {
	if v, ok := regoPolicies.Load(text); ok {
		return v.(*compiledRego)
	}
	cr := &compiledRego{}
	uid := fmt.Sprintf("%x", sha256.Sum256([]byte(text)))
	pkg := fmt.Sprintf(`authorino.authz["%s"]`, uid)
	module, err := ast.ParseModule(uid+".rego", fmt.Sprintf("package %s\ndefault allow = false\n%s", pkg, packageRe.ReplaceAllString(text, "")))
	if err != nil {
		cr.err = err
	} else {
		ast.WalkRefs(module, func(r ast.Ref) bool {
			if len(r) == 0 || !r[0].Equal(ast.InputRootDocument) {
				return false
			}
			var parts []string
			for _, t := range r.GroundPrefix()[1:] {
				s, ok := t.Value.(ast.String)
				if !ok {
					break
				}
				parts = append(parts, string(s))
			}
			cr.inputs = append(cr.inputs, strings.Join(parts, "."))
			return false
		})
		r := rego.New(rego.Query(fmt.Sprintf(`allow = object.get(data.%s, "allow", null)`, pkg)), rego.ParsedModule(module))
		cr.query, cr.err = r.PrepareForEval(context.Background())
	}
	v, _ := regoPolicies.LoadOrStore(text, cr)
	return v.(*compiledRego)
}

// evalOPA evaluates an inline Rego policy with OPA's own library on Authorino's
// authorization JSON (opa.go:87-108): allow must be true. An external policy is fetched
// from its registry by Authorino: it stays unknown.
func evalOPA(c *conditionEvaluator, raw []byte) (Tri, Why) {
	var spec opaSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return Unknown, Why{Code: WhyRuleSpecUnreadable, Err: err.Error()}
	}
	if spec.Rego == "" {
		return Unknown, Why{Code: WhyOPAExternal}
	}
	cr := compileRego(spec.Rego)
	if cr.err != nil {
		return Unknown, Why{Code: WhyOPANotCompiling, Err: cr.err.Error()}
	}
	for _, in := range cr.inputs {
		if u := c.unknownInput(in); u != "" {
			c.missing[u] = true
			return Unknown, Why{Code: WhyOPAInputUnknown, Input: in, Attr: u}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rs, err := cr.query.Eval(ctx, rego.EvalInput(c.opaInput()))
	switch {
	case err != nil:
		return Unknown, Why{Code: WhyOPAEvalFails, Err: err.Error()}
	case len(rs) == 0:
		return False, Why{Code: WhyOPANoResult}
	}
	if allowed, ok := rs[0].Bindings["allow"].(bool); ok && allowed {
		return True, Why{Code: WhyOPAAllowTrue}
	}
	return False, Why{Code: WhyOPAAllowNotTrue}
}

// opaInput is Authorino's authorization JSON as agpol knows it: the Envoy attributes
// under context, the well-known attributes, and auth.
func (c *conditionEvaluator) opaInput() map[string]any {
	req, _ := c.vars["request"].(map[string]any)
	httpReq := map[string]any{}
	for k, v := range req {
		switch k {
		case "method", "host", "path", "headers":
			httpReq[k] = v
		}
	}
	in := map[string]any{"context": map[string]any{"request": map[string]any{"http": httpReq}}}
	for k, v := range c.vars {
		in[k] = v
	}
	return in
}

// unknownInput says which unknown attribute an input path reads, or "".
func (c *conditionEvaluator) unknownInput(path string) string {
	if path == "" {
		if len(c.authUnknown) > 0 || c.auth == nil {
			return AttrWholeInput
		}
		return ""
	}
	p := path
	if rest, ok := strings.CutPrefix(p, "context.request.http."); ok {
		p = "request." + rest
	}
	parts := strings.Split(p, ".")
	switch parts[0] {
	case "auth":
		if c.auth == nil {
			return "auth"
		}
		for _, u := range c.authUnknown {
			if p == u || strings.HasPrefix(p, u+".") || strings.HasPrefix(u, p+".") || u == "auth."+strings.Join(parts[1:], ".") {
				return u
			}
		}
		return ""
	case "request", "source":
		if len(parts) < 2 {
			if !c.known(p + ".method") {
				return p
			}
			return ""
		}
		if !c.known(parts[0] + "." + parts[1]) {
			return parts[0] + "." + parts[1]
		}
		return ""
	case "context":
		return "input." + path
	}
	return parts[0]
}
