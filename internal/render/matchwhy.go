package render

import (
	"fmt"

	"github.com/agpol/agpol/internal/topology"
)

// RegexDiffersText is why Envoy may read a route match's regular expression otherwise
// than agpol (topology.RegexDiffers); "" for nil.
func RegexDiffersText(d *topology.RegexDiffers) string {
	if d == nil {
		return ""
	}
	switch d.Why {
	case topology.RegexAnyByte:
		return fmt.Sprintf("regular expression '%s' uses \\C (any byte), which RE2 (Envoy) accepts and Go's regexp does not: agpol cannot tell which values it matches", d.Regex)
	case topology.RegexOverLimit:
		return fmt.Sprintf("regular expression '%s' compiles to about %d RE2 instructions, over Envoy's limit of %d (re2.max_program_size.error_level): Envoy refuses the route configuration that holds it, so which routes the listener serves is not known", d.Regex, d.Instructions, d.Limit)
	}
	return d.Why
}

// GraphProblemText is what the graph found wrong at a field (topology.Problem): a match
// the data plane drops or never takes, a regular expression Envoy reads otherwise, an
// unusable listener selector.
func GraphProblemText(p *topology.Problem) string {
	switch p.Why {
	case topology.ProblemPathNoValue:
		return "path match without a value: the reference controller drops this match"
	case topology.ProblemPathType:
		return fmt.Sprintf("unsupported path match type %q: the reference controller drops this match", p.MatchType)
	case topology.ProblemHeaderType:
		return fmt.Sprintf("unsupported header match type %q: the reference controller drops this match", p.MatchType)
	case topology.ProblemRegexInvalid:
		return fmt.Sprintf("invalid regular expression %q: %s (the match never matches)", p.Regex, p.Err)
	case topology.ProblemRegexUnmatched:
		return RegexDiffersText(p.Differs) + " (agpol treats the match as never matching)"
	case topology.ProblemRegexDiffers:
		return RegexDiffersText(p.Differs)
	case topology.ProblemSelectorMissing:
		return "listener " + p.Listener + ": from is Selector but no selector is set"
	case topology.ProblemSelectorInvalid:
		return "listener " + p.Listener + ": invalid selector: " + p.Err
	}
	return p.Why
}
