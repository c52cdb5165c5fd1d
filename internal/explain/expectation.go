package explain

// Expectation is the outcome of a request's expect fields.
type Expectation struct {
	Decision  string `json:"decision,omitempty"`
	DecidedBy string `json:"decidedBy,omitempty"`
	Level     string `json:"level,omitempty"`
	Passed    bool   `json:"passed"`
	// Failed is how the decision fails the expectation, as data (nil when it passes).
	Failed []Failure `json:"-"`
	// Failures are Failed's sentences, which render writes into its view (-o json|yaml).
	Failures []string `json:"failures,omitempty"`
}

// Failure is one way a decision fails a request's expectation, as data (render writes it).
type Failure struct {
	// Field is a Fail* constant: the expected field the decision differs in, Expected
	// what the request expects and Got what was decided; or FailStrict, Unknown the name.
	Field         string
	Expected, Got string
	Unknown       UnknownName
}

// What fails an expectation (Failure.Field).
const (
	FailDecision  = "decision"  // the verdict differs
	FailDecidedBy = "decidedBy" // the deciding policy, rule or authorizer differs
	FailLevel     = "level"     // the deciding level differs
	FailStrict    = "strict"    // a name the input does not know, under simulate --strict
)

// UnknownName is a name a request gives that the input does not know (simulate --strict).
type UnknownName struct {
	// Tool is set for a tool name, unset for a caller.
	Tool bool
	Name string
	// Nearest is the known name nearest to Name, "" when none is near.
	Nearest string
}

// check is how d fulfils r's expect fields and, under simulate --strict, r's unknown
// names; nil when r expects nothing.
func check(r *Request, d *Decision) *Expectation {
	if r.Expect == "" && r.ExpectDecidedBy == "" && r.ExpectLevel == "" {
		return nil
	}
	x := &Expectation{Decision: r.Expect, DecidedBy: r.ExpectDecidedBy, Level: r.ExpectLevel, Passed: true}
	if r.Expect != "" && r.Expect != d.Verdict {
		x.Failed = append(x.Failed, Failure{Field: FailDecision, Expected: r.Expect, Got: d.Verdict})
	}
	if r.ExpectDecidedBy != "" && r.ExpectDecidedBy != d.DecidedBy {
		x.Failed = append(x.Failed, Failure{Field: FailDecidedBy, Expected: r.ExpectDecidedBy, Got: d.DecidedBy})
	}
	if r.ExpectLevel != "" && r.ExpectLevel != d.Level {
		x.Failed = append(x.Failed, Failure{Field: FailLevel, Expected: r.ExpectLevel, Got: d.Level})
	}
	for _, u := range r.Strict {
		x.Failed = append(x.Failed, Failure{Field: FailStrict, Unknown: u})
	}
	x.Passed = len(x.Failed) == 0
	return x
}
