package explain

import "github.com/agpol/agpol/internal/topology"

// UncertainRouteBy is the DecidedBy of a decision made indeterminate because Envoy may
// route the request otherwise than agpol (topology.RouteResult.Uncertain).
const UncertainRouteBy = "uncertain-route"

// uncertainRoute makes d indeterminate: a match that could take the request has a
// regular expression Envoy and Go read differently (docs/limits.md, "Regular
// expressions"), why says which, as data (render writes it). What agpol decided on its
// own routing stays in the cause and the trace's first step (Was).
func uncertainRoute(d Decision, why *topology.RegexDiffers) Decision {
	was := &Was{Verdict: d.Verdict, DecidedBy: d.DecidedBy, Level: d.Level}
	trace := append([]Step{{Level: "none", Phase: "route", Outcome: OutcomeInfo, Event: EventUncertainRoute, Uncertain: why, Was: was}}, d.Trace...)
	return Decision{
		Verdict:   Indeterminate,
		Level:     "none",
		DecidedBy: UncertainRouteBy,
		Semantics: d.Semantics,
		Cause:     &Cause{Event: CauseUncertainRoute, Uncertain: why, Was: was},
		Trace:     trace,
	}
}

// MarkUncertain makes every decision e finishes indeterminate (uncertain-route), why
// saying why Envoy may route the call otherwise (topology.Graph.UncertainRoute); nothing
// when why is nil. The decision space marks its paths so, as explain marks a request.
func (e *PathEnd) MarkUncertain(why *topology.RegexDiffers) { e.uncertain = why }
