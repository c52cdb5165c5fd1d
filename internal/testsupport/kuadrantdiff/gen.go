package kuadrantdiff

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/testsupport/difftest"
)

// Generator builds small random Kuadrant topologies: Gateways of Istio, Envoy Gateway
// and another controller with one or two listeners, HTTPRoutes with named and unnamed
// rules, and AuthPolicies at every target level (Gateway, listener, HTTPRoute, rule,
// and missing targets), bare, defaults or overrides, atomic or merge, with rule names
// shared between policies, creation timestamps that are often equal, `when`
// predicates at policy and rule level, and every authentication kind.
type Generator struct {
	r *rand.Rand
	// kinds are the identity kinds the authentication rules of the policy being
	// generated read (identityAuthorization checks what they produce).
	kinds []string
	// meta are the names of the policy's metadata rules (metadataAuthorization reads them).
	meta []string
}

// NewGenerator returns a generator for one seed.
func NewGenerator(seed uint64) *Generator {
	return &Generator{r: rand.New(rand.NewPCG(seed, seed^0x6a09e667f3bcc909))}
}

type obj = map[string]any

func (g *Generator) n(k int) int         { return g.r.IntN(k) }
func (g *Generator) p(pct int) bool      { return g.r.IntN(100) < pct }
func pick[T any](g *Generator, xs []T) T { return xs[g.r.IntN(len(xs))] }

// u makes the nested maps plain JSON values (what unstructured objects hold).
func u(m obj) *unstructured.Unstructured { return difftest.Unstructured(m) }

// Names the generator draws from (small on purpose: collisions are the point).
var (
	genNamespaces = []string{"ns1", "ns2"}
	genHosts      = []string{"a.example.com", "b.example.com"}
	genClasses    = []struct{ name, controller string }{
		{"istio", "istio.io/gateway-controller"},
		{"eg", "gateway.envoyproxy.io/gatewayclass-controller"},
		{"other", "example.com/other-controller"},
	}
	genAuthNames  = []string{"a1", "a2", "a3"}
	genAuthzNames = []string{"z1", "z2"}
	genTimes      = []string{"2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z", "2025-02-01T00:00:00Z", "2025-03-01T00:00:00Z"}
	genPaths      = []string{"/a", "/b", "/a/x", "/c"}
	genMethods    = []string{"GET", "POST", "DELETE"}
)

