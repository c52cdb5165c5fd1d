// Package describe owns the view agpol describe prints. For a Gateway, HTTPRoute or
// XBackend: the data plane and listeners (Gateway), the XAccessPolicies attached to it
// (admitted or not, enforced or not), the gateway level once per group of listeners
// that share it, every path through it with its evaluation chain and what the data
// plane does on it (a plain HTTP listener carries no client certificate; a rule that
// reaches no backend answers 500), and the effective Kuadrant AuthPolicy. For an
// XAccessPolicy or AuthPolicy: its targets, where it applies and where not (and why),
// its rules, and what overrides or shadows it. It selects and decides; it prints
// nothing (render.DescribeText and render.DescribeDocument do).
package describe

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Kinds that can be described.
const (
	KindGateway       = "Gateway"
	KindHTTPRoute     = "HTTPRoute"
	KindXBackend      = "XBackend"
	KindXAccessPolicy = "XAccessPolicy"
	KindAuthPolicy    = "AuthPolicy"
)

// Policy is one XAccessPolicy attached to the described object.
type Policy struct {
	ID        string              `json:"policy"`
	Action    string              `json:"action"`
	Version   string              `json:"apiVersion"`
	Source    string              `json:"source,omitempty"`
	Admission effective.Admission `json:"admission"`
	// Why is nil when the policy runs, else why not; NotEnforced is its sentence for
	// -o json, written by render (render.NotRunText) in its copy.
	NotEnforced string  `json:"notEnforced,omitempty"`
	Why         *NotRun `json:"-"`
}

// Why a described XAccessPolicy does not run on a path or a target (NotRun.Why);
// render writes the sentence of each (render.NotRunText).
const (
	NotRunIgnored          = "ignored"            // the level leaves it out (Ignored)
	NotRunInert            = "inert"              // an ExternalAuth policy whose config has no ext_authz filter on the gateway (NoFilter)
	NotRunNoLevel          = "no-level"           // the path has no level for the target
	NotRunNotOnLevel       = "not-on-level"       // the level does not list it
	NotRunOtherDataPlane   = "other-data-plane"   // another data plane serves the gateway (OtherDataPlane)
	NotRunUnsupportedKind  = "unsupported-kind"   // the target is neither a Gateway nor an XBackend (Kind)
	NotRunTargetNotFound   = "target-not-found"   // the target is not in the input (Kind, Name)
	NotRunBackendNotRouted = "backend-not-routed" // no route of any gateway reaches the XBackend target
	NotRunGatewayNoRoute   = "gateway-no-route"   // no route is attached to the Gateway target
	NotRunPathsDiffer      = "paths-differ"       // it runs on no path of the target, each for its own reason
)

// NotRunWhys lists every NotRun* constant (render's tests check each has a sentence).
var NotRunWhys = []string{NotRunIgnored, NotRunInert, NotRunNoLevel, NotRunNotOnLevel, NotRunOtherDataPlane,
	NotRunUnsupportedKind, NotRunTargetNotFound, NotRunBackendNotRouted, NotRunGatewayNoRoute, NotRunPathsDiffer}

// NotRun is why a described XAccessPolicy does not run, as data: Why and the fields
// its sentence needs.
type NotRun struct {
	Why            string
	Ignored        *effective.Ignored
	NoFilter       *effective.NoExtAuthFilter
	OtherDataPlane *effective.OtherDataPlane
	// Kind and Name ("ns/name") name the target (NotRunUnsupportedKind,
	// NotRunTargetNotFound).
	Kind, Name string
}

// same reports whether a and b say the same (both nil included).
func (a *NotRun) same(b *NotRun) bool {
	switch {
	case a == nil || b == nil:
		return a == b
	case a.Why != b.Why || a.Kind != b.Kind || a.Name != b.Name:
		return false
	case (a.Ignored == nil) != (b.Ignored == nil) || (a.Ignored != nil && *a.Ignored != *b.Ignored):
		return false
	case (a.NoFilter == nil) != (b.NoFilter == nil) || (a.NoFilter != nil && *a.NoFilter != *b.NoFilter):
		return false
	case (a.OtherDataPlane == nil) != (b.OtherDataPlane == nil):
		return false
	}
	return a.OtherDataPlane == nil || a.OtherDataPlane.Gateway == b.OtherDataPlane.Gateway
}

