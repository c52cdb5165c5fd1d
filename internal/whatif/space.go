package whatif

import (
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Where an identity of the space comes from.
const (
	FromServiceAccount = "serviceaccount" // a ServiceAccount object of the snapshot
	FromPolicy         = "policy"         // named by a rule source of an XAccessPolicy
	FromSynthetic      = "synthetic"      // anonymous, or the stand-in for any other caller
)

// OtherLabel names the synthetic identity that stands for every authenticated caller
// no rule names; OtherTool the synthetic tool no policy names.
const (
	OtherLabel = "<other authenticated>"
	OtherTool  = "<other tool>"
)

// otherPrincipal is the SPIFFE ID of the synthetic other caller (no rule can name it:
// the path has characters the SPIFFE pattern of the API forbids).
const otherPrincipal = "spiffe://agpol.invalid/<any other authenticated caller>"

// Caller is a caller of the decision space.
type Caller struct {
	// ID is the short form: sa:NS/NAME, a SPIFFE ID, anonymous or <other authenticated>.
	ID string `json:"id"`
	explain.Caller
	// Other marks the synthetic stand-in for every authenticated caller no rule names.
	Other bool `json:"other,omitempty"`
	// From lists where the identity comes from (serviceaccount, policy, synthetic).
	From      []string `json:"from"`
	principal string
}

// Principal is the peer principal the data plane sees with a client certificate.
func (id *Caller) Principal() string { return id.principal }

// Op is one operation on a backend: an MCP method, and the tool for tools/call.
type Op struct {
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	// Other marks the synthetic "<other tool>": a tool name no policy mentions.
	Other bool `json:"other,omitempty"`
	// FromPolicies marks a tool name taken from the policies (no inventory for the backend).
	FromPolicies bool `json:"fromPolicies,omitempty"`
}

// Label is the column name: the method for base-protocol methods, the tool otherwise.
func (o Op) Label() string {
	if o.Method == "tools/call" {
		return o.Tool
	}
	return o.Method
}

// Key identifies an operation across snapshots.
func (o Op) Key() string { return o.Method + "\x00" + o.Tool }

// Base-protocol operations every target has.
var baseOps = []Op{{Method: "initialize"}, {Method: "tools/list"}}

// Target is one (gateway, listener, backend) path of the topology.
type Target struct {
	Gateway  string `json:"gateway"`
	Listener string `json:"listener"`
	// Protocol of the listener: on plain HTTP nobody presents a client certificate.
	Protocol string `json:"protocol"`
	// BackendKind is XBackend or Service (a Service backend has gateway-level policies only).
	BackendKind string `json:"backendKind"`
	Backend     string `json:"backend"`
	// Routes are the HTTPRoutes (NS/NAME) whose rules reach the backend on this listener.
	Routes []string `json:"routes"`
	// BackendAssumed says which object of the backend agpol assumed exists, when the
	// input cannot tell (topology.BackendTarget.Assumed: files without it, a refused read);
	// render writes it.
	BackendAssumed topology.Assumption `json:"-"`
	// ToolsFrom is "inventory" or "policies" (names the policies mention, plus <other tool>).
	ToolsFrom string `json:"toolsFrom"`
	Ops       []Op   `json:"ops"`
	// UncertainRoute says why Envoy may route calls of this path otherwise than agpol
	// (topology.Graph.UncertainRoute): every decision on it is indeterminate
	// (uncertain-route), as explain answers such a request; nil when Envoy routes them
	// as agpol does. Render writes it.
	UncertainRoute *topology.RegexDiffers `json:"-"`

	gw, be topology.Ref
	// offers are the tools the backend offers: the inventory's, else those its
	// backend-level policies name (none for a Service backend).
	offers map[string]bool
}

// Offers reports whether the inventory, or else the backend's own policies, name tool.
func (t *Target) Offers(tool string) bool { return t.offers[tool] }

// Key identifies a target across snapshots.
func (t *Target) Key() string {
	return t.Gateway + "\x00" + t.Listener + "\x00" + t.BackendKind + "\x00" + t.Backend
}

// Label is "infra/edge:https → XBackend pay/ledger".
func (t *Target) Label() string {
	return t.Gateway + ":" + t.Listener + " → " + t.BackendKind + " " + t.Backend
}

// PlainHTTP reports whether callers reach the target without a client certificate.
func (t *Target) PlainHTTP() bool { return t.Protocol == string(gwapiv1.HTTPProtocolType) }

// identities lists the callers of a snapshot: ServiceAccounts, identities named by rule
// sources, anonymous, and the synthetic other caller. Sorted: ServiceAccounts by
// namespace/name, then SPIFFE IDs, then anonymous, then the other caller.
func identities(s *snapshot.Snapshot, td string) []*Caller {
	byPrincipal := map[string]*Caller{}
	add := func(id explain.Caller, from string) {
		p := id.Principal(td)
		if x, ok := byPrincipal[p]; ok {
			if !contains(x.From, from) {
				x.From = append(x.From, from)
				sort.Strings(x.From)
			}
			return
		}
		// A SPIFFE ID that is a ServiceAccount's identity in the trust domain is that ServiceAccount.
		if id.Kind == explain.CallerSPIFFE {
			if ns, name, ok := saOfSPIFFE(id.SPIFFE, td); ok {
				id = explain.Caller{Kind: explain.CallerServiceAccount, Namespace: ns, Name: name}
			}
		}
		byPrincipal[p] = &Caller{ID: id.String(), Caller: id, From: []string{from}, principal: p}
	}
	for _, sa := range s.ServiceAccounts {
		add(explain.Caller{Kind: explain.CallerServiceAccount, Namespace: sa.Namespace, Name: sa.Name}, FromServiceAccount)
	}
	for _, p := range s.XAccessPolicies {
		if p.Legacy != nil {
			for _, r := range p.Legacy.Spec.Rules {
				if r.Source.SPIFFE != nil && *r.Source.SPIFFE != "" {
					add(explain.Caller{Kind: explain.CallerSPIFFE, SPIFFE: string(*r.Source.SPIFFE)}, FromPolicy)
				}
				if sa := r.Source.ServiceAccount; sa != nil && sa.Name != "" {
					add(saIdentity(sa.Namespace, sa.Name, p.Namespace), FromPolicy)
				}
			}
			continue
		}
		for _, r := range p.Spec.Rules {
			if r.Source.SPIFFE != nil && *r.Source.SPIFFE != "" {
				add(explain.Caller{Kind: explain.CallerSPIFFE, SPIFFE: string(*r.Source.SPIFFE)}, FromPolicy)
			}
			if sa := r.Source.ServiceAccount; sa != nil && sa.Name != "" {
				add(saIdentity(sa.Namespace, sa.Name, p.Namespace), FromPolicy)
			}
		}
	}
	out := make([]*Caller, 0, len(byPrincipal)+2)
	for _, id := range byPrincipal {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return identityLess(out[i], out[j]) })
	out = append(out,
		&Caller{ID: "anonymous", Caller: explain.Caller{Kind: explain.CallerAnonymous}, From: []string{FromSynthetic}},
		&Caller{ID: OtherLabel, Caller: explain.Caller{Kind: explain.CallerSPIFFE, SPIFFE: otherPrincipal}, Other: true,
			From: []string{FromSynthetic}, principal: otherPrincipal})
	return out
}

