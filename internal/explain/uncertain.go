package explain

import (
	"fmt"
	"strings"
)

// UncertainRouteBy is the DecidedBy of a decision made indeterminate because Envoy may
// route the request otherwise than agpol (topology.RouteResult.Uncertain).
const UncertainRouteBy = "uncertain-route"

// uncertainRoute makes d indeterminate: a match that could take the request has a
// regular expression Envoy and Go read differently (docs/limits.md, "Regular
// expressions"), why says which. What agpol decided on its own routing stays in the
// reason and the trace.
func uncertainRoute(d Decision, why string) Decision {
	was := fmt.Sprintf("as agpol routes it: %s by %s at level %s", strings.ToUpper(d.Verdict), d.DecidedBy, d.Level)
	trace := append([]Step{{Level: "none", Phase: "route", Outcome: OutcomeInfo, Reason: why + "; " + was}}, d.Trace...)
	return Decision{
		Verdict:   Indeterminate,
		Level:     "none",
		DecidedBy: UncertainRouteBy,
		Semantics: d.Semantics,
		Reason:    fmt.Sprintf("cannot decide: Envoy may route the request otherwise: %s (%s)", why, was),
		Trace:     trace,
	}
}

// MarkUncertain makes every decision e finishes indeterminate (uncertain-route), why
// saying why Envoy may route the call otherwise (topology.Graph.UncertainRoute); nothing
// when why is "". The decision space marks its paths so, as explain marks a request.
func (e *PathEnd) MarkUncertain(why string) { e.uncertain = why }