// Path is one path through the described object with its chain.
type Path struct {
	// Gateway is "ns/name" and Listener the listener's name.
	Gateway  string `json:"gateway"`
	Listener string `json:"listener"`
	// Route is "ns/name", "" for a path without a route; RuleName or RuleIndex names
	// the route rule.
	Route     string `json:"route,omitempty"`
	RuleName  string `json:"ruleName,omitempty"`
	RuleIndex int    `json:"ruleIndex"`
	// BackendKind (topology.BackendXBackend, ...) and Backend ("ns/name") name the
	// backend the rule reaches; BackendKind is "" or topology.BackendNone without one.
	BackendKind string `json:"backendKind,omitempty"`
	Backend     string `json:"backend,omitempty"`
	// NoBackend is the sentence of Refused's problem for -o json, written by render
	// (render.NoBackendProblem); describe leaves it empty.
	NoBackend string `json:"noBackend,omitempty"`
	// Refused is why the rule reaches no backend, as data (nil when it reaches one).
	Refused *topology.NoBackend `json:"refused,omitempty"`
	// PlainHTTP is set when the listener is plain HTTP: callers present no client
	// certificate, so only rules that match any caller can match.
	PlainHTTP bool             `json:"plainHTTP,omitempty"`
	Chain     *effective.Chain `json:"chain,omitempty"`
	// GatewayLevel is the index in View.GatewayLevels of this path's gateway level, -1
	// when the view has none (an HTTPRoute or XBackend view).
	GatewayLevel int `json:"gatewayLevel"`
}

// Listener is one listener of a described Gateway.
type Listener struct {
	Name     string `json:"name"`
	Port     int32  `json:"port"`
	Protocol string `json:"protocol"`
	Hostname string `json:"hostname,omitempty"`
	// TLS is the listener's TLS mode ("Terminate", "Passthrough"), "" without TLS.
	TLS string `json:"tls,omitempty"`
	// MTLS is whether callers present a client certificate: MTLSRequired, MTLSNone or
	// MTLSUnknown (a data plane agpol does not model: DataPlane); MTLSWhy is why, written
	// by render (render.MTLSText) for -o json in its copy.
	MTLS      string             `json:"mtls"`
	MTLSWhy   string             `json:"mtlsWhy"`
	DataPlane topology.DataPlane `json:"-"`
	// AttachedRoutes counts the HTTPRoutes attached to the listener.
	AttachedRoutes int  `json:"attachedRoutes"`
	Programmed     bool `json:"programmed"`
	// Unprogrammed says why the data plane carries no routes on it (nil when it carries
	// them); NotProgrammed is its sentence, written by render (render.NotProgrammedText)
	// for -o json in its copy.
	Unprogrammed  *topology.NotProgrammed `json:"-"`
	NotProgrammed string                  `json:"notProgrammed,omitempty"`
	// ListenerSet is "namespace/name" of the ListenerSet the listener comes from, ""
	// for the Gateway's own.
	ListenerSet string `json:"listenerSet,omitempty"`
}

// GatewayLevel is the gateway level of a Gateway, shared by the listeners named.
type GatewayLevel struct {
	Listeners []string         `json:"listeners"`
	Level     *effective.Level `json:"level"`
}

