package render

import (
	"testing"

	"github.com/agpol/agpol/internal/explain"
)

// Every way explain says a decision fails an expectation (the Fail* constants of
// explain/expectation.go) has a sentence in render: a new code without one fails here.
func TestExpectationFailureCodesHaveSentences(t *testing.T) {
	codes := topologyConsts(t, "../explain/expectation.go")
	if len(codes) < 4 {
		t.Fatalf("found %d codes in explain, want the Fail* constants", len(codes))
	}
	for name, field := range codes {
		if text := ExpectationFailureText(&explain.Failure{Field: field, Expected: "x", Got: "y"}); text == field || text == "" {
			t.Errorf("%s (%q) has no sentence in render: %q", name, field, text)
		}
	}
}

// The sentences, and -o json's failures filled in render's view, explain's left as data.
func TestExpectationFailureSentences(t *testing.T) {
	x := &explain.Expectation{Decision: explain.Allow, Failed: []explain.Failure{
		{Field: explain.FailDecision, Expected: explain.Allow, Got: explain.Indeterminate},
		{Field: explain.FailLevel, Expected: "gateway", Got: "none"},
		{Field: explain.FailStrict, Unknown: explain.UnknownName{Name: "sa:agents/bilin", Nearest: "sa:agents/billing"}},
		{Field: explain.FailStrict, Unknown: explain.UnknownName{Tool: true, Name: "refnd"}},
	}}
	want := []string{
		"decision: expected allow, got indeterminate",
		"level: expected gateway, got none",
		"--strict: caller sa:agents/bilin appears in no policy and no ServiceAccount of the input; did you mean sa:agents/billing?",
		"--strict: tool refnd appears in no policy of the input",
	}
	v := Sentences(&explain.Result{Expect: x})
	if len(v.Expect.Failures) != len(want) || x.Failures != nil {
		t.Fatalf("view failures %q, explain's %q", v.Expect.Failures, x.Failures)
	}
	for i, w := range want {
		if v.Expect.Failures[i] != w {
			t.Errorf("failure %d: %q, want %q", i, v.Expect.Failures[i], w)
		}
	}
}
