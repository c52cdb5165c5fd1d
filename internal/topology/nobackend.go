package topology

// NoBackend is why a path reaches no backend, as data: the data plane answers the request
// itself (404, 500 or a redirect). render writes the one sentence of it that explain's
// trace and describe's chains both print.
type NoBackend struct {
	// Why is a NoBackend* constant.
	Why string `json:"why"`
	// Problem is the sentence of Rule, Backend or Miss, written by render for -o json
	// (render.NoBackendProblem); topology leaves it empty.
	Problem string `json:"problem,omitempty"`
	// Rule is the rule's problem (RouteResult.RuleProblem) for NoBackendRule, Backend the
	// backendRef's (BackendTarget.Problem) for NoBackendRef, Miss routing's (RouteResult.
	// Miss) for NoBackendNoRoute when it has one; nil otherwise.
	Rule    *RuleProblem    `json:"-"`
	Backend *BackendProblem `json:"-"`
	Miss    *RouteMiss      `json:"-"`
	// GatewayLevelRuns says the gateway-level XAccessPolicies still run (the reference
	// data plane: RBAC runs before routing).
	GatewayLevelRuns bool `json:"gatewayLevelRuns,omitempty"`
	// HostsThatRoute are the hostnames the gateway's routes serve, sorted, when no route
	// takes a request that names no route or backend (NoBackendNoRoute): the likely cause
	// is the host (Host, "" when the request names none), not a policy.
	HostsThatRoute []string `json:"hostsThatRoute,omitempty"`
	Host           string   `json:"host,omitempty"`
}

// Why a path reaches no backend.
const (
	NoBackendNoRoute  = "no-route"        // no route takes the request: 404
	NoBackendRedirect = "redirect"        // the rule answers with a redirect
	NoBackendNone     = "no-backend-ref"  // the rule has no backendRef
	NoBackendRule     = "rule-500"        // the whole rule answers 500 (Rule)
	NoBackendRef      = "backend-ref-500" // this backendRef answers 500 (Backend)
)

// NoBackendOf is why the path of p reaches no backend, nil when it reaches one.
func NoBackendOf(p Path) *NoBackend {
	switch {
	case p.RuleProblem != nil:
		return &NoBackend{Why: NoBackendRule, Rule: p.RuleProblem}
	case p.Backend.Problem != nil:
		return &NoBackend{Why: NoBackendRef, Backend: p.Backend.Problem}
	}
	return nil
}
