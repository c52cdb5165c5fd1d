package whatif

import (
	"slices"
	"strings"
	"time"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
)

// PersonaCell is Authorino's answer for one persona on one Kuadrant path.
type PersonaCell struct {
	Persona string `json:"persona"`
	// Verdict is allow, deny or indeterminate; Code the HTTP status (401, 403, ...).
	Verdict string `json:"verdict"`
	Code    int    `json:"code,omitempty"`
	// Why is Authorino's reason, as data, where Authorino decided or a rule cannot be
	// read; Reason is its sentence (written by render), or why the persona is not decided.
	Why *authpolicy.Why `json:"-"`
	// Skip says why Authorino did not decide (Persona* codes), "" when it did.
	Skip   string `json:"-"`
	Reason string `json:"reason"`
	// Tied is what each path answers whose wasm action set ties with this path's in
	// kuadrant-operator's order (docs/semantics.md#kuadrant-tied), this path first; nil
	// when none ties. When they answer differently, Verdict is indeterminate.
	Tied []PersonaTie `json:"tied,omitempty"`
}

// PersonaTie is one tied path's answer for a persona.
type PersonaTie struct {
	Path     string   `json:"path"`
	Policies []string `json:"policies"`
	Verdict  string   `json:"verdict"`
	Code     int      `json:"code,omitempty"`
}

