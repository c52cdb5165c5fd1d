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

// AllowMeaning is what the Allow step of every level means under one semantics, as
// data: explain's evaluator dispatches on it and describe prints it, so that both state
// the same meaning under every preset.
type AllowMeaning struct {
	// Kind is StepAllowAny (the level's merged rules: any rule admits) or StepAllowEach
	// (the level's Allow policies one by one: every one must allow).
	Kind StepKind `json:"kind"`
	// Unselected is what the step does when no rule admits the request and no rule
	// selects the caller: deny, or pass the level (PR #220).
	Unselected Unselected `json:"unselected"`
	// RuleLess is what an Allow policy without rules does.
	RuleLess RuleLess `json:"ruleLess"`
}

// Unselected is what an Allow step does with a caller no rule selects.
type Unselected string

// What an Allow step does with a caller no rule selects.
const (
	// UnselectedDeny: the level denies (the request matches no rule).
	UnselectedDeny Unselected = "deny"
	// UnselectedPass: the level is passed, as if it had no Allow policy (PR #220); a
	// caller some rule selects, for a request no rule permits, is denied.
	UnselectedPass Unselected = "pass"
)

// RuleLess is what an Allow policy without rules does at an Allow step.
type RuleLess string

// What an Allow policy without rules does.
const (
	// RuleLessAddsNothing: the merged rules get none from it; a level whose Allow
	// policies all have no rules does not enforce (StepAllowAny).
	RuleLessAddsNothing RuleLess = "adds-nothing"
	// RuleLessAllows: the policy allows every request (StepAllowEach).
	RuleLessAllows RuleLess = "allows"
	// RuleLessAllowsButTools: the policy allows every request but tools/call, which
	// only its built-in rules can allow (StepAllowEach under EmptyAuthDenyTools).
	RuleLessAllowsButTools RuleLess = "allows-but-tools-call"
)

// IsAllow reports whether the step is an Allow filter.
func (s ChainStep) IsAllow() bool { return s.Kind != StepExtAuth }

// Steps returns the chain's steps in the order the data plane runs them, as the
// semantics places ExternalAuth relative to Allow (docs/semantics.md#filter-order) and combines Allow
// policies (#allow-combine). Explain runs them in this order and describe prints them in it.
func (c *Chain) Steps() []ChainStep {
	if c.steps != nil {
		return c.steps
	}
	return chainSteps(&c.Semantics, len(c.Levels()))
}

// chainSteps is the evaluation order of n levels under sem.
func chainSteps(sem *Semantics, n int) []ChainStep {
	kind := AllowMeaningOf(sem).Kind
	allow := func(i int) ChainStep { return ChainStep{kind, i} }
	ext := func(i int) ChainStep { return ChainStep{StepExtAuth, i} }
	out := make([]ChainStep, 0, 2*n)
	switch sem.ExtAuthPlacement {
	case ExtAuthPerLevel:
		for i := 0; i < n; i++ {
			out = append(out, ext(i), allow(i))
		}
	case ExtAuthLast:
		for i := 0; i < n; i++ {
			out = append(out, allow(i))
		}
		for i := 0; i < n; i++ {
			out = append(out, ext(i))
		}
	default:
		for i := 0; i < n; i++ {
			out = append(out, ext(i))
		}
		for i := 0; i < n; i++ {
			out = append(out, allow(i))
		}
	}
	return out
}

// AllowMeaningOf is what the Allow step of a level means under sem: whether the level's
// Allow policies run one by one (every one must allow) or as one set of merged rules
// (any rule admits), what happens to a caller no rule selects, and what a policy without
// rules does.
func AllowMeaningOf(sem *Semantics) AllowMeaning {
	st := AllowMeaning{Kind: StepAllowAny, Unselected: UnselectedDeny, RuleLess: RuleLessAddsNothing}
	switch sem.AllowCombine {
	case CombineAllPolicies:
		st.Kind, st.RuleLess = StepAllowEach, RuleLessAllows
		if sem.EmptyAuthorization == EmptyAuthDenyTools {
			st.RuleLess = RuleLessAllowsButTools
		}
	case CombinePR220:
		st.Unselected = UnselectedPass
	}
	return st
}
