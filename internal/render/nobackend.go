package render

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/topology"
)

// NoBackendSentence is the one sentence of a path that reaches no backend, as explain's
// trace and describe's chains both print it (docs/routing.md).
func NoBackendSentence(nb *topology.NoBackend) string {
	s := noBackendWhy(nb)
	if nb.Why == topology.NoBackendNoRoute && nb.Problem != "" {
		s = "no route: " + nb.Problem
		if nb.GatewayLevelRuns {
			return s + gatewayLevelRuns + " (RBAC runs before routing)"
		}
		return s
	}
	if nb.GatewayLevelRuns {
		s += gatewayLevelRuns
	}
	return s
}

const gatewayLevelRuns = "; only gateway-level policies run"

// noBackendWhy is why the path reaches no backend, without what still runs.
func noBackendWhy(nb *topology.NoBackend) string {
	switch nb.Why {
	case topology.NoBackendNoRoute:
		return "no route matches the request: the data plane answers 404"
	case topology.NoBackendRedirect:
		return "the rule answers with a redirect (no backend)"
	case topology.NoBackendNone:
		return "the rule has no backend"
	case topology.NoBackendRule:
		return nb.Problem // topology's: "route rule answers 500: …"
	case topology.NoBackendRef:
		return "the data plane answers 500: " + nb.Problem
	}
	return nb.Why
}

// PathProblem ends the path line of a path that reaches no backend (PathInfo.NoBackend,
// a topology.NoBackend* constant): "" when it reaches one. The full why is in the
// decision's reason or, when the gateway denies first, in the trace.
func PathProblem(p explain.PathInfo) string {
	switch p.NoBackend {
	case "":
		return ""
	case topology.NoBackendNoRoute:
		return "no route"
	case topology.NoBackendRedirect:
		return "the rule answers with a redirect (no backend)"
	case topology.NoBackendNone:
		return "the rule has no backend"
	}
	return "no backend (500)" // NoBackendRule, NoBackendRef
}

// noBackendSeeLast is the routing step of a path whose refusal decides: the why is said
// once, by the last step.
func noBackendSeeLast(nb *topology.NoBackend) string {
	s := "the rule reaches no backend (why: the last step)"
	if nb.GatewayLevelRuns {
		s += gatewayLevelRuns
	}
	return s
}

// refusedText is the reason of a request the data plane answers itself (nb nil: no
// route takes it) and what the chain had decided before (an explain.Before* constant).
func refusedText(nb *topology.NoBackend, before string) string {
	s := "no route takes the request: the data plane answers 404"
	switch {
	case nb != nil && nb.Why == topology.NoBackendNoRoute:
		if len(nb.HostsThatRoute) > 0 {
			s = "no route takes the request: it names no host"
			if nb.Host != "" {
				s = "no route takes host " + nb.Host
			}
			s += " (routes here take " + hostList(nb.HostsThatRoute) + "; name a host, a route or a backend): the data plane answers 404"
		}
	case nb != nil:
		s = "the request reaches no backend: " + noBackendWhy(nb)
	}
	switch before {
	case explain.BeforeIndeterminate:
		s += ", whatever the gateway authorizer answers (403 if it denies)"
	case explain.BeforeAllowed:
		s += ", after the gateway-level policies let it through"
	}
	return s
}

// noBackendLevelText is the routing step of a backend that is no XBackend: a core
// Service (kind nil) or a kind of the Gateway's data plane.
func noBackendLevelText(kind *topology.Ref) string {
	if kind == nil {
		return "backend is a core Service: no backend-level policies"
	}
	name := kind.Kind
	if kind.Group != "" {
		name += " (" + kind.Group + ")"
	}
	return "backend is a " + name + " of the Gateway's data plane: no backend-level policies"
}

// hostList names up to four hosts, then how many more.
func hostList(hosts []string) string {
	const most = 4
	if len(hosts) <= most {
		return strings.Join(hosts, ", ")
	}
	return strings.Join(hosts[:most], ", ") + fmt.Sprintf(" and %d more", len(hosts)-most)
}
