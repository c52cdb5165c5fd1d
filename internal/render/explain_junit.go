package render

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/agpol/agpol/internal/explain"
)

// SimulateJUnit writes the primary-semantics results as a JUnit test suite: one test case
// per request (and backend); requests with failed expectations are failures, requests
// without expectations are reported as passing cases with their decision as output.
func SimulateJUnit(w io.Writer, suite string, results []*explain.Result) error {
	j := NewJUnitSuite(suite)
	for _, r := range results {
		j.Add(r)
	}
	return j.Write(w)
}

// JUnitSuite collects the test cases of SimulateJUnit one result at a time, keeping
// only their text (the counts of a JUnit document come before its cases).
type JUnitSuite struct {
	ts junit.Testsuite
}

// NewJUnitSuite starts a suite.
func NewJUnitSuite(suite string) *JUnitSuite {
	return &JUnitSuite{ts: junit.Testsuite{Name: suite, Time: "0"}}
}

// Add records the test case of r (a primary-semantics result; others are skipped).
func (j *JUnitSuite) Add(r *explain.Result) {
	if !r.Primary {
		return
	}
	name := r.Name
	if r.Path.Weight != nil {
		name += " [" + r.Path.Backend + "]"
	}
	tc := junit.Testcase{Name: xmlText(name), Classname: j.ts.Name, Time: "0"}
	out := strings.ToUpper(r.Verdict) + " by " + r.DecidedBy + " at " + r.Level + ": " + DecisionReason(&r.Decision)
	out = xmlText(out)
	tc.SystemOut = &junit.Output{Data: out}
	if r.Expect != nil && !r.Expect.Passed {
		tc.Failure = &junit.Result{Message: xmlText(strings.Join(expectationFailures(r.Expect), "; ")), Type: "expectation", Data: out}
	}
	j.ts.AddTestcase(tc)
}

// addCases adds the test cases of o, in their order, after j's.
func (j *JUnitSuite) addCases(o *JUnitSuite) {
	for _, tc := range o.ts.Testcases {
		j.ts.AddTestcase(tc)
	}
}

// Write writes the suite.
func (j *JUnitSuite) Write(w io.Writer) error {
	var all junit.Testsuites
	all.AddSuite(j.ts)
	return all.WriteXML(w)
}

// xmlText is s escaped for a terminal (a report is often printed), and without the
// control characters XML 1.0 cannot hold (the output is CDATA, written as is).
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' {
			return utf8.RuneError
		}
		return r
	}, EscapeTerminal(s))
}