// Target names the described object.
type Target struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// View is the effective view of one Gateway, HTTPRoute or XBackend.
type View struct {
	Target Target `json:"target"`
	// Kind and Name ("ns/name") repeat Target for the text.
	Kind      string `json:"-"`
	Name      string `json:"-"`
	Source    string `json:"source,omitempty"`
	Semantics string `json:"semantics"`
	// DataPlane is the data plane that serves a described Gateway, and why.
	DataPlane *topology.GatewayDataPlane `json:"dataPlane,omitempty"`
	// Listeners are a described Gateway's listeners, in spec order.
	Listeners []Listener `json:"listeners,omitempty"`
	// GatewayLevels are a described Gateway's gateway levels, one per group of
	// listeners that enforce the same one; each Path points to its own.
	GatewayLevels []GatewayLevel `json:"gatewayLevels,omitempty"`
	Policies      []Policy       `json:"accessPolicies,omitempty"`
	Paths         []Path         `json:"paths,omitempty"`
	// NotesText are the sentences of Notes for -o json, written by render
	// (render.ViewNoteText) in its copy.
	NotesText []string `json:"notes,omitempty"`
	Notes     []Note   `json:"-"`
	// AuthPolicy is the effective Kuadrant AuthPolicy per listener (Gateway) or per rule
	// and listener path (HTTPRoute); empty without AuthPolicies.
	AuthPolicy []*authpolicy.PathResult `json:"-"`
	// AuthPolicyPaths are AuthPolicy in the machine-readable form.
	AuthPolicyPaths []AuthPath `json:"authPolicy,omitempty"`
	// AccessPolicy is the view of a described XAccessPolicy.
	AccessPolicy *AccessPolicyView `json:"accessPolicy,omitempty"`
	// AuthPolicyStatus is the view of a described AuthPolicy.
	AuthPolicyStatus *AuthPolicyView `json:"authPolicyStatus,omitempty"`
	// AuthPolicyV1beta2 is the view of a described kuadrant.io/v1beta2 AuthPolicy.
	AuthPolicyV1beta2 *V1beta2AuthPolicyView `json:"authPolicyV1beta2,omitempty"`
	// V1beta2AuthPolicies are the kuadrant.io/v1beta2 AuthPolicies bearing on a
	// described Gateway or HTTPRoute (kuadrant-operator v0.6.1 semantics).
	V1beta2AuthPolicies []*V1beta2AuthPolicyView `json:"authPoliciesV1beta2,omitempty"`
	// RuleSources maps every XAccessPolicy rule ID of the view to where it is written.
	RuleSources map[string]string `json:"ruleSources,omitempty"`
}

// Whether callers of a listener present a client certificate (Listener.MTLS).
const (
	MTLSRequired = "required" // the kube-agentic-networking data plane requires one on HTTPS listeners
	MTLSNone     = "none"     // plain HTTP carries none
	MTLSUnknown  = "unknown"  // agpol does not model the listener's protocol on its data plane
)

// MTLSModes lists every MTLS* constant (render's tests check each has a sentence).
var MTLSModes = []string{MTLSRequired, MTLSNone, MTLSUnknown}

// Note is a remark on the view as data: Why (a Note* constant) and the fields its
// sentence needs (render.ViewNoteText writes it).
type Note struct {
	Why string
	// Gateway and Listener: where the route is not attached, and Attachment why
	// (NoteNotAttached).
	Gateway    topology.Ref
	Listener   string
	Attachment *topology.Attachment
}

// Remarks on a view (Note.Why).
const (
	NoteNotAttached      = "not-attached"       // the described route is not attached to a listener
	NoteRouteChains      = "route-chains"       // XAccessPolicies attach to Gateways and XBackends: the route's paths' chains
	NoteBackendNotRouted = "backend-not-routed" // no route of any gateway reaches the described XBackend
)

// NoteWhys lists every Note* constant (render's tests check each has a sentence).
var NoteWhys = []string{NoteNotAttached, NoteRouteChains, NoteBackendNotRouted}

// Build computes the view of the object of kind (KindGateway, KindHTTPRoute or
// KindXBackend) ns/name in m's snapshot under sem, with ServiceAccount identities in
// trust domain td. It fails when the object is not in the snapshot.
func Build(m *model.Model, sem effective.Semantics, td, kind, ns, name string) (*View, error) {
	return build(m, effective.NewEngineOn(m.Graph(), m.Snapshot, sem, td), kind, ns, name)
}