func identityLess(a, b *Caller) bool {
	rank := func(x *Caller) int {
		switch {
		case x.Other:
			return 3
		case x.Kind == explain.CallerAnonymous:
			return 2
		case x.Kind == explain.CallerSPIFFE:
			return 1
		}
		return 0
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra < rb
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.ID < b.ID
}

func saIdentity(ns, name, policyNS string) explain.Caller {
	if ns == "" {
		ns = policyNS
	}
	return explain.Caller{Kind: explain.CallerServiceAccount, Namespace: ns, Name: name}
}

// saOfSPIFFE recognises spiffe://TD/ns/NS/sa/NAME.
func saOfSPIFFE(id, td string) (string, string, bool) {
	rest, ok := strings.CutPrefix(id, "spiffe://"+td+"/ns/")
	if !ok {
		return "", "", false
	}
	ns, name, ok := strings.Cut(rest, "/sa/")
	if !ok || ns == "" || name == "" || strings.Contains(ns, "/") || strings.Contains(name, "/") {
		return "", "", false
	}
	return ns, name, true
}

// targets lists the (gateway, listener, backend) paths that reach a backend: every
// accepted route rule of a programmed listener, deduplicated. Paths the data plane
// answers with 500 (missing backend, broken rule) or that reach no backend are left out:
// no tool can be called through them.
func targets(g *topology.Graph) []*Target {
	var out []*Target
	byKey := map[string]*Target{}
	for _, gw := range g.Gateways() {
		gref := topology.GatewayRef(gw.Namespace, gw.Name)
		protos := map[string]string{}
		for _, l := range gw.Spec.Listeners {
			protos[string(l.Name)] = string(l.Protocol)
		}
		for _, p := range g.Paths(gref) {
			b := p.Backend
			if p.RuleProblem != nil || b.Problem != nil || (b.Kind != topology.BackendXBackend && b.Kind != topology.BackendService) || b.Weight <= 0 {
				continue
			}
			t := &Target{Gateway: gw.Namespace + "/" + gw.Name, Listener: p.Listener, Protocol: protos[p.Listener],
				BackendKind: b.Kind, Backend: b.Ref.Namespace + "/" + b.Ref.Name, BackendAssumed: b.Assumed, gw: gref}
			if b.Kind == topology.BackendXBackend {
				t.be = topology.XBackendRef(b.Ref.Namespace, b.Ref.Name)
			} else {
				t.be = topology.ServiceRef(b.Ref.Namespace, b.Ref.Name)
			}
			route := p.Route.Namespace + "/" + p.Route.Name
			if x, ok := byKey[t.Key()]; ok {
				if !contains(x.Routes, route) {
					x.Routes = append(x.Routes, route)
				}
				continue
			}
			t.Routes = []string{route}
			t.UncertainRoute = g.UncertainRoute(gref, p.Listener, t.be)
			byKey[t.Key()] = t
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return targetLess(out[i], out[j]) })
	return out
}

func targetLess(a, b *Target) bool {
	if a.Backend != b.Backend {
		return a.Backend < b.Backend
	}
	if a.BackendKind != b.BackendKind {
		return a.BackendKind > b.BackendKind // XBackend before Service
	}
	if a.Gateway != b.Gateway {
		return a.Gateway < b.Gateway
	}
	return a.Listener < b.Listener
}

// chainOf returns the compiled chain of a target under one engine.
func chainOf(e *effective.Engine, t *Target) *effective.Chain {
	if t.BackendKind == topology.BackendXBackend {
		be := t.be
		return e.Chain(t.gw, t.Listener, &be)
	}
	return e.Chain(t.gw, t.Listener, nil)
}

// chainFacts collects what a chain names: the principals of its rules and the tool names
// of its tools/call matchers and of CEL string literals compared with the tool name.
type chainFacts struct {
	principals map[string]bool
	tools      map[string]bool
	hasCEL     bool
}

func factsOf(c *effective.Chain, f *chainFacts) {
	for _, l := range c.Levels() {
		levelFacts(l, f)
	}
}

// offersOf adds to tools the tool names of the backend level of c: the tools the
// policies show its backend offers (gateway-level rules apply to every backend).
func offersOf(c *effective.Chain, tools map[string]bool) {
	f := chainFacts{principals: map[string]bool{}, tools: tools}
	for _, l := range c.Levels() {
		if l.Name == effective.LevelBackend {
			levelFacts(l, &f)
		}
	}
}

func levelFacts(l *effective.Level, f *chainFacts) {
	var rules []*effective.Rule
	rules = append(rules, l.Merged...)
	rules = append(rules, l.LegacyExt...)
	if l.ExtAuth != nil {
		rules = append(rules, l.ExtAuth.Rules...)
	}
	for _, p := range l.Allow {
		rules = append(rules, p.Rules...)
	}
	for _, r := range rules {
		if v := r.Principal.Value; v != "" && !r.Principal.Any && !r.Principal.None {
			f.principals[v] = true
		}
		for _, m := range r.Permission.Methods {
			if m.Name == "tools/call" || m.Name == "tools/" {
				for _, t := range m.Params {
					f.tools[t] = true
				}
			}
		}
		if r.Permission.CEL != nil {
			f.hasCEL = true
			for _, t := range celToolLiterals(r.Permission.CEL.Expression) {
				f.tools[t] = true
			}
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
