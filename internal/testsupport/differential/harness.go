package differential

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/crds"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"

	agenticv1alpha1 "sigs.k8s.io/kube-agentic-networking/api/v1alpha1"
	helpersv1alpha1 "sigs.k8s.io/kube-agentic-networking/pkg/helpers"
)

// Scenario is a set of objects (as a user writes them) and requests over them.
type Scenario struct {
	Name     string
	Objects  []*unstructured.Unstructured
	Requests []Request
	// StoredToAgpol gives agpol the objects as the API server stores them, with the
	// status the upstream controller wrote (a live cluster); otherwise agpol reads
	// them as written, without status, and computes admission itself (files).
	StoredToAgpol bool
	// Sample, when set, draws the requests once the objects are typed as stored.
	Sample func(*UpstreamObjects) []Request
	// Semantics is agpol's semantics (the reference preset when nil; another preset
	// shows that the harness tells semantics apart).
	Semantics *effective.Semantics
}

// Request is one request: where it enters and what it carries.
type Request struct {
	Gateway  string            `json:"gateway"` // ns/name
	Listener string            `json:"listener"`
	From     string            `json:"from"` // sa:NS/NAME, spiffe://..., cert:SUBJECT, anonymous
	Method   string            `json:"method"`
	Path     string            `json:"path"`
	Host     string            `json:"host"`
	Headers  map[string]string `json:"headers,omitempty"`
	MCP      *MCPMeta          `json:"mcp,omitempty"`
}

func (r Request) String() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// Verdicts beyond allow and deny.
const (
	// VerdictNeedsAuthorizer: the outcome depends on an external authorizer's answer.
	VerdictNeedsAuthorizer = "needs-authorizer"
	// VerdictNotFound: the filters pass and the router answers 404 (no route), or
	// a 500 direct response for a broken rule.
	VerdictNotFound = "not-routed"
	// VerdictRefused: the outcome depends on an external authorizer's answer, but
	// every answer refuses the request (a 403 from the filters, or a 404 or 500 from
	// the router): the caller never reaches a tool.
	VerdictRefused = "refused"
)

// Disagreement is one request on which the data plane and agpol differ.
type Disagreement struct {
	Scenario string
	Request  int
	Req      Request
	What     string
}

func (d Disagreement) String() string {
	return fmt.Sprintf("%s request %d %s: %s", d.Scenario, d.Request, d.Req, d.What)
}

// Report sums up a run.
type Report struct {
	Scenarios  int
	Requests   int
	Compared   int // (request, path) pairs compared
	Policies   int
	Admissions int // policies whose admission was compared
	Skipped    map[string]int
	// Verdicts counts the data plane's verdicts of the compared paths.
	Verdicts      map[string]int
	Disagreements []Disagreement
}

func (r *Report) skip(why string) {
	if r.Skipped == nil {
		r.Skipped = map[string]int{}
	}
	r.Skipped[why]++
}

// Add merges o into r.
func (r *Report) Add(o *Report) {
	r.Scenarios += o.Scenarios
	r.Requests += o.Requests
	r.Compared += o.Compared
	r.Policies += o.Policies
	r.Admissions += o.Admissions
	for k, v := range o.Skipped {
		if r.Skipped == nil {
			r.Skipped = map[string]int{}
		}
		r.Skipped[k] += v
	}
	for k, v := range o.Verdicts {
		if r.Verdicts == nil {
			r.Verdicts = map[string]int{}
		}
		r.Verdicts[k] += v
	}
	r.Disagreements = append(r.Disagreements, o.Disagreements...)
}