// Scenario generates one scenario's objects.
func (g *Generator) Scenario(name string) *Scenario {
	sc := &Scenario{Name: name}
	add := func(m obj) { sc.Objects = append(sc.Objects, u(m)) }
	kuadrantNS := "kuadrant-system"
	if g.p(20) {
		kuadrantNS = "kuadrant"
	}
	for _, ns := range append([]string{kuadrantNS}, genNamespaces...) {
		add(obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": ns}})
	}
	add(obj{"apiVersion": "kuadrant.io/v1beta1", "kind": "Kuadrant", "metadata": obj{"name": "kuadrant", "namespace": kuadrantNS}, "spec": obj{}})
	g.secrets(kuadrantNS, add)
	g.rbacObjects(add)
	for _, c := range genClasses {
		add(obj{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": obj{"name": c.name},
			"spec": obj{"controllerName": c.controller}})
	}
	// Gateways.
	type gw struct {
		ns, name  string
		listeners []string
	}
	var gws []gw
	for i := 0; i < 1+g.n(2); i++ {
		gg := gw{ns: pick(g, genNamespaces), name: fmt.Sprintf("gw%d", i+1)}
		class := genClasses[0].name
		switch x := g.n(10); {
		case x >= 6 && x < 9:
			class = genClasses[1].name
		case x == 9:
			class = genClasses[2].name
		}
		var ls []any
		for j := 0; j < 1+g.n(2); j++ {
			l := obj{"name": fmt.Sprintf("l%d", j+1), "port": int64(80 + j), "protocol": "HTTP",
				"allowedRoutes": obj{"namespaces": obj{"from": "All"}}}
			if g.p(30) {
				l["hostname"] = pick(g, []string{"a.example.com", "*.example.com"})
			}
			ls = append(ls, l)
			gg.listeners = append(gg.listeners, l["name"].(string))
		}
		gws = append(gws, gg)
		add(obj{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": obj{"name": gg.name, "namespace": gg.ns},
			"spec": obj{"gatewayClassName": class, "listeners": ls}})
	}
	// Routes.
	type route struct {
		ns, name string
		rules    []string
	}
	var routes []route
	for i := 0; i < 1+g.n(3); i++ {
		r := route{ns: pick(g, genNamespaces), name: fmt.Sprintf("r%d", i+1)}
		var parents []any
		for _, gg := range gws {
			if !g.p(70) {
				continue
			}
			p := obj{"name": gg.name, "namespace": gg.ns}
			if g.p(30) {
				p["sectionName"] = pick(g, gg.listeners)
			}
			parents = append(parents, p)
		}
		if len(parents) == 0 {
			gg := pick(g, gws)
			parents = append(parents, obj{"name": gg.name, "namespace": gg.ns})
		}
		var rules []any
		used := map[string]bool{}
		for j := 0; j < 1+g.n(3); j++ {
			rule := obj{"backendRefs": []any{obj{"name": "svc", "port": int64(8080)}}}
			rn := fmt.Sprintf("rule-%d", j+1)
			if g.p(40) {
				n := pick(g, []string{"read", "write"})
				if !used[n] {
					used[n] = true
					rule["name"], rn = n, n
				}
			}
			m := obj{"path": obj{"type": pick(g, []string{"PathPrefix", "Exact"}), "value": pick(g, genPaths)}}
			if g.p(30) {
				m["method"] = pick(g, genMethods)
			}
			rule["matches"] = []any{m}
			rules = append(rules, rule)
			r.rules = append(r.rules, rn)
		}
		spec := obj{"parentRefs": parents, "rules": rules}
		if g.p(60) {
			spec["hostnames"] = []any{pick(g, genHosts)}
		}
		routes = append(routes, r)
		add(obj{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": obj{"name": r.name, "namespace": r.ns}, "spec": spec})
	}
	// AuthPolicies.
	for i := 0; i < g.n(6); i++ {
		ns := pick(g, genNamespaces)
		var target obj
		switch g.n(9) {
		case 0, 1:
			gg := pick(g, gws)
			ns = gg.ns
			target = obj{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gg.name}
		case 2:
			gg := pick(g, gws)
			ns = gg.ns
			target = obj{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gg.name, "sectionName": pick(g, gg.listeners)}
		case 3, 4, 5:
			r := pick(g, routes)
			ns = r.ns
			target = obj{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": r.name}
		case 6, 7:
			r := pick(g, routes)
			ns = r.ns
			target = obj{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": r.name, "sectionName": pick(g, r.rules)}
		default:
			target = obj{"group": "gateway.networking.k8s.io", "kind": pick(g, []string{"Gateway", "HTTPRoute"}), "name": "missing"}
		}
		spec := obj{"targetRef": target}
		proper := g.policyProper()
		switch g.n(3) {
		case 0:
			for k, v := range proper {
				spec[k] = v
			}
		case 1:
			proper["strategy"] = pick(g, []string{"atomic", "merge"})
			spec["defaults"] = proper
		default:
			proper["strategy"] = pick(g, []string{"atomic", "merge"})
			spec["overrides"] = proper
		}
		if _, ok := spec["overrides"]; ok && target["kind"] == "HTTPRoute" && target["name"] != "missing" {
			// The CRD allows overrides only on Gateways; write defaults instead.
			spec["defaults"] = spec["overrides"]
			delete(spec, "overrides")
		}
		add(obj{"apiVersion": "kuadrant.io/v1", "kind": "AuthPolicy",
			"metadata": obj{"name": fmt.Sprintf("p%d", i+1), "namespace": ns, "creationTimestamp": pick(g, genTimes)}, "spec": spec})
	}
	return sc
}

// policyProper is the rules and `when` of a policy (or of its defaults/overrides).
func (g *Generator) policyProper() obj {
	out := obj{}
	rules := obj{}
	g.kinds = nil
	if g.p(70) {
		authn := obj{}
		for i := 0; i < 1+g.n(2); i++ {
			a := g.authentication()
			authn[pick(g, genAuthNames)] = a
			for _, k := range []string{"apiKey", "jwt", "kubernetesTokenReview", "x509"} {
				if _, ok := a[k]; ok {
					g.kinds = append(g.kinds, k)
				}
			}
		}
		rules["authentication"] = authn
	}
	g.meta = nil
	if g.p(25) {
		rules["metadata"] = g.metadataRules()
	}
	if g.p(60) {
		authz := obj{}
		for i := 0; i < 1+g.n(2); i++ {
			authz[pick(g, genAuthzNames)] = g.authorization()
		}
		rules["authorization"] = authz
	}
	if len(rules) == 0 {
		// The CRD requires at least one rule (x-kubernetes-validations of
		// spec.rules / spec.defaults.rules / spec.overrides.rules).
		rules["authorization"] = obj{pick(g, genAuthzNames): g.authorization()}
	}
	g.extras(out, rules)
	out["rules"] = rules
	if g.p(25) {
		out["when"] = []any{obj{"predicate": g.predicate()}}
	}
	return out
}

func (g *Generator) authentication() obj {
	var a obj
	switch g.n(6) {
	case 0, 1:
		a = obj{"anonymous": obj{}}
	case 2, 3, 4:
		a = g.identityAuthentication()
	default:
		a = obj{"plain": obj{"selector": "request.headers.x-user"}}
	}
	if g.p(30) {
		a["priority"] = int64(g.n(2))
	}
	if g.p(20) {
		a["when"] = []any{obj{"predicate": g.predicate()}}
	}
	return a
}

func (g *Generator) authorization() obj {
	if len(g.meta) > 0 && g.p(40) {
		return g.metadataAuthorization()
	}
	if g.p(15) {
		a := g.subjectAccessReview()
		if g.p(20) {
			a["when"] = []any{obj{"predicate": g.predicate()}}
		}
		return a
	}
	if g.p(50) {
		a := g.identityAuthorization()
		if g.p(20) {
			a["when"] = []any{obj{"predicate": g.predicate()}}
		}
		return a
	}
	pat := obj{"selector": pick(g, []string{"request.method", "request.url_path", "request.host"}),
		"operator": pick(g, []string{"eq", "neq", "matches"})}
	switch pat["selector"] {
	case "request.method":
		pat["value"] = pick(g, genMethods)
	case "request.url_path":
		pat["value"] = pick(g, genPaths)
	default:
		pat["value"] = pick(g, genHosts)
	}
	if pat["operator"] == "matches" {
		pat["value"] = "^" + strings.TrimPrefix(pat["value"].(string), "/") // a small regexp
	}
	a := obj{"patternMatching": obj{"patterns": []any{pat}}}
	if g.p(20) {
		a["when"] = []any{obj{"predicate": g.predicate()}}
	}
	return a
}

// predicate is a CEL predicate on request attributes both sides know.
func (g *Generator) predicate() string {
	switch g.n(4) {
	case 0:
		return fmt.Sprintf("request.method == '%s'", pick(g, genMethods))
	case 1:
		return fmt.Sprintf("request.url_path.startsWith('%s')", pick(g, genPaths))
	case 2:
		return fmt.Sprintf("request.host == '%s'", pick(g, genHosts))
	default:
		return fmt.Sprintf("request.method != '%s' && request.url_path != '%s'", pick(g, genMethods), pick(g, genPaths))
	}
}

// Requests draws requests over the scenario's Gateways, with a method, host and path
// the routes may or may not match, and no credentials or an identity of any kind.
func (g *Generator) Requests(sc *Scenario, n int) []Request {
	type entry struct{ gw, listener string }
	var entries []entry
	for _, o := range sc.Objects {
		if o.GetKind() != "Gateway" {
			continue
		}
		ls, _, _ := unstructured.NestedSlice(o.Object, "spec", "listeners")
		for _, l := range ls {
			entries = append(entries, entry{o.GetNamespace() + "/" + o.GetName(), l.(map[string]any)["name"].(string)})
		}
	}
	kinds, keys, metaNames := authKinds(sc), keySecrets(sc), metadataNames(sc)
	var out []Request
	aimed := routeTargets(sc)
	for i := 0; i < n && len(entries) > 0; i++ {
		e := pick(g, entries)
		host := pick(g, append(genHosts, "c.example.com"))
		path := pick(g, genPaths)
		method := pick(g, genMethods)
		if len(aimed) > 0 && g.p(60) {
			// Aimed at a route rule: most such requests reach a policy's path.
			t := pick(g, aimed)
			e = pick(g, entries)
			for _, c := range entries {
				if c.gw == t.gw && (t.listener == "" || c.listener == t.listener) && g.p(60) {
					e = c
				}
			}
			path = t.path
			if t.host != "" {
				host = t.host
			}
			if t.method != "" {
				method = t.method
			}
		}
		if g.p(20) {
			path += "/more"
		}
		out = append(out, Request{Gateway: e.gw, Listener: e.listener, Method: method, Host: host, Path: path,
			Identity: g.identity(kuadrantNamespace(sc), kinds, keys), Metadata: g.requestMetadata(metaNames)})
	}
	return out
}

// routeTarget is where a request reaches one route rule's match.
type routeTarget struct{ gw, listener, host, path, method string }

// routeTargets lists, for every HTTPRoute rule match, a parent Gateway and listener,
// a hostname of the route and the match's path and method.
func routeTargets(sc *Scenario) []routeTarget {
	var out []routeTarget
	for _, o := range sc.Objects {
		if o.GetKind() != "HTTPRoute" {
			continue
		}
		hosts, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "hostnames")
		parents, _, _ := unstructured.NestedSlice(o.Object, "spec", "parentRefs")
		rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
		for _, p := range parents {
			pm := p.(map[string]any)
			gw := fmt.Sprint(pm["namespace"]) + "/" + fmt.Sprint(pm["name"])
			listener, _ := pm["sectionName"].(string)
			for _, r := range rules {
				ms, _, _ := unstructured.NestedSlice(r.(map[string]any), "matches")
				for _, m := range ms {
					t := routeTarget{gw: gw, listener: listener}
					t.path, _, _ = unstructured.NestedString(m.(map[string]any), "path", "value")
					t.method, _, _ = unstructured.NestedString(m.(map[string]any), "method")
					if len(hosts) > 0 {
						t.host = hosts[0]
					}
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// Generate is the scenario of one seed, with reqs requests.
func Generate(seed uint64, reqs int) *Scenario {
	g := NewGenerator(seed)
	sc := g.Scenario(fmt.Sprintf("seed-%d", seed))
	sc.Requests = g.Requests(sc, reqs)
	return sc
}