// build is Build with the engine of the semantics (one for every view of a List).
func build(m *model.Model, e *effective.Engine, kind, ns, name string) (*View, error) {
	s, g, sem := m.Snapshot, m.Graph(), e.Semantics
	d := &View{Target: Target{kind, ns, name}, Kind: kind, Name: ns + "/" + name, Semantics: sem.Name}
	var target topology.Ref
	var paths []topology.Path
	switch kind {
	case KindGateway:
		target = topology.GatewayRef(ns, name)
		gw := g.Gateway(target)
		if gw == nil {
			return nil, notFound(s, "gateway", ns, name)
		}
		d.Source = gw.Source.String()
		paths = g.Paths(target)
		dp := g.DataPlane(gw)
		d.DataPlane = &dp
		d.Listeners = listeners(g, gw, dp)
	case KindHTTPRoute:
		ref := topology.HTTPRouteRef(ns, name)
		rt := g.HTTPRoute(ref)
		if rt == nil {
			return nil, notFound(s, "httproute", ns, name)
		}
		d.Source = rt.Source.String()
		seen := map[topology.Ref]bool{}
		for _, at := range g.AttachmentsOfRoute(ref) {
			gr := topology.GatewayRef(at.Gateway.Namespace, at.Gateway.Name)
			if !at.Accepted {
				d.Notes = append(d.Notes, Note{Why: NoteNotAttached, Gateway: gr, Listener: at.Listener, Attachment: &at})
				continue
			}
			if seen[gr] {
				continue
			}
			seen[gr] = true
			for _, p := range g.Paths(gr) {
				if p.Route != nil && p.Route.Namespace == ns && p.Route.Name == name {
					paths = append(paths, p)
				}
			}
		}
		d.Notes = append(d.Notes, Note{Why: NoteRouteChains})
	case KindXBackend:
		target = topology.XBackendRef(ns, name)
		xb := g.XBackend(target)
		if xb == nil {
			return nil, notFound(s, "xbackend", ns, name)
		}
		d.Source = xb.Source.String()
		for _, gr := range g.GatewaysOfBackend(target) {
			for _, p := range g.Paths(gr) {
				if p.Backend.Kind == topology.BackendXBackend && p.Backend.Ref.Namespace == ns && p.Backend.Ref.Name == name {
					paths = append(paths, p)
				}
			}
		}
		if len(paths) == 0 {
			d.Notes = append(d.Notes, Note{Why: NoteBackendNotRouted})
		}
	case KindXAccessPolicy:
		return accessPolicyView(s, g, e, d)
	case KindAuthPolicy:
		return authPolicyView(m, d)
	default:
		return nil, fmt.Errorf("cannot describe kind %q", kind)
	}
	d.AuthPolicy = authPolicies(m, kind, ns, name)
	d.AuthPolicyPaths = authPaths(d.AuthPolicy)
	d.V1beta2AuthPolicies = v1beta2OnTarget(m, kind, ns, name)
	if target.Kind != "" {
		d.Policies = policies(s, e, kind, target)
	}
	for _, p := range paths {
		d.Paths = append(d.Paths, path(e, p))
	}
	if kind == KindGateway {
		d.GatewayLevels = gatewayLevels(d.Paths)
	}
	d.RuleSources = ruleSources(d)
	return d, nil
}

// listeners lists gw's listeners with their attached routes and programmed state.
func listeners(g *topology.Graph, gw *snapshot.Gateway, dp topology.GatewayDataPlane) []Listener {
	ref := topology.GatewayRef(gw.Namespace, gw.Name)
	attached := map[string]int{}
	for _, at := range g.Attachments(ref) {
		if at.Accepted {
			attached[at.Listener]++
		}
	}
	entries := make([]topology.SetListener, 0, len(gw.Spec.Listeners))
	for _, l := range gw.Spec.Listeners {
		entries = append(entries, topology.SetListener{Name: string(l.Name), Entry: gwapiv1.ListenerEntry(l)})
	}
	entries = append(entries, g.ListenerSetListeners(ref)...)
	var out []Listener
	for _, e := range entries {
		l := e.Entry
		li := Listener{Name: e.Name, Port: int32(l.Port), Protocol: string(l.Protocol), AttachedRoutes: attached[e.Name]}
		if e.ListenerSet != nil {
			li.ListenerSet = e.ListenerSet.Namespace + "/" + e.ListenerSet.Name
		}
		if l.Hostname != nil {
			li.Hostname = string(*l.Hostname)
		}
		if l.TLS != nil {
			li.TLS = "Terminate"
			if l.TLS.Mode != nil {
				li.TLS = string(*l.TLS.Mode)
			}
		}
		switch {
		case l.Protocol == gwapiv1.HTTPSProtocolType && dp.Agentic():
			li.MTLS = MTLSRequired
		case l.Protocol == gwapiv1.HTTPProtocolType:
			li.MTLS = MTLSNone
		default:
			li.MTLS, li.DataPlane = MTLSUnknown, dp.DataPlane
		}
		li.Unprogrammed = g.ListenerNotProgrammed(ref, li.Name)
		li.Programmed = li.Unprogrammed == nil
		out = append(out, li)
	}
	return out
}

