package explain

import (
	"reflect"
	"testing"
)

// TestCheck: check gives how a decision fails a request's expectation as data, field by
// field in a fixed order, then the unknown names of --strict; nil without expect fields.
func TestCheck(t *testing.T) {
	d := &Decision{Verdict: Deny, DecidedBy: "implicit-deny", Level: "backend"}
	unknown := UnknownName{Tool: true, Name: "refnd", Nearest: "refund"}
	for _, c := range []struct {
		name string
		r    Request
		want *Expectation
	}{
		{name: "nothing expected", r: Request{Strict: []UnknownName{unknown}}},
		{name: "passes", r: Request{Expect: Deny, ExpectLevel: "backend"},
			want: &Expectation{Decision: Deny, Level: "backend", Passed: true}},
		{name: "every field fails", r: Request{Expect: Allow, ExpectDecidedBy: "p#r", ExpectLevel: "gateway"},
			want: &Expectation{Decision: Allow, DecidedBy: "p#r", Level: "gateway", Failed: []Failure{
				{Field: FailDecision, Expected: Allow, Got: Deny},
				{Field: FailDecidedBy, Expected: "p#r", Got: "implicit-deny"},
				{Field: FailLevel, Expected: "gateway", Got: "backend"},
			}}},
		{name: "strict fails a passing decision", r: Request{Expect: Deny, Strict: []UnknownName{unknown}},
			want: &Expectation{Decision: Deny, Failed: []Failure{{Field: FailStrict, Unknown: unknown}}}},
	} {
		if got := check(&c.r, d); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
