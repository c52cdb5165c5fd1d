package render

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/topology"
)

// Every code topology gives a graph problem or a regular expression Envoy reads otherwise
// (the constants of matchwhy.go) has a sentence in render: a new code without one fails
// here.
func TestMatchWhyCodesHaveSentences(t *testing.T) {
	codes := topologyConsts(t, "../topology/matchwhy.go")
	if len(codes) < 10 {
		t.Fatalf("found %d codes in topology, want the Problem* and Regex* constants", len(codes))
	}
	for name, why := range codes {
		var text string
		switch {
		case strings.HasPrefix(name, "Problem"):
			text = GraphProblemText(&topology.Problem{Why: why, Differs: &topology.RegexDiffers{Why: topology.RegexAnyByte}})
		case strings.HasPrefix(name, "Regex"):
			text = RegexDiffersText(&topology.RegexDiffers{Why: why})
		default:
			t.Errorf("constant %s (%q): not of a family render knows; give it a sentence and a case here", name, why)
			continue
		}
		if text == why || text == "" {
			t.Errorf("%s (%q) has no sentence in render: %q", name, why, text)
		}
	}
}

// The sentences name what the data carries.
func TestMatchWhySentences(t *testing.T) {
	over := &topology.RegexDiffers{Why: topology.RegexOverLimit, Regex: "/x{98}", Instructions: 101, Limit: 100}
	for _, c := range []struct {
		got, want string
	}{
		{RegexDiffersText(nil), ""},
		{RegexDiffersText(over), "regular expression '/x{98}' compiles to about 101 RE2 instructions, over Envoy's limit of 100 (re2.max_program_size.error_level): Envoy refuses the route configuration that holds it, so which routes the listener serves is not known"},
		{GraphProblemText(&topology.Problem{Why: topology.ProblemRegexUnmatched, Differs: &topology.RegexDiffers{Why: topology.RegexAnyByte, Regex: `/a\Cb`}}),
			`regular expression '/a\Cb' uses \C (any byte), which RE2 (Envoy) accepts and Go's regexp does not: agpol cannot tell which values it matches (agpol treats the match as never matching)`},
		{GraphProblemText(&topology.Problem{Why: topology.ProblemRegexInvalid, Regex: "/x([", Err: "error parsing regexp: missing closing ]: `[`"}),
			"invalid regular expression \"/x([\": error parsing regexp: missing closing ]: `[` (the match never matches)"},
		{GraphProblemText(&topology.Problem{Why: topology.ProblemHeaderType, MatchType: "Prefix"}), `unsupported header match type "Prefix": the reference controller drops this match`},
		{GraphProblemText(&topology.Problem{Why: topology.ProblemSelectorMissing, Listener: "http"}), "listener http: from is Selector but no selector is set"},
		{GraphProblemText(&topology.Problem{Why: topology.ProblemSelectorInvalid, Listener: "http", Err: `"Bogus" is not a valid label selector operator`}),
			`listener http: invalid selector: "Bogus" is not a valid label selector operator`},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