// store does to an object what the API server does on create: pruning, defaulting,
// validation (embedded CRDs, run by the apiextensions-apiserver code). It returns nil
// for an object the API server would reject.
func store(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := u.GroupVersionKind()
	if gvk.Group == "" {
		return u.DeepCopy(), nil
	}
	// Generated scenarios repeat many objects: remember what storing gave.
	key, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	storeMu.Lock()
	c, ok := storeCache[string(key)]
	storeMu.Unlock()
	if ok {
		if c.err != nil {
			return nil, c.err
		}
		return c.obj.DeepCopy(), nil
	}
	obj, err := storeUncached(u.DeepCopy(), gvk)
	storeMu.Lock()
	if len(storeCache) > 50000 {
		storeCache = map[string]stored{}
	}
	storeCache[string(key)] = stored{obj, err}
	storeMu.Unlock()
	if err != nil {
		return nil, err
	}
	return obj.DeepCopy(), nil
}

// SkipValidation stores objects with the API server's defaulting but without its
// validation (long runs: the generator writes valid objects, which the fixed seed set
// checks with validation on; an invalid object that slipped through would show as a
// disagreement, not hide one).
var SkipValidation bool

type stored struct {
	obj *unstructured.Unstructured
	err error
}

var (
	storeMu    sync.Mutex
	storeCache = map[string]stored{}
)

func storeUncached(u *unstructured.Unstructured, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	v, err := crds.Lookup(gvk)
	if err != nil {
		return nil, err
	}
	var res crds.Result
	if SkipValidation {
		res = v.DefaultOwned(u)
	} else {
		res = v.ValidateOwned(context.Background(), u)
	}
	if len(res.Errors) > 0 {
		return nil, res.Errors.ToAggregate()
	}
	d := res.Defaulted
	if gvk.Kind == "XAccessPolicy" {
		// Stored at v1alpha1 whatever version wrote it (no conversion strategy).
		d.SetAPIVersion(schema.GroupVersion{Group: gvk.Group, Version: "v1alpha1"}.String())
	}
	return d, nil
}

// Run compares one scenario. up is reused across scenarios by one goroutine.
func Run(up *Upstream, sc *Scenario) (*Report, error) {
	rep := &Report{Scenarios: 1}
	var written, stored []*unstructured.Unstructured
	for _, o := range sc.Objects {
		s, err := store(o)
		if err != nil {
			rep.skip("object rejected by the API server")
			continue
		}
		written = append(written, o)
		stored = append(stored, s)
	}
	objs, err := TypeUpstream(stored)
	if err != nil {
		return nil, err
	}
	admitted, err := up.Admit(objs.XAccessPolicies)
	if err != nil {
		return nil, err
	}
	objs.XAccessPolicies = admitted
	forTranslator := *objs
	forTranslator.Gateways = nil
	for _, g := range objs.Gateways {
		g = g.DeepCopy()
		// Certificates do not take part in authorization; without them the translator
		// programs an HTTPS listener with the SPIFFE identity (listener.go
		// buildDownstreamTLSContext) instead of failing on a Secret the scenario lacks.
		for i := range g.Spec.Listeners {
			if g.Spec.Listeners[i].TLS != nil {
				g.Spec.Listeners[i].TLS.CertificateRefs = nil
			}
		}
		g.Spec.TLS = nil
		forTranslator.Gateways = append(forTranslator.Gateways, g)
	}
	tr, err := Translate(&forTranslator)
	if err != nil {
		return nil, err
	}

	// agpol's input.
	var raws []cluster.RawObject
	if sc.StoredToAgpol {
		status := map[string]agenticv1alpha1.AccessPolicyStatus{}
		for _, p := range admitted {
			status[p.Namespace+"/"+p.Name] = p.Status
		}
		for _, s := range stored {
			s = s.DeepCopy()
			if s.GetKind() == "XAccessPolicy" {
				st := status[s.GetNamespace()+"/"+s.GetName()]
				b, _ := json.Marshal(st)
				var m map[string]any
				_ = json.Unmarshal(b, &m)
				s.Object["status"] = m
			}
			raws = append(raws, cluster.NewRawObject(s, snapshot.Source{Cluster: "differential"}))
		}
	} else {
		for _, o := range written {
			raws = append(raws, cluster.NewRawObject(o.DeepCopy(), snapshot.Source{File: sc.Name}))
		}
	}
	snap, err := cluster.Build(raws, nil, "differential")
	if err != nil {
		return nil, fmt.Errorf("agpol cannot load the scenario: %w", err)
	}

	sem := effective.Reference()
	if sc.Semantics != nil {
		sem = *sc.Semantics
	}
	// Admission: agpol's computed admission against the controller's status.
	adm := effective.Admit(snap, sem)
	byName := map[string]effective.Admission{}
	for p, a := range adm {
		byName[p.Namespace+"/"+p.Name] = a
	}
	for _, p := range admitted {
		rep.Policies++
		a, ok := byName[p.Namespace+"/"+p.Name]
		if !ok {
			rep.Disagreements = append(rep.Disagreements, Disagreement{Scenario: sc.Name, Request: -1,
				What: fmt.Sprintf("policy %s/%s: agpol does not see it", p.Namespace, p.Name)})
			continue
		}
		rep.Admissions++
		up := helpersv1alpha1.IsXAccessPolicyAccepted(p)
		upReason := reasonOf(p)
		if a.Accepted != up || (!up && a.Reason != upReason) {
			rep.Disagreements = append(rep.Disagreements, Disagreement{Scenario: sc.Name, Request: -1,
				What: fmt.Sprintf("policy %s/%s admission: controller accepted=%v (%s), agpol accepted=%v (%s)",
					p.Namespace, p.Name, up, upReason, a.Accepted, a.Reason)})
		}
	}

	sim := explain.New(model.New(snap), []effective.Semantics{sem}, TrustDomain)
	if sc.Sample != nil && sc.Requests == nil {
		sc.Requests = sc.Sample(objs)
	}
	for i, rq := range sc.Requests {
		rep.Requests++
		compareRequest(rep, sc, i, rq, tr, objs, sim)
	}
	return rep, nil
}

