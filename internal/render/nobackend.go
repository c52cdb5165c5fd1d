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
	if nb.Why == topology.NoBackendNoRoute && nb.Miss != nil {
		s = "no route: " + RouteMissText(nb.Miss)
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
		return RuleProblemText(nb.Rule) // "route rule answers 500: …"
	case topology.NoBackendRef:
		return "the data plane answers 500: " + BackendProblemText(nb.Backend)
	}
	return nb.Why
}

// NoBackendProblem is the why of a path that reaches no backend as -o json's "problem"
// carries it: the rule's problem (NoBackendRule), the backendRef's (NoBackendRef), why
// no route takes the request (NoBackendNoRoute); "" for the others or nb nil.
func NoBackendProblem(nb *topology.NoBackend) string {
	switch {
	case nb == nil:
		return ""
	case nb.Why == topology.NoBackendRule:
		return RuleProblemText(nb.Rule)
	case nb.Why == topology.NoBackendRef:
		return BackendProblemText(nb.Backend)
	case nb.Why == topology.NoBackendNoRoute:
		return RouteMissText(nb.Miss)
	}
	return ""
}

// noBackendView is a copy of nb with its Problem written, for -o json (nil stays nil;
// nb itself is not changed: explain's data is shared).
func noBackendView(nb *topology.NoBackend) *topology.NoBackend {
	if nb == nil {
		return nil
	}
	v := *nb
	v.Problem = NoBackendProblem(nb)
	return &v
}

// RuleProblemText is why the data plane answers 500 for a whole route rule
// (topology.RuleProblem; Gateway API HTTPBackendRef, docs/routing.md); "" for nil.
func RuleProblemText(p *topology.RuleProblem) string {
	if p == nil {
		return ""
	}
	switch p.Why {
	case topology.RuleBackendFails:
		return fmt.Sprintf("route rule answers 500: backendRefs[%d]: %s", p.BackendRef, BackendProblemText(p.Backend))
	case topology.RuleNoWeight:
		return "route rule answers 500: no backendRef with a weight above 0"
	}
	return "route rule answers 500: " + p.Why
}

// BackendProblemText is why a backendRef fails to resolve (topology.BackendProblem),
// ending with the reason Gateway API's ResolvedRefs condition gives; "" for nil.
func BackendProblemText(p *topology.BackendProblem) string {
	if p == nil {
		return ""
	}
	r := p.Ref
	switch p.Why {
	case topology.BrokenRefNotPermitted:
		return fmt.Sprintf("cross-namespace reference from HTTPRoute %s/%s to Service %s/%s is not permitted by a ReferenceGrant in namespace %s (RefNotPermitted)",
			p.Route.Namespace, p.Route.Name, r.Namespace, r.Name, r.Namespace)
	case topology.BrokenXBackendNotFound:
		return fmt.Sprintf("XBackend %s/%s not found (BackendNotFound)", r.Namespace, r.Name)
	case topology.BrokenServiceNotFound:
		return fmt.Sprintf("Service %s/%s%s not found (BackendNotFound)", r.Namespace, r.Name, ofXBackend(p.Of))
	case topology.BrokenServiceNotInInput:
		return fmt.Sprintf("Service %s/%s%s not found: the input carries the Services of namespace %s, not this one (BackendNotFound)",
			r.Namespace, r.Name, ofXBackend(p.Of), r.Namespace)
	case topology.BrokenXBackendKind:
		return fmt.Sprintf("unsupported backend kind XBackend on a Gateway of the %s data plane: only kube-agentic-networking serves XBackends (InvalidKind)", p.DataPlane)
	case topology.BrokenKindUnsupported:
		return fmt.Sprintf("unsupported backend kind %s (InvalidKind)", r.Kind)
	}
	return p.Why
}

// ofXBackend is " of XBackend NS/NAME" for the XBackend whose Service a problem names,
// "" for a Service backendRef (of zero).
func ofXBackend(of topology.Ref) string {
	if of.Kind == "" {
		return ""
	}
	return fmt.Sprintf(" of XBackend %s/%s", of.Namespace, of.Name)
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
