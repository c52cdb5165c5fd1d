// What the graph finds wrong in a route's matches and a listener's selector, and why
// Envoy may read a regular expression otherwise than Go, as codes and fields: topology
// writes no sentence of them, render does (render.GraphProblemText, render.RegexDiffersText;
// docs/limits.md, "Regular expressions").

package topology

import "github.com/agpol/agpol/internal/snapshot"

// Problem is something wrong the graph noticed while resolving (an invalid regular
// expression, a match the data plane rejects, an invalid label selector), as data. Lint
// reports these; routing treats the offending match as never matching. Which fields are
// set depends on Why.
type Problem struct {
	Object Ref
	Source snapshot.Source // position of Field when known, else of the object
	Field  string          // e.g. "spec.rules[0].matches[1].path.value"
	// Why is a Problem* constant.
	Why string
	// MatchType is the match type the data plane does not support (ProblemPathType,
	// ProblemHeaderType).
	MatchType string
	// Regex is the regular expression (ProblemRegexInvalid); Err is Go's regexp error
	// for it, or the label selector parser's for the listener's namespace selector
	// (ProblemSelectorInvalid).
	Regex string
	Err   string
	// Differs is how Envoy and Go read the regular expression differently
	// (ProblemRegexDiffers, ProblemRegexUnmatched).
	Differs *RegexDiffers
	// Listener is the listener whose allowedRoutes selector is unusable (ProblemSelector*).
	Listener string
}

// What the graph finds wrong (Problem.Why).
const (
	ProblemPathNoValue     = "path-no-value"    // a path match without a value: the reference controller drops the match
	ProblemPathType        = "path-type"        // an unsupported path match type (MatchType): the controller drops the match
	ProblemHeaderType      = "header-type"      // an unsupported header match type (MatchType): the controller drops the match
	ProblemRegexInvalid    = "regex-invalid"    // Regex is no regular expression (Err): the match never matches
	ProblemRegexUnmatched  = "regex-unmatched"  // Envoy accepts Regex, Go cannot run it (Differs): agpol never matches it
	ProblemRegexDiffers    = "regex-differs"    // Envoy may read Regex otherwise than agpol (Differs)
	ProblemSelectorMissing = "selector-missing" // Listener's allowedRoutes says from Selector and sets no selector
	ProblemSelectorInvalid = "selector-invalid" // Listener's allowedRoutes namespace selector does not parse (Err)
)

// RegexDiffers is why Envoy may read a regular expression of a route match otherwise
// than agpol does (compileRouteRegex), as data: RouteResult.Uncertain, Target.Uncertain,
// UncertainRoute and Problem.Differs carry it.
type RegexDiffers struct {
	// Why is a Regex* constant.
	Why string
	// Regex is the regular expression as written.
	Regex string
	// Instructions is about how many RE2 instructions Regex compiles to, Limit Envoy's
	// limit (RegexOverLimit).
	Instructions, Limit int
}

// Why Envoy may read a regular expression otherwise (RegexDiffers.Why).
const (
	RegexAnyByte   = "any-byte"   // \C: RE2 (Envoy) accepts it, Go's regexp does not
	RegexOverLimit = "over-limit" // over Envoy's program size limit: Envoy refuses the route configuration
)