// gatewayLevels groups the paths' gateway levels by what they enforce, in path order,
// and points each path to its group.
func gatewayLevels(paths []Path) []GatewayLevel {
	var out []GatewayLevel
	bySig := map[string]int{}
	for i := range paths {
		l := paths[i].Chain.Gateway
		sig := levelSignature(l)
		if o := paths[i].Chain.OtherDataPlane; o != nil {
			sig += "\x00" + o.Gateway.Namespace + "/" + o.Gateway.Name
		}
		k, ok := bySig[sig]
		if !ok {
			k = len(out)
			bySig[sig] = k
			out = append(out, GatewayLevel{Level: l})
		}
		if !slices.Contains(out[k].Listeners, paths[i].Listener) {
			out[k].Listeners = append(out[k].Listeners, paths[i].Listener)
		}
		paths[i].GatewayLevel = k
	}
	return out
}

// levelSignature identifies what a level enforces: its policies, rules and ignored ones.
func levelSignature(l *effective.Level) string {
	var b strings.Builder
	if l.ExtAuth != nil {
		fmt.Fprintf(&b, "x:%s/%t;", l.ExtAuth.ID(), l.ExtAuthFilter)
	}
	for _, p := range l.Allow {
		b.WriteString("a:" + p.ID() + ";")
		for _, r := range p.Rules {
			b.WriteString(r.ID() + ",")
		}
	}
	for _, r := range l.Merged {
		b.WriteString("m:" + r.ID() + ";")
	}
	for _, r := range l.LegacyExt {
		b.WriteString("l:" + r.ID() + ";")
	}
	for _, c := range l.Collisions {
		b.WriteString("c:" + c.Kept + "/" + c.Replaced + ";")
	}
	for _, ig := range l.Ignored {
		fmt.Fprintf(&b, "i:%s/%q;", ig.ID, []string{ig.Why, ig.Code, ig.From, ig.Message, ig.SectionName, ig.TargetKind, ig.Action, ig.UsedExtAuth})
	}
	return b.String()
}

