package lint

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"

	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
)

func init() {
	Register(&Check{
		Code: "AGP301", Severity: SeverityError, Category: CategoryAdmission,
		Title: "CEL rule does not compile or uses a variable outside the allow-list",
		Explanation: `The controller compiles every CEL rule when it admits a policy. Only these request
attributes are allowed (a prefix check over every request.… chain in the text, string
literals included): request.mcp.tool_name, request.path, request.url_path,
request.method, request.host, request.headers, request.time. Any other request.… name,
another root variable (source, identity, connection), or a syntax or type error makes
the controller reject the whole policy with reason InvalidCEL, for all its targets.
A rejected Allow policy is ignored: if it was the only Allow policy on its target, the
target is open to everyone (semantics §10, D16).`,
		Fix: `Use only the allowed attributes, e.g. request.mcp.tool_name.startsWith('read_') or
request.headers['x-tenant'] == 'a'. Test the expression with agpol explain before
applying it.`,
		Run: runCELCompile,
	})
}

// The reference CEL environment and allow-list (pkg/translator/cel.go).
// TODO: share with the decision engine's compile (internal/effective) once it lands.
var (
	celAllowed = []string{"request.mcp.tool_name", "request.path", "request.url_path", "request.method",
		"request.host", "request.headers", "request.time"}
	celVarRegex  = regexp.MustCompile(`\brequest\.[a-zA-Z0-9_.]+`)
	celToolRegex = regexp.MustCompile(`\brequest\.mcp\.tool_name\b`)

	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
)

// compileCEL compiles an expression as the controller's admission does.
func compileCEL(expr string) error {
	for _, m := range celVarRegex.FindAllString(expr, -1) {
		ok := false
		for _, v := range celAllowed {
			if strings.HasPrefix(m, v) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("unsupported CEL variable: %s", m)
		}
	}
	celEnvOnce.Do(func() {
		celEnv, celEnvErr = cel.NewEnv(
			cel.Variable("request", cel.MapType(cel.StringType, cel.AnyType)),
			cel.Variable("metadata", cel.MapType(cel.StringType, cel.AnyType)),
			ext.Strings(),
		)
	})
	if celEnvErr != nil {
		return celEnvErr
	}
	_, iss := celEnv.Compile(celToolRegex.ReplaceAllString(expr, "metadata.filter_metadata['mcp_proxy'].params.name"))
	if iss != nil && iss.Err() != nil {
		return iss.Err()
	}
	return nil
}

func runCELCompile(ctx *Context) []Finding {
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		if isLegacy(p) {
			continue
		}
		for i := range p.Spec.Rules {
			a := p.Spec.Rules[i].Authorization
			if a == nil || a.Type != v1alpha1.AuthorizationRuleTypeCEL || a.CEL == nil {
				continue
			}
			err := compileCEL(a.CEL.Expression)
			if err == nil {
				continue
			}
			f := ctx.Blame(p.Origin, fmt.Sprintf("spec.rules[%d].authorization.cel.expression", i))
			f.Message = fmt.Sprintf("the controller rejects the policy (InvalidCEL) for all its targets: Failed to compile CEL expression %q: %v",
				a.CEL.Expression, oneLine(err.Error()))
			out = append(out, f)
		}
	}
	return out
}

// oneLine folds a multi-line compiler message (with its caret diagram) into one line.
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var keep []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "|") {
			continue
		}
		keep = append(keep, t)
	}
	return strings.Join(keep, "; ")
}
