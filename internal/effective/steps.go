package effective

// StepKind is what one step of a chain's evaluation runs.
type StepKind string

// Step kinds.
const (
	// StepExtAuth runs the level's ExternalAuth policy (when its rules select the request
	// the authorizer is called), then its legacy v0alpha0 ExternalAuth rules.
	StepExtAuth StepKind = "extauth"
	// StepAllowEach runs the level's Allow policies one by one: every one must allow.
	StepAllowEach StepKind = "allow-each"
	// StepAllowAny runs the level's merged Allow rules: any rule admits, else deny.
	StepAllowAny StepKind = "allow-any"
)

// ChainStep is one step of a chain's evaluation order: what runs, at which level.
type ChainStep struct {
	Kind StepKind
	// Level is the index of the level in Chain.Levels.
	Level int
}

// IsAllow reports whether the step is an Allow filter.
func (s ChainStep) IsAllow() bool { return s.Kind != StepExtAuth }

// Steps returns the chain's steps in the order the data plane runs them, as the
// semantics places ExternalAuth relative to Allow (§17 D2) and combines Allow policies
// (D1). Explain runs them in this order and describe prints them in it.
func (c *Chain) Steps() []ChainStep {
	if c.steps != nil {
		return c.steps
	}
	return chainSteps(&c.Semantics, len(c.Levels()))
}

// chainSteps is the evaluation order of n levels under sem.
func chainSteps(sem *Semantics, n int) []ChainStep {
	allow := StepAllowAny
	if sem.AllowCombine == CombineAllPolicies {
		allow = StepAllowEach
	}
	out := make([]ChainStep, 0, 2*n)
	switch sem.ExtAuthPlacement {
	case ExtAuthPerLevel:
		for i := 0; i < n; i++ {
			out = append(out, ChainStep{StepExtAuth, i}, ChainStep{allow, i})
		}
	case ExtAuthLast:
		for i := 0; i < n; i++ {
			out = append(out, ChainStep{allow, i})
		}
		for i := 0; i < n; i++ {
			out = append(out, ChainStep{StepExtAuth, i})
		}
	default:
		for i := 0; i < n; i++ {
			out = append(out, ChainStep{StepExtAuth, i})
		}
		for i := 0; i < n; i++ {
			out = append(out, ChainStep{allow, i})
		}
	}
	return out
}
