package effective

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types/ref"
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

// CELEstimatedCostLimit bounds the worst-case cost of an expression, estimated before it
// is run, as the Kubernetes API server bounds CRD validation rules (its
// StaticEstimatedCostLimit). agpol refuses to evaluate an expression above it: the
// expression still compiles (the controller accepts it), but explain does not run it.
const CELEstimatedCostLimit = 10_000_000

// Size bounds of the request attributes for the cost estimate: Envoy's defaults
// (max_request_headers_kb 60, max_headers_count 100) bound every string of a request
// and the number of headers.
const (
	celMaxStringSize = 60 << 10
	celMaxHeaders    = 100
)

// ErrCELTooExpensive is the evaluation error of an expression over CELEstimatedCostLimit.
var ErrCELTooExpensive = errors.New("CEL expression too expensive")

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
	if est, err := e.EstimateCost(ast, celSizes{}); err == nil && est.Max > CELEstimatedCostLimit {
		return refusedProgram{fmt.Errorf("%w: refused, not evaluated: its estimated worst-case cost %d exceeds the limit of %d (the Kubernetes API server's limit for CEL rules)",
			ErrCELTooExpensive, est.Max, uint64(CELEstimatedCostLimit))}, nil
	}
	prg, err := e.Program(ast, cel.CostLimit(CELCostLimit), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, err
	}
	return prg, nil
}

// CELTooExpensive returns the refusal of a compiled expression whose estimated cost is
// over CELEstimatedCostLimit, or nil.
func CELTooExpensive(p cel.Program) error {
	if r, ok := p.(refusedProgram); ok {
		return r.err
	}
	return nil
}

// refusedProgram stands for an expression too expensive to run: every evaluation fails.
type refusedProgram struct{ err error }

func (r refusedProgram) Eval(any) (ref.Val, *cel.EvalDetails, error) { return nil, nil, r.err }

func (r refusedProgram) ContextEval(context.Context, any) (ref.Val, *cel.EvalDetails, error) {
	return nil, nil, r.err
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