func reasonOf(p *agenticv1alpha1.XAccessPolicy) string {
	for _, a := range p.Status.Ancestors {
		for _, c := range a.Conditions {
			if c.Type == string(agenticv1alpha1.PolicyConditionAccepted) && c.Status != "True" {
				return c.Reason
			}
		}
	}
	if len(p.Status.Ancestors) == 0 {
		return "NoStatus"
	}
	return string(agenticv1alpha1.PolicyReasonAccepted)
}

// combos are the authorizer answers (gateway, backend) the harness decides under.
var combos = [][2]explain.Answer{
	{explain.AnswerAllow, explain.AnswerAllow},
	{explain.AnswerAllow, explain.AnswerDeny},
	{explain.AnswerDeny, explain.AnswerAllow},
	{explain.AnswerDeny, explain.AnswerDeny},
}

// envoyOutcome is the data plane's outcome on one path under each combo.
type envoyOutcome struct {
	path     *Path
	verdicts [4]string // per combo; "" when the combo cannot occur (shared authorizer)
	levels   [4]string // the level that denied
	summary  string
}

func compareRequest(rep *Report, sc *Scenario, idx int, rq Request, tr *Translation, objs *UpstreamObjects, sim *explain.Simulator) {
	fail := func(format string, args ...any) {
		rep.Disagreements = append(rep.Disagreements, Disagreement{Scenario: sc.Name, Request: idx, Req: rq, What: fmt.Sprintf(format, args...)})
	}
	cfg := tr.Gateways[rq.Gateway]
	if cfg == nil {
		rep.skip("gateway not translated")
		return
	}
	gwNS, gwName, _ := strings.Cut(rq.Gateway, "/")
	if gw := sim.Graph.Gateway(topology.GatewayRef(gwNS, gwName)); gw != nil && !sim.Graph.DataPlane(gw).Agentic() {
		// Another data plane serves it (Istio, Envoy Gateway under Kuadrant): the
		// reference translator's configuration is not what runs there.
		rep.skip("gateway of another data plane")
		return
	}
	var port uint32
	var https bool
	var sni string
	for _, g := range objs.Gateways {
		if g.Namespace != gwNS || g.Name != gwName {
			continue
		}
		for _, l := range g.Spec.Listeners {
			if string(l.Name) == rq.Listener {
				port = uint32(l.Port)
				https = l.Protocol == "HTTPS"
				if l.Hostname != nil {
					sni = hostOnly(rq.Host)
				}
			}
		}
	}
	if port == 0 {
		rep.skip("listener not found")
		return
	}
	id, err := explain.ParseCaller(rq.From)
	if err != nil {
		rep.skip("bad identity")
		return
	}
	principal := ""
	if https {
		principal = id.Principal(TrustDomain) // "" without a client certificate
	}
	now := sampleTime
	ereq := &EnvoyRequest{Port: port, SNI: sni, Principal: principal, CertWithoutSPIFFE: https && id.Kind == explain.CallerCertificate,
		Method: rq.Method, Path: rq.Path, Host: rq.Host, Headers: rq.Headers, Time: now, MCP: rq.MCP}
	paths := cfg.Paths(ereq)
	handshake := len(paths) == 1 && paths[0].Kind == OutcomeHandshake
	if handshake {
		paths = nil // no request: compared below
	}
	for _, p := range paths {
		if p.Tie {
			rep.skip("routes of equal precedence (order unspecified upstream)")
			return
		}
		if p.Kind == OutcomeNoChain {
			rep.skip("no filter chain for the request")
			return
		}
	}
	outs := make([]*envoyOutcome, 0, len(paths))
	for _, p := range paths {
		o := &envoyOutcome{path: p}
		for ci, c := range combos {
			shared := false
			d, err := p.Decide(ereq, func(levels []string) bool {
				var ans []explain.Answer
				for _, l := range levels {
					if l == "backend" {
						ans = append(ans, c[1])
					} else {
						ans = append(ans, c[0])
					}
				}
				if len(ans) == 2 && ans[0] != ans[1] {
					shared = true
				}
				return ans[0] == explain.AnswerAllow
			})
			if err != nil {
				fail("data plane evaluation: %v", err)
				return
			}
			if shared {
				continue // one authorizer answered for both levels: c cannot occur
			}
			v := d.Verdict
			if v == VerdictAllow && p.Kind != OutcomeForward {
				v = VerdictNotFound
			}
			o.verdicts[ci], o.levels[ci] = v, d.Level
		}
		o.summary = summarize(o.verdicts[:])
		outs = append(outs, o)
	}

	// agpol, once with the authorizers unknown and once per combo.
	base := explain.Request{From: id, Gateway: &explain.NamespacedName{Namespace: gwNS, Name: gwName}, Listener: rq.Listener,
		HTTP: explain.HTTP{Method: rq.Method, Path: rq.Path, Host: rq.Host, Headers: copyHeaders(rq.Headers), Time: now}}
	if rq.MCP != nil {
		base.MCP = &explain.MCP{Method: rq.MCP.Method, Tool: rq.MCP.ParamsName}
	}
	decide := func(ea explain.ExtAuth) (map[string]explain.Decision, error) {
		r := base
		r.HTTP.Headers = copyHeaders(rq.Headers)
		r.ExtAuth = ea
		res, err := sim.Explain(explain.Options{}, &r)
		if err != nil {
			return nil, err
		}
		out := map[string]explain.Decision{}
		for _, x := range res {
			out[clusterOf(x.Path)] = x.Decision
		}
		return out, nil
	}
	unknown, err := decide(explain.ExtAuth{})
	if err != nil {
		fail("agpol: %v", err)
		return
	}
	if handshake {
		// The TLS handshake fails: every path agpol finds is denied by it.
		rep.Compared++
		if rep.Verdicts == nil {
			rep.Verdicts = map[string]int{}
		}
		rep.Verdicts[OutcomeHandshake]++
		if len(unknown) == 0 {
			fail("data plane fails the TLS handshake; agpol has no decision")
		}
		for k, d := range unknown {
			if d.Verdict != explain.Deny || d.DecidedBy != explain.DecidedTLSHandshake {
				fail("data plane fails the TLS handshake; agpol on %q: %s (level %s, by %s)", k, d.Verdict, d.Level, d.DecidedBy)
			}
		}
		return
	}
	var per [4]map[string]explain.Decision
	for ci, c := range combos {
		if per[ci], err = decide(explain.ExtAuth{Gateway: c[0], Backend: c[1]}); err != nil {
			fail("agpol: %v", err)
			return
		}
	}
	seen := map[string]bool{}
	for _, o := range outs {
		key := o.path.Cluster
		seen[key] = true
		ad, ok := unknown[key]
		if !ok {
			fail("data plane path %s (%s) has no agpol decision (agpol paths: %s)", o.path.Kind, key, keys(unknown))
			continue
		}
		rep.Compared++
		if rep.Verdicts == nil {
			rep.Verdicts = map[string]int{}
		}
		rep.Verdicts[o.summary]++
		if !verdictAgrees(o.summary, ad) {
			fail("path %s %q: data plane %s %v, agpol %s (level %s, by %s)", o.path.Kind, key, o.summary, o.verdicts, ad.Verdict, ad.Level, ad.DecidedBy)
			continue
		}
		for ci := range combos {
			ev := o.verdicts[ci]
			if ev == "" {
				continue
			}
			cd := per[ci][key]
			if !verdictAgrees(ev, cd) {
				fail("path %s %q, authorizers %v: data plane %s (%s), agpol %s (level %s, by %s)", o.path.Kind, key, combos[ci], ev, o.levels[ci], cd.Verdict, cd.Level, cd.DecidedBy)
				break
			}
			if ev == VerdictDeny && o.levels[ci] != "" && cd.Level != o.levels[ci] {
				fail("path %s %q, authorizers %v: data plane denies at %s, agpol at %s (by %s)", o.path.Kind, key, combos[ci], o.levels[ci], cd.Level, cd.DecidedBy)
				break
			}
		}
	}
	for k := range unknown {
		if !seen[k] {
			fail("agpol path %q has no data plane path (data plane: %s)", k, pathKinds(outs))
		}
	}
}

