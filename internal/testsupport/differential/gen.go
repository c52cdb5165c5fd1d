package differential

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/testsupport/difftest"
)

// Generator builds small random topologies: 1-3 gateways with mixed HTTP/HTTPS
// listeners, routes with several rules and weighted backends, and 0-6 policies per
// target of every action and rule form (same-named rules, CEL from a small grammar,
// ServiceAccount and SPIFFE sources, incomplete sources, invalid CEL).
type Generator struct {
	r *rand.Rand
}

// NewGenerator returns a generator for one seed.
func NewGenerator(seed uint64) *Generator {
	return &Generator{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

type obj map[string]any

func (g *Generator) n(k int) int         { return g.r.IntN(k) }
func (g *Generator) p(pct int) bool      { return g.r.IntN(100) < pct }
func pick[T any](g *Generator, xs []T) T { return xs[g.r.IntN(len(xs))] }
func meta(name, ns string) obj           { return obj{"name": name, "namespace": ns} }
func ref(group, kind, name string) obj   { return obj{"group": group, "kind": kind, "name": name} }

// u makes the nested maps plain JSON values (what unstructured objects hold).
func u(m obj) *unstructured.Unstructured { return difftest.Unstructured(m) }
func newObj(apiVersion, kind string, md obj) obj {
	return obj{"apiVersion": apiVersion, "kind": kind, "metadata": md}
}

// Names the generator draws from (small on purpose: collisions are the point).
var (
	genNamespaces = []string{"ns1", "ns2"}
	genTools      = []string{"t1", "t2", "t3"}
	genRuleNames  = []string{"r1", "r2", "r3"}
	genSAs        = []struct{ ns, name string }{{"ns1", "a"}, {"ns1", "b"}, {"ns2", "a"}}
	genSPIFFEs    = []string{"spiffe://cluster.local/ns/ns1/sa/a", "spiffe://cluster.local/ns/ns2/sa/b", "spiffe://other.org/agent"}
	genHosts      = []string{"a.example.com", "b.example.com"}
)

const (
	agenticGroup = "agentic.networking.x-k8s.io"
	gatewayGroup = "gateway.networking.k8s.io"
)

// Scenario generates one scenario's objects.
func (g *Generator) Scenario(name string) *Scenario {
	sc := &Scenario{Name: name}
	add := func(m obj) { sc.Objects = append(sc.Objects, u(m)) }
	// Namespaces (ns2 carries a label a listener selector can ask for).
	add(newObj("v1", "Namespace", obj{"name": "ns1"}))
	add(newObj("v1", "Namespace", obj{"name": "ns2", "labels": obj{"team": "a"}}))
	// Services and XBackends in every namespace.
	for _, ns := range genNamespaces {
		for i := 1; i <= 2; i++ {
			add(newObj("v1", "Service", meta(fmt.Sprintf("svc%d", i), ns)).with("spec", obj{"ports": []any{obj{"port": int64(8080)}}}))
		}
		for i := 1; i <= 2; i++ {
			add(newObj(agenticGroup+"/v0alpha0", "XBackend", meta(fmt.Sprintf("xb%d", i), ns)).with("spec",
				obj{"mcp": obj{"serviceName": fmt.Sprintf("svc%d", i), "port": int64(8080)}}))
		}
	}
	// Gateways.
	ngw := 1 + g.n(3)
	type gwInfo struct{ ns, name string }
	var gws []gwInfo
	for i := 1; i <= ngw; i++ {
		ns := "ns1"
		if g.p(25) {
			ns = "ns2"
		}
		gw := gwInfo{ns, fmt.Sprintf("gw%d", i)}
		gws = append(gws, gw)
		add(newObj(gatewayGroup+"/v1", "Gateway", meta(gw.name, gw.ns)).with("spec", obj{
			"gatewayClassName": "agentic",
			"listeners":        g.listeners(),
		}))
	}
	// Routes.
	nrt := 1 + g.n(4)
	for i := 1; i <= nrt; i++ {
		ns := pick(g, genNamespaces)
		var parents []any
		for _, gw := range gws {
			if len(parents) == 0 || g.p(30) {
				pr := obj{"name": gw.name}
				if gw.ns != ns || g.p(20) {
					pr["namespace"] = gw.ns
				}
				parents = append(parents, pr)
			}
		}
		spec := obj{"parentRefs": parents}
		if g.p(30) {
			spec["hostnames"] = []any{pick(g, genHosts)}
		}
		var rules []any
		for j := 1; j <= 1+g.n(3); j++ {
			rules = append(rules, g.routeRule(ns, i, j))
		}
		spec["rules"] = rules
		add(newObj(gatewayGroup+"/v1", "HTTPRoute", meta(fmt.Sprintf("rt%d", i), ns)).with("spec", spec))
	}
	// Policies: 0-6 per target.
	seq := 0
	targets := []struct{ ns, group, kind, name string }{}
	for _, gw := range gws {
		targets = append(targets, struct{ ns, group, kind, name string }{gw.ns, gatewayGroup, "Gateway", gw.name})
	}
	for _, ns := range genNamespaces {
		for i := 1; i <= 2; i++ {
			targets = append(targets, struct{ ns, group, kind, name string }{ns, agenticGroup, "XBackend", fmt.Sprintf("xb%d", i)})
		}
	}
	for _, t := range targets {
		k := []int{0, 0, 1, 1, 2, 2, 3, 4, 5, 6}[g.n(10)]
		for i := 0; i < k; i++ {
			seq++
			refs := []any{ref(t.group, t.kind, t.name)}
			if g.p(8) {
				// A second ref to the same target (another section): the controller counts it twice.
				r2 := ref(t.group, t.kind, t.name)
				r2["sectionName"] = "s1"
				refs = append(refs, r2)
			}
			add(g.policy(fmt.Sprintf("p%d", seq), t.ns, refs))
		}
	}
	return sc
}

func (m obj) with(k string, v any) obj { m[k] = v; return m }

func (g *Generator) listeners() []any {
	n := 1 + g.n(3)
	var out []any
	usedPort := map[int64][]string{}
	for i := 1; i <= n; i++ {
		https := g.p(55)
		ports := []int64{80, 8080}
		if https {
			ports = []int64{443, 8443}
		}
		port := pick(g, ports)
		l := obj{"name": fmt.Sprintf("l%d", i), "port": port, "protocol": "HTTP"}
		host := ""
		if g.p(35) {
			host = pick(g, []string{"a.example.com", "*.example.com"})
		}
		// Listeners sharing a port need distinct hostnames (else both are conflicted),
		// and one protocol.
		if prev, ok := usedPort[port]; ok {
			clash := false
			for _, h := range prev {
				if h == host {
					clash = true
				}
			}
			if clash {
				continue
			}
		}
		usedPort[port] = append(usedPort[port], host)
		if host != "" {
			l["hostname"] = host
		}
		if https {
			l["protocol"] = "HTTPS"
			l["tls"] = obj{"mode": "Terminate", "certificateRefs": []any{obj{"name": "cert"}}}
		}
		switch g.n(6) {
		case 0:
			l["allowedRoutes"] = obj{"namespaces": obj{"from": "All"}}
		case 1:
			l["allowedRoutes"] = obj{"namespaces": obj{"from": "Selector", "selector": obj{"matchLabels": obj{"team": "a"}}}}
		case 2:
			l["allowedRoutes"] = obj{"namespaces": obj{"from": "Same"}}
		}
		out = append(out, l)
	}
	return out
}

func (g *Generator) routeRule(ns string, route, rule int) obj {
	r := obj{}
	var matches []any
	// A rule without matches takes every path ("/"): only rt1's first rule may have
	// none, so that two routes rarely tie (the translator leaves their order to the
	// listers).
	nm := 1 + g.n(2)
	if route == 1 && rule == 1 && g.p(30) {
		nm = 0
	}
	for k := 1; k <= nm; k++ {
		m := obj{}
		v := fmt.Sprintf("/r%d-%d-%d", route, rule, k)
		switch g.n(3) {
		case 0:
			m["path"] = obj{"type": "Exact", "value": v + "/mcp"}
		default:
			m["path"] = obj{"type": "PathPrefix", "value": v}
		}
		if g.p(15) {
			m["headers"] = []any{obj{"name": "x-team", "value": "a"}}
		}
		matches = append(matches, m)
	}
	if len(matches) > 0 {
		r["matches"] = matches
	}
	var brefs []any
	for k := 0; k < 1+g.n(3); k++ {
		b := obj{}
		switch g.n(5) {
		case 0:
			b["name"] = pick(g, []string{"svc1", "svc2"})
			b["port"] = int64(8080)
		case 1:
			// XBackend in another namespace (no ReferenceGrant needed upstream).
			b["group"], b["kind"], b["name"] = agenticGroup, "XBackend", pick(g, []string{"xb1", "xb2"})
			b["namespace"] = pick(g, genNamespaces)
		case 2:
			if g.p(30) {
				// kind XBackend without the agentic group: routed, but no ext_authz filter (docs/semantics.md#extauth-backendref-group).
				b["kind"], b["name"] = "XBackend", pick(g, []string{"xb1", "xb2"})
				b["group"] = ""
				break
			}
			fallthrough
		default:
			b["group"], b["kind"], b["name"] = agenticGroup, "XBackend", pick(g, []string{"xb1", "xb2"})
		}
		if g.p(40) {
			b["weight"] = int64(g.n(4))
		}
		brefs = append(brefs, b)
	}
	r["backendRefs"] = brefs
	return r
}

var genTimes = []string{"2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"}

func (g *Generator) policy(name, ns string, refs []any) obj {
	md := meta(name, ns)
	md["creationTimestamp"] = pick(g, genTimes)
	spec := obj{"targetRefs": refs}
	if g.p(30) {
		spec["action"] = "ExternalAuth"
		spec["externalAuth"] = obj{"protocol": "GRPC", "grpc": obj{},
			"backendRef": obj{"name": pick(g, []string{"authz1", "authz2"}), "namespace": "auth", "port": int64(50051)}}
	} else {
		spec["action"] = "Allow"
	}
	if !g.p(12) {
		var rules []any
		n := g.n(4)
		names := append([]string(nil), genRuleNames...)
		g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		for i := 0; i < n; i++ {
			rules = append(rules, g.rule(names[i]))
		}
		spec["rules"] = rules
	}
	return newObj(agenticGroup+"/v1alpha1", "XAccessPolicy", md).with("spec", spec)
}

func (g *Generator) rule(name string) obj {
	r := obj{"name": name}
	switch g.n(9) {
	case 0: // source omitted
	case 1, 2:
		sa := pick(g, genSAs)
		s := obj{"name": sa.name}
		if g.p(60) {
			s["namespace"] = sa.ns
		}
		r["source"] = obj{"type": "ServiceAccount", "serviceAccount": s}
	case 3, 4:
		r["source"] = obj{"type": "SPIFFE", "spiffe": pick(g, genSPIFFEs)}
	case 5:
		r["source"] = obj{"type": pick(g, []string{"ServiceAccount", "SPIFFE"})} // type without its field
	case 6:
		r["source"] = obj{"spiffe": pick(g, genSPIFFEs)} // field without type
	default:
		sa := pick(g, genSAs)
		r["source"] = obj{"type": "ServiceAccount", "serviceAccount": obj{"name": sa.name, "namespace": sa.ns}}
	}
	switch g.n(6) {
	case 0: // authorization omitted
	case 1:
		r["authorization"] = obj{"type": "CEL", "cel": obj{"expression": g.cel(2)}}
	default:
		mcp := obj{}
		var methods []any
		used := map[string]bool{}
		for i := 0; i < g.n(3); i++ {
			mn := pick(g, []string{"tools/call", "tools/call", "tools", "tools/list", "prompts/get", "prompts", "resources/read"})
			if used[mn] {
				continue
			}
			used[mn] = true
			m := obj{"name": mn}
			if (mn == "tools/call" || mn == "prompts/get" || mn == "resources/read") && g.p(60) {
				var ps []any
				seen := map[string]bool{}
				for j := 0; j <= g.n(2); j++ {
					t := pick(g, genTools)
					if !seen[t] {
						seen[t] = true
						ps = append(ps, t)
					}
				}
				m["params"] = ps
			}
			methods = append(methods, m)
		}
		if len(methods) > 0 {
			mcp["methods"] = methods
		}
		switch g.n(3) {
		case 0:
			mcp["mcpBaseProtocolMethodsOption"] = "MATCH_BASE_PROTOCOL_METHODS"
		case 1:
			mcp["mcpBaseProtocolMethodsOption"] = "SKIP_BASE_PROTOCOL_METHODS"
		}
		a := obj{"type": "Inline"}
		if len(mcp) > 0 || g.p(50) {
			a["mcp"] = mcp
		}
		if g.p(10) {
			// An L7 field of #309 (absent from v0.1.0's types; ignored by the translator).
			a["methods"] = []any{"GET"}
		}
		r["authorization"] = a
	}
	return r
}

// cel draws an expression from a small grammar over the translator's variables.
func (g *Generator) cel(depth int) string {
	if depth > 0 && g.p(40) {
		a, b := g.cel(depth-1), g.cel(depth-1)
		switch g.n(3) {
		case 0:
			return "(" + a + " && " + b + ")"
		case 1:
			return "(" + a + " || " + b + ")"
		default:
			return "!(" + a + ")"
		}
	}
	t := pick(g, genTools)
	switch g.n(12) {
	case 0, 1:
		return fmt.Sprintf("request.mcp.tool_name == '%s'", t)
	case 2:
		return fmt.Sprintf("request.mcp.tool_name in ['%s', '%s']", t, pick(g, genTools))
	case 3:
		return "request.method == 'POST'"
	case 4:
		return fmt.Sprintf("request.path.startsWith('/r%d')", 1+g.n(3))
	case 5:
		return "request.url_path.endsWith('/mcp')"
	case 6:
		return "request.host.endsWith('example.com')"
	case 7:
		return "request.headers['x-team'] == 'a'"
	case 8:
		return "'x-team' in request.headers"
	case 9:
		return "request.time.getFullYear() >= 2026"
	case 10:
		return pick(g, []string{"source.principal == 'x'", "request.bogus == 'x'", "request.method =="}) // invalid: InvalidCEL
	default:
		return "request.path.matches('^/r[0-9]')"
	}
}

// sampleTime is the request time both sides see.
var sampleTime = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// Requests samples n requests over the scenario's objects (typed as stored).
func (g *Generator) Requests(objs *UpstreamObjects, n int) []Request {
	type entry struct {
		gw, listener string
		https        bool
		hosts        []string
	}
	var entries []entry
	for _, gw := range objs.Gateways {
		for _, l := range gw.Spec.Listeners {
			e := entry{gw: gw.Namespace + "/" + gw.Name, listener: string(l.Name), https: l.Protocol == "HTTPS"}
			switch {
			case l.Hostname == nil:
				e.hosts = append(e.hosts, genHosts...)
				e.hosts = append(e.hosts, "other.test")
				for _, rt := range objs.HTTPRoutes {
					for _, h := range rt.Spec.Hostnames {
						if !strings.HasPrefix(string(h), "*") {
							e.hosts = append(e.hosts, string(h))
						}
					}
				}
			case strings.HasPrefix(string(*l.Hostname), "*."):
				e.hosts = []string{"x" + string(*l.Hostname)[1:], "a.example.com"}
			default:
				e.hosts = []string{string(*l.Hostname)}
			}
			entries = append(entries, e)
		}
	}
	if len(entries) == 0 {
		return nil
	}
	var paths []string
	for _, rt := range objs.HTTPRoutes {
		for _, rule := range rt.Spec.Rules {
			for _, m := range rule.Matches {
				if m.Path != nil && m.Path.Value != nil {
					v := *m.Path.Value
					if strings.HasSuffix(v, "/mcp") {
						paths = append(paths, v)
					} else {
						paths = append(paths, v+"/mcp", v)
					}
				}
			}
		}
	}
	paths = append(paths, "/mcp", "/nowhere/mcp")
	var froms []string
	for _, sa := range genSAs {
		froms = append(froms, "sa:"+sa.ns+"/"+sa.name)
	}
	froms = append(froms, genSPIFFEs...)
	froms = append(froms, "anonymous", "sa:ns2/zz", "cert:CN=agent,O=acme")
	tools := append([]string{"other"}, genTools...)
	// Callers and tools the scenario's policies name (for scenarios not generated here).
	for _, p := range objs.XAccessPolicies {
		for _, r := range p.Spec.Rules {
			if sa := r.Source.ServiceAccount; sa != nil {
				ns := sa.Namespace
				if ns == "" {
					ns = p.Namespace
				}
				froms = append(froms, "sa:"+ns+"/"+sa.Name)
			}
			if r.Source.SPIFFE != nil {
				froms = append(froms, string(*r.Source.SPIFFE))
			}
			if a := r.Authorization; a != nil {
				for _, m := range a.MCP.Methods {
					for _, prm := range m.Params {
						tools = append(tools, string(prm))
					}
				}
			}
		}
	}
	var out []Request
	for len(out) < n {
		e := pick(g, entries)
		r := Request{Gateway: e.gw, Listener: e.listener, From: pick(g, froms), Path: pick(g, paths), Host: pick(g, e.hosts)}
		if e.https && r.From == "anonymous" {
			r.From = "sa:ns1/a"
		}
		if g.p(10) {
			r.Path += "?q=1"
		}
		if g.p(25) {
			r.Headers = map[string]string{"x-team": pick(g, []string{"a", "b"})}
		}
		switch g.n(10) {
		case 0:
			r.Method = "GET"
		case 1:
			r.Method = "DELETE"
			if r.Headers == nil {
				r.Headers = map[string]string{}
			}
			r.Headers["mcp-session-id"] = "s1"
		default:
			r.Method = "POST"
			m := pick(g, []string{"tools/call", "tools/call", "tools/call", "tools/list", "initialize", "ping",
				"notifications/initialized", "prompts/get", "prompts/list", "resources/read", "logging/setLevel"})
			meta := &MCPMeta{Method: m}
			if m == "tools/call" || m == "prompts/get" || m == "resources/read" {
				meta.ParamsName = pick(g, tools)
			}
			r.MCP = meta
		}
		out = append(out, r)
	}
	return out
}