// ruleSources maps each rule of the view's chains to where it is written.
func ruleSources(d *View) map[string]string {
	out := map[string]string{}
	add := func(rs []*effective.Rule) {
		for _, r := range rs {
			if !r.Builtin {
				out[r.ID()] = r.Source.String()
			}
		}
	}
	for _, p := range d.Paths {
		for _, l := range p.Chain.Levels() {
			if l.ExtAuth != nil {
				add(l.ExtAuth.Rules)
			}
			for _, p := range l.Allow {
				add(p.Rules)
			}
			add(l.Merged)
			add(l.LegacyExt)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// policies lists the XAccessPolicies naming target, by ID, each with its admission and
// why its level does not enforce it.
func policies(s *snapshot.Snapshot, e *effective.Engine, kind string, target topology.Ref) []Policy {
	notEnforced := map[string]*NotRun{}
	var lvl *effective.Level
	var other *effective.OtherDataPlane
	if kind == KindGateway {
		c := e.Chain(target, "", nil)
		other = c.OtherDataPlane
		lvl = c.Gateway
	} else {
		gw := topology.GatewayRef("", "")
		lvl = e.Chain(gw, "", &target).Backend
	}
	for i := range lvl.Ignored {
		notEnforced[lvl.Ignored[i].ID] = &NotRun{Why: NotRunIgnored, Ignored: &lvl.Ignored[i]}
	}
	var out []Policy
	targets := topology.IndexTargets(s)
	for _, p := range targets.AccessPolicies[target] {
		dp := Policy{ID: p.Namespace + "/" + p.Name, Action: string(p.Spec.Action), Version: p.APIVersion(),
			Source: p.Source.String(), Admission: e.Admission[p], Why: notEnforced[p.Namespace+"/"+p.Name]}
		if dp.Why == nil && other != nil {
			dp.Why = &NotRun{Why: NotRunOtherDataPlane, OtherDataPlane: other}
		}
		if dp.Action == "" {
			dp.Action = "<no action>"
		}
		out = append(out, dp)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// path is the view of one topology path: its chain and what the data plane does on it.
func path(e *effective.Engine, p topology.Path) Path {
	dp := Path{Gateway: p.Gateway.Namespace + "/" + p.Gateway.Name, Listener: p.Listener, RuleIndex: p.RuleIndex, RuleName: p.RuleName, GatewayLevel: -1}
	if p.Route != nil {
		dp.Route = p.Route.Namespace + "/" + p.Route.Name
	}
	for _, l := range p.Gateway.Spec.Listeners {
		if string(l.Name) == p.Listener && l.Protocol == gwapiv1.HTTPProtocolType {
			dp.PlainHTTP = true
		}
	}
	var be *topology.Ref
	dp.Refused = topology.NoBackendOf(p)
	if dp.Refused == nil && p.Backend.Kind == topology.BackendXBackend {
		ref := topology.XBackendRef(p.Backend.Ref.Namespace, p.Backend.Ref.Name)
		be = &ref
	}
	if p.Backend.Kind != "" && p.Backend.Kind != topology.BackendNone {
		dp.BackendKind, dp.Backend = p.Backend.Kind, p.Backend.Ref.Namespace+"/"+p.Backend.Ref.Name
	}
	dp.Chain = e.Chain(topology.GatewayRef(p.Gateway.Namespace, p.Gateway.Name), p.Listener, be)
	if dp.Refused != nil {
		dp.Refused.GatewayLevelRuns = dp.Chain != nil && dp.Chain.OtherDataPlane == nil
	}
	return dp
}

// AuthPath is the effective Kuadrant AuthPolicy of one path (prefix).
type AuthPath struct {
	Path authpolicy.Path `json:"path"`
	// PoliciesInPath are the policies folded, least specific first.
	PoliciesInPath []string `json:"policiesInPath"`
	// Effective are the rules in force, by key.
	Effective []EffectiveAuthRule `json:"effective"`
	// Lost are the rules that lost in the fold, and why.
	Lost []authpolicy.Lost `json:"lost,omitempty"`
	// Unprogrammed says why Kuadrant never programs the path's Gateway: the effective
	// policy is computed, but no data plane runs it. nil when one does; render writes
	// NotProgrammed, its text in -o json.
	Unprogrammed  *authpolicy.Reason `json:"-"`
	NotProgrammed string             `json:"notProgrammed,omitempty"`
}

// EffectiveAuthRule is one rule in force on a path: its key, the policy it comes from
// and where it is written.
type EffectiveAuthRule struct {
	Key    string `json:"key"`
	Policy string `json:"policy"`
	Source string `json:"source,omitempty"`
}

func authPaths(ps []*authpolicy.PathResult) []AuthPath {
	var out []AuthPath
	for _, p := range ps {
		ap := AuthPath{Path: p.Path, PoliciesInPath: []string{}, Effective: []EffectiveAuthRule{}, Unprogrammed: p.Unprogrammed}
		if p.Effective != nil {
			for _, pol := range p.Effective.Policies {
				ap.PoliciesInPath = append(ap.PoliciesInPath, pol.Ref)
			}
			for _, k := range p.Effective.Keys() {
				r := p.Effective.Rules[k]
				er := EffectiveAuthRule{Key: k, Policy: r.Source}
				if r.Position.Known() {
					er.Source = r.Position.String()
				}
				ap.Effective = append(ap.Effective, er)
			}
			ap.Lost = p.Effective.Lost
		}
		out = append(out, ap)
	}
	return out
}

// authPolicies selects the effective Kuadrant AuthPolicy of a Gateway (per listener) or
// an HTTPRoute (per rule and listener path); nil without AuthPolicies.
func authPolicies(m *model.Model, kind, ns, name string) []*authpolicy.PathResult {
	s := m.Snapshot
	if kind != KindGateway && kind != KindHTTPRoute {
		return nil
	}
	v1 := false
	for _, ap := range s.AuthPolicies {
		if !ap.IsV1beta2() {
			v1 = true
			break
		}
	}
	if !v1 { // none, or only kuadrant.io/v1beta2 ones (V1beta2AuthPolicies)
		return nil
	}
	res := m.AuthPolicy()
	var sections []string
	switch kind {
	case KindGateway:
		for _, gw := range s.Gateways {
			if gw.Namespace == ns && gw.Name == name {
				for _, l := range gw.Spec.Listeners {
					sections = append(sections, string(l.Name))
				}
			}
		}
	case KindHTTPRoute:
		for _, rt := range s.HTTPRoutes {
			if rt.Namespace == ns && rt.Name == name {
				for i, r := range rt.Spec.Rules {
					name := ""
					if r.Name != nil {
						name = string(*r.Name)
					}
					sections = append(sections, authpolicy.RuleName(i, name))
				}
			}
		}
	}
	var out []*authpolicy.PathResult
	for _, sec := range sections {
		paths, err := res.Query(authpolicy.Query{Kind: kind, Namespace: ns, Name: name, Section: sec})
		if err == nil {
			out = append(out, paths...)
		}
	}
	return out
}
