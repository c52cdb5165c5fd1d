package effective

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
)

// CELVariables are the request attributes the reference controller allows in CEL
// (prefix check, pkg/translator/cel.go).
var CELVariables = []string{
	"request.mcp.tool_name", "request.path", "request.url_path", "request.method",
	"request.host", "request.headers", "request.time",
}

// CELCostLimit is agpol's runtime cost budget for one evaluation (the Kubernetes API
// server's per-call limit for CEL rules). Envoy evaluates RBAC conditions without a
// budget, so an evaluation that runs past it has an unknown outcome: explain decides
// the request under both outcomes and is indeterminate when they differ. lint warns
// on expressions whose estimated worst case exceeds it (AGP305).
const CELCostLimit = 1_000_000

// Size bounds of the request attributes for the cost estimate: Envoy's defaults
// (max_request_headers_kb 60, max_headers_count 100) bound every string of a request
// and the number of headers.
const (
	celMaxStringSize = 60 << 10
	celMaxHeaders    = 100
)

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
// expression into a program with the evaluation cost limit. Results (refusals and errors
// included: they depend on the text alone) are memoised by expression text, as admission
// and chain building compile the same expressions; cel.Program is safe for concurrent use.
func CompileCEL(expr string) (cel.Program, error) {
	if c, ok := celCache.Load(expr); ok {
		r := c.(celCompiled)
		return r.prg, r.err
	}
	prg, err := compileCEL(expr)
	if celCacheLen.Load() < celCacheMax {
		if _, loaded := celCache.LoadOrStore(expr, celCompiled{prg, err}); !loaded {
			celCacheLen.Add(1)
		}
	}
	return prg, err
}

// celCache maps expression text to celCompiled; celCacheLen counts its entries, and past
// celCacheMax (far more distinct expressions than any topology holds) nothing more is kept.
var (
	celCache    sync.Map
	celCacheLen atomic.Int64
)

const celCacheMax = 1 << 16

type celCompiled struct {
	prg cel.Program
	err error
}

func compileCEL(expr string) (cel.Program, error) {
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

// CELOverBudget reports whether an evaluation error is the runtime cost budget
// (CELCostLimit) running out.
func CELOverBudget(err error) bool {
	var ec interpreter.EvalCancelledError
	return errors.As(err, &ec) && ec.Cause == interpreter.CostLimitExceeded
}

// CELEstimatedCost is the worst-case cost of an expression, estimated with the request
// attributes bounded by Envoy's defaults; ok is false when it cannot be estimated.
func CELEstimatedCost(expr string) (cost uint64, ok bool) {
	if ValidateCELVariables(expr) != nil {
		return 0, false
	}
	e, err := env()
	if err != nil {
		return 0, false
	}
	ast, iss := e.Compile(celToolRegex.ReplaceAllString(expr, ToolNameAttribute))
	if iss != nil && iss.Err() != nil {
		return 0, false
	}
	est, err := e.EstimateCost(ast, celSizes{})
	if err != nil {
		return 0, false
	}
	return est.Max, true
}

// celSizes bounds the sizes of the request attributes for cost estimation: the request
// and metadata maps have a handful of entries, request.headers at most celMaxHeaders,
// and every other attribute (strings: path, host, header values, tool name) at most
// celMaxStringSize characters.
type celSizes struct{}

func (celSizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	p := n.Path()
	switch {
	case len(p) == 0:
		return nil
	case len(p) == 1:
		return &checker.SizeEstimate{Min: 0, Max: 8}
	case len(p) == 2 && p[0] == "request" && p[1] == "headers":
		return &checker.SizeEstimate{Min: 0, Max: celMaxHeaders}
	}
	return &checker.SizeEstimate{Min: 0, Max: celMaxStringSize}
}

func (celSizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}