// PersonaRow is one Kuadrant path (Gateway → listener → HTTPRoute → rule) on a Gateway
// Kuadrant programs, with the answer for each persona.
type PersonaRow struct {
	Path string `json:"path"`
	// Gateway and Route are the path's Gateway and HTTPRoute ("ns/name"); Backends the
	// Services its route rule sends to ("ns/name", and XBackends as "XBackend ns/name").
	Gateway  string        `json:"gateway"`
	Route    string        `json:"route"`
	Backends []string      `json:"backends,omitempty"`
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

// Personas decides every persona on every path an AuthPolicy protects in model md's
// snapshot; at is the request time (zero: a token's expiry is not decided).
func Personas(md *model.Model, personas []explain.Persona, at time.Time) *PersonaMatrix {
	res := md.AuthPolicy()
	m := &PersonaMatrix{}
	for _, p := range personas {
		m.Personas = append(m.Personas, p.Name)
	}
	for _, pr := range res.Paths {
		if pr.Effective == nil || len(pr.Effective.Policies) == 0 || pr.Unprogrammed != nil {
			continue
		}
		rn := res.Topology.Route(pr.Path.Route)
		row := PersonaRow{Path: pr.Path.String(), Gateway: pr.Path.Gateway, Route: pr.Path.Route, Backends: ruleBackends(rn, pr.Path.Rule)}
		for _, pol := range pr.Effective.Policies {
			row.Policies = append(row.Policies, pol.Ref)
		}
		base := ruleRequest(rn, pr.Path.Rule)
		tied := tiedPaths(res, pr)
		for _, p := range personas {
			req := base
			req.Identity, req.Metadata, req.Time = p.Identity, p.Metadata, at
			if len(p.Decisions) > 0 {
				req.Decisions = map[string]string{}
				for k, v := range p.Decisions {
					req.Decisions[k] = string(v)
				}
			}
			c := personaCell(p.Name, authpolicy.Decide(pr.Effective, req, res.Env))
			if len(tied) > 0 {
				c = tiedCell(c, row, tied, req, res)
			}
			row.Cells = append(row.Cells, c)
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// tiedPaths are the paths whose action sets tie with pr's, whatever the request (a
// persona's request is known only as far as the rule fixes it), each once, in path order.
func tiedPaths(res *authpolicy.Result, pr *authpolicy.PathResult) []*authpolicy.PathResult {
	var out []*authpolicy.PathResult
	for _, t := range res.Ties(pr) {
		if !slices.ContainsFunc(out, func(q *authpolicy.PathResult) bool { return q.Path.ID() == t.Path.Path.ID() }) {
			out = append(out, t.Path)
		}
	}
	slices.SortFunc(out, func(a, b *authpolicy.PathResult) int { return strings.Compare(a.Path.ID(), b.Path.ID()) })
	return out
}

// tiedCell is c with each tied path's answer for the same request: the wasm-shim may
// run any of their AuthConfigs (docs/semantics.md#kuadrant-tied). The same verdict
// everywhere stands; different verdicts make the cell indeterminate.
func tiedCell(c PersonaCell, row PersonaRow, tied []*authpolicy.PathResult, req authpolicy.Request, res *authpolicy.Result) PersonaCell {
	c.Tied = []PersonaTie{{Path: row.Path, Policies: row.Policies, Verdict: c.Verdict, Code: c.Code}}
	same := true
	for _, q := range tied {
		o := personaCell(c.Persona, authpolicy.Decide(q.Effective, req, res.Env))
		t := PersonaTie{Path: q.Path.String(), Verdict: o.Verdict, Code: o.Code}
		for _, pol := range q.Effective.Policies {
			t.Policies = append(t.Policies, pol.Ref)
		}
		same = same && o.Verdict == c.Verdict && o.Code == c.Code
		c.Tied = append(c.Tied, t)
	}
	if !same {
		c.Verdict, c.Code, c.Why, c.Skip = authpolicy.OutcomeIndeterminate, 0, nil, ""
	}
	return c
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

// Why Authorino does not decide a persona (PersonaCell.Skip).
const (
	PersonaWhenFalse   = "when-false"   // the policy's when conditions do not hold: skipped, allowed
	PersonaWhenUnknown = "when-unknown" // whether they hold depends on the request
	PersonaNoIdentity  = "no-identity"  // the persona has no identity
)

func personaCell(name string, ev *authpolicy.Evaluation) PersonaCell {
	c := PersonaCell{Persona: name, Verdict: authpolicy.OutcomeIndeterminate}
	switch {
	case ev.Applies == authpolicy.False:
		c.Verdict, c.Code, c.Skip = authpolicy.OutcomeAllow, 200, PersonaWhenFalse
	case ev.Applies == authpolicy.Unknown:
		c.Skip = PersonaWhenUnknown
	case ev.Outcome == nil:
		c.Skip = PersonaNoIdentity
		if len(ev.ProblemWhys) > 0 {
			c.Skip, c.Why = "", &ev.ProblemWhys[0]
		}
	default:
		c.Verdict, c.Code, c.Why = ev.Outcome.Verdict, ev.Outcome.Code, &ev.Outcome.Why
	}
	return c
}

// ruleBackends are the backends of a route rule: Services as "ns/name", other kinds as
// "Kind ns/name".
func ruleBackends(rn *authpolicy.RouteNode, rule string) []string {
	if rn == nil || rn.Object == nil {
		return nil
	}
	var out []string
	for i, name := range rn.Rules {
		if name != rule || i >= len(rn.Object.Spec.Rules) {
			continue
		}
		for _, b := range rn.Object.Spec.Rules[i].BackendRefs {
			ns := rn.Object.Namespace
			if b.Namespace != nil {
				ns = string(*b.Namespace)
			}
			ref := ns + "/" + string(b.Name)
			if b.Kind != nil && *b.Kind != "Service" {
				ref = string(*b.Kind) + " " + ref
			}
			out = append(out, ref)
		}
	}
	return out
}

// PersonaFilter narrows a persona matrix to the paths through a Gateway and to a
// backend ("ns/name": a Service, or an XBackend); empty fields select everything.
type PersonaFilter struct {
	Gateway, Backend string
}

// Filter keeps the rows f selects.
func (m *PersonaMatrix) Filter(f PersonaFilter) *PersonaMatrix {
	out := &PersonaMatrix{Personas: m.Personas}
	for _, r := range m.Rows {
		if f.Gateway != "" && r.Gateway != f.Gateway {
			continue
		}
		if f.Backend != "" && !slices.Contains(r.Backends, f.Backend) && !slices.Contains(r.Backends, "XBackend "+f.Backend) {
			continue
		}
		out.Rows = append(out.Rows, r)
	}
	return out
}

// PersonaAnswer is can-i for one persona: its answer on each selected path, and the
// verdict (allow when some path allows, as can-i answers; else indeterminate when some
// path cannot be decided; else deny).
type PersonaAnswer struct {
	Persona string            `json:"persona"`
	Verdict string            `json:"verdict"`
	Paths   []PersonaPathCell `json:"paths"`
}

// PersonaPathCell is a persona's answer on one path.
type PersonaPathCell struct {
	Path     string   `json:"path"`
	Policies []string `json:"policies"`
	PersonaCell
}

// Answer is can-i for the persona named name; false when the matrix has no such persona.
func (m *PersonaMatrix) Answer(name string) (*PersonaAnswer, bool) {
	i := slices.Index(m.Personas, name)
	if i < 0 {
		return nil, false
	}
	a := &PersonaAnswer{Persona: name, Verdict: authpolicy.OutcomeDeny}
	for _, r := range m.Rows {
		c := r.Cells[i]
		a.Paths = append(a.Paths, PersonaPathCell{Path: r.Path, Policies: r.Policies, PersonaCell: c})
		switch {
		case c.Verdict == authpolicy.OutcomeAllow:
			a.Verdict = authpolicy.OutcomeAllow
		case c.Verdict == authpolicy.OutcomeIndeterminate && a.Verdict == authpolicy.OutcomeDeny:
			a.Verdict = authpolicy.OutcomeIndeterminate
		}
	}
	return a, true
}
