package render

import (
	"fmt"

	"github.com/agpol/agpol/internal/explain"
)

// ExpectationFailureText is one way a decision fails a request's expectation
// (explain.Failure): the field expected and the value decided, or, under simulate
// --strict, a name the input does not know.
func ExpectationFailureText(f *explain.Failure) string {
	switch f.Field {
	case explain.FailDecision, explain.FailDecidedBy, explain.FailLevel:
		return fmt.Sprintf("%s: expected %s, got %s", f.Field, f.Expected, f.Got)
	case explain.FailStrict:
		u := &f.Unknown
		s := fmt.Sprintf("--strict: caller %s appears in no policy and no ServiceAccount of the input", u.Name)
		if u.Tool {
			s = fmt.Sprintf("--strict: tool %s appears in no policy of the input", u.Name)
		}
		if u.Nearest != "" {
			s += "; did you mean " + u.Nearest + "?"
		}
		return s
	}
	return f.Field
}

// expectationFailures are the sentences of x's failures, in order (nil when it passes).
func expectationFailures(x *explain.Expectation) []string {
	if len(x.Failed) == 0 {
		return x.Failures
	}
	out := make([]string, len(x.Failed))
	for i := range x.Failed {
		out[i] = ExpectationFailureText(&x.Failed[i])
	}
	return out
}

// expectationView is x as -o json|yaml prints it: a copy with its failures written; x
// itself when it has none.
func expectationView(x *explain.Expectation) *explain.Expectation {
	if x == nil || len(x.Failed) == 0 {
		return x
	}
	v := *x
	v.Failures = expectationFailures(x)
	return &v
}
