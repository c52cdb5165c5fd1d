package whatif

import (
	"strings"
	"time"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/snapshot"
)

// PersonaCell is Authorino's answer for one persona on one Kuadrant path.
type PersonaCell struct {
	Persona string `json:"persona"`
	// Verdict is allow, deny or indeterminate; Code the HTTP status (401, 403, ...).
	Verdict string `json:"verdict"`
	Code    int    `json:"code,omitempty"`
	Reason  string `json:"reason"`
}

// PersonaRow is one Kuadrant path (Gateway → listener → HTTPRoute → rule) on a Gateway
// Kuadrant programs, with the answer for each persona.
type PersonaRow struct {
	Path     string        `json:"path"`
	Policies []string      `json:"policies"`
	Cells    []PersonaCell `json:"cells"`
}

// PersonaMatrix answers "which personas reach this route": every persona on every path
// an effective kuadrant.io/v1 AuthPolicy protects, decided as Authorino decides
// (authpolicy.Decide; docs/kuadrant-identities.md). Request attributes (method, path,
// host, headers) are known only where the route rule fixes them (ruleRequest): what
// depends on the others is indeterminate.
type PersonaMatrix struct {
	Personas []string     `json:"personas"`
	Rows     []PersonaRow `json:"rows"`
}

// Personas decides every persona on every path an AuthPolicy protects; at is the
// request time (zero: a token's expiry is not decided).
func Personas(s *snapshot.Snapshot, personas []explain.Persona, at time.Time) *PersonaMatrix {
	res := authpolicy.Compute(s)
	m := &PersonaMatrix{}
	for _, p := range personas {
		m.Personas = append(m.Personas, p.Name)
	}
	for _, pr := range res.Paths {
		if pr.Effective == nil || len(pr.Effective.Policies) == 0 || pr.Unprogrammed != "" {
			continue
		}
		row := PersonaRow{Path: pr.Path.String()}
		for _, pol := range pr.Effective.Policies {
			row.Policies = append(row.Policies, pol.Ref)
		}
		base := ruleRequest(res.Topology.Route(pr.Path.Route), pr.Path.Rule)
		for _, p := range personas {
			req := base
			req.Identity, req.Metadata, req.Time = p.Identity, p.Metadata, at
			if len(p.Decisions) > 0 {
				req.Decisions = map[string]string{}
				for k, v := range p.Decisions {
					req.Decisions[k] = string(v)
				}
			}
			row.Cells = append(row.Cells, personaCell(p.Name, authpolicy.Decide(pr.Effective, req, res.Env)))
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// ruleRequest is what a route rule fixes of every request it takes: the host when the
// route has one hostname, the method and path when the rule has one match with a method
// and an exact path. The rest is unknown.
func ruleRequest(rn *authpolicy.RouteNode, rule string) authpolicy.Request {
	var req authpolicy.Request
	if rn == nil || rn.Object == nil {
		return req
	}
	if h := rn.Object.Spec.Hostnames; len(h) == 1 && !strings.HasPrefix(string(h[0]), "*") {
		req.Host = string(h[0])
	}
	for i, name := range rn.Rules {
		if name != rule || i >= len(rn.Object.Spec.Rules) {
			continue
		}
		ms := rn.Object.Spec.Rules[i].Matches
		if len(ms) != 1 || ms[0].Method == nil || ms[0].Path == nil || ms[0].Path.Type == nil || *ms[0].Path.Type != gwapiv1.PathMatchExact || ms[0].Path.Value == nil {
			continue
		}
		req.Method, req.Path = string(*ms[0].Method), *ms[0].Path.Value
	}
	return req
}

func personaCell(name string, ev *authpolicy.Evaluation) PersonaCell {
	c := PersonaCell{Persona: name, Verdict: authpolicy.OutcomeIndeterminate}
	switch {
	case ev.Applies == authpolicy.False:
		c.Verdict, c.Code, c.Reason = authpolicy.OutcomeAllow, 200, "the policy's when conditions do not hold: it is skipped"
	case ev.Applies == authpolicy.Unknown:
		c.Reason = "whether the policy's when conditions hold depends on the request"
	case ev.Outcome == nil:
		c.Reason = "the persona has no identity"
		if len(ev.Problems) > 0 {
			c.Reason = ev.Problems[0]
		}
	default:
		c.Verdict, c.Code, c.Reason = ev.Outcome.Verdict, ev.Outcome.Code, ev.Outcome.Reason
	}
	return c
}
