package effective

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

// CELVariables are the request attributes the reference controller allows in CEL
// (prefix check, pkg/translator/cel.go).
var CELVariables = []string{
	"request.mcp.tool_name", "request.path", "request.url_path", "request.method",
	"request.host", "request.headers", "request.time",
}

// CELCostLimit bounds the cost of one evaluation; an expression that exceeds it is an
// evaluation error, i.e. the rule does not match.
const CELCostLimit = 1_000_000

var (
	celVarRegex  = regexp.MustCompile(`\brequest\.[a-zA-Z0-9_.]+`)
	celToolRegex = regexp.MustCompile(`\brequest\.mcp\.tool_name\b`)

	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
)

// ToolNameAttribute is what request.mcp.tool_name is rewritten to before compiling.
const ToolNameAttribute = "metadata.filter_metadata['mcp_proxy'].params.name"

func env() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		celEnv, celEnvErr = cel.NewEnv(
			cel.Variable("request", cel.MapType(cel.StringType, cel.AnyType)),
			cel.Variable("metadata", cel.MapType(cel.StringType, cel.AnyType)),
			ext.Strings(),
		)
	})
	return celEnv, celEnvErr
}

// ValidateCELVariables applies the reference's allow-list: every "request.x.y" chain
// (found anywhere in the text, string literals included) must start with an allowed variable.
func ValidateCELVariables(expr string) error {
	for _, m := range celVarRegex.FindAllString(expr, -1) {
		ok := false
		for _, v := range CELVariables {
			if strings.HasPrefix(m, v) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("unsupported CEL variable: %s", m)
		}
	}
	return nil
}

// CompileCEL checks the allow-list, rewrites request.mcp.tool_name and compiles the
// expression into a program with the evaluation cost limit.
func CompileCEL(expr string) (cel.Program, error) {
	if err := ValidateCELVariables(expr); err != nil {
		return nil, err
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(celToolRegex.ReplaceAllString(expr, ToolNameAttribute))
	if iss != nil && iss.Err() != nil {
		return nil, iss.Err()
	}
	prg, err := e.Program(ast, cel.CostLimit(CELCostLimit), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, err
	}
	return prg, nil
}