func summarize(vs []string) string {
	s, refused := "", true
	for _, v := range vs {
		if v == "" {
			continue
		}
		refused = refused && (v == VerdictDeny || v == VerdictNotFound)
		if s == "" {
			s = v
		} else if s != v {
			s = VerdictNeedsAuthorizer
		}
	}
	if s == VerdictNeedsAuthorizer && refused {
		return VerdictRefused
	}
	return s
}

// verdictAgrees compares a data plane verdict with an agpol decision. A request the
// filters let through to no route (404) or to a broken rule (500) agrees with agpol's
// deny by the data plane's own answer (no-route, no-backend); so does one that every
// authorizer answer refuses, with a 403 or with a 404 or 500.
func verdictAgrees(envoy string, d explain.Decision) bool {
	dataPlane := d.Verdict == explain.Deny && (d.DecidedBy == explain.DecidedNoRoute || d.DecidedBy == explain.DecidedNoBackend)
	switch envoy {
	case VerdictNeedsAuthorizer:
		return d.Verdict == explain.Indeterminate
	case VerdictNotFound, VerdictRefused:
		return dataPlane
	}
	return d.Verdict == envoy
}

// clusterOf names agpol's path as the translator names its cluster (ns-name), "" for
// a path without a backend.
func clusterOf(p explain.PathInfo) string {
	if p.NoBackend != "" || p.Backend == "" {
		return ""
	}
	_, nn, _ := strings.Cut(p.Backend, " ")
	ns, name, _ := strings.Cut(nn, "/")
	return ns + "-" + name
}

func keys(m map[string]explain.Decision) string {
	var out []string
	for k := range m {
		out = append(out, fmt.Sprintf("%q", k))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func pathKinds(outs []*envoyOutcome) string {
	var out []string
	for _, o := range outs {
		out = append(out, o.path.Kind+" "+o.path.Cluster)
	}
	return strings.Join(out, ", ")
}

func copyHeaders(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[k] = v
	}
	return out
}

func hostOnly(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		return h[:i]
	}
	return h
}
