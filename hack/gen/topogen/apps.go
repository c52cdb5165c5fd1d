// The application files: routes, backends and their policies, and the request file.

package topogen

import (
	"fmt"
	"strings"
)

func (g *gen) appFile(a int) File {
	ns := appName(a)
	d := &doc{}
	d.start(fmt.Sprintf("Application namespace %s: MCP servers, their routes and access policies.", ns))
	d.f("apiVersion: v1\nkind: Service\nmetadata:\n  name: docs\n  namespace: %s\nspec:\n  selector:\n    app: docs\n  ports:\n  - port: 8080\n", ns)
	g.count("Service")
	for k := 0; k < backendsPerNS; k++ {
		b := a*backendsPerNS + k
		name := fmt.Sprintf("mcp-%d", k)
		d.start("")
		d.f("apiVersion: v1\nkind: Service\nmetadata:\n  name: %s-svc\n  namespace: %s\nspec:\n  selector:\n    app: %s\n  ports:\n  - name: mcp\n    port: 8080\n    targetPort: 3000\n", name, ns, name)
		g.count("Service")
		d.start("")
		d.f("apiVersion: agentic.networking.x-k8s.io/v0alpha0\nkind: XBackend\nmetadata:\n  name: %s\n  namespace: %s\n  creationTimestamp: %q\nspec:\n  mcp:\n    serviceName: %s-svc\n    port: 8080\n", name, ns, g.stamp(), name)
		if b%3 == 0 {
			d.f("    path: /mcp\n")
		}
		g.count("XBackend")
	}
	for half := 0; half < 2; half++ {
		g.route(d, a, half)
	}
	for k := 0; k < backendsPerNS; k++ {
		g.backendPolicies(d, a, k)
	}
	g.appAuthPolicies(d, a)
	return File{Name: fmt.Sprintf("20-%s.yaml", ns), Data: []byte(d.b.String())}
}

func (g *gen) route(d *doc, a, half int) {
	ns := appName(a)
	gi := g.gatewayOf(a)
	gwns := infraName(gi / gatewaysPerNS)
	name := []string{"tools-a", "tools-b"}[half]
	b0, b1 := fmt.Sprintf("mcp-%d", half*2), fmt.Sprintf("mcp-%d", half*2+1)
	internal := (a+half)%5 == 4 // every fifth route is served on the internal listener only
	host := fmt.Sprintf("%s-%s.%s", ns, name, gwDomain(gi))
	if internal {
		host = fmt.Sprintf("%s-%s.internal.%s", ns, name, gwDomain(gi))
	}
	d.start("")
	d.f("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: %s\n  namespace: %s\n  creationTimestamp: %q\nspec:\n  parentRefs:\n  - name: %s\n    namespace: %s\n", name, ns, g.stamp(), gwName(gi), gwns)
	if internal {
		d.f("    sectionName: internal\n")
	}
	d.f("  hostnames:\n  - %s\n  rules:\n", host)
	xb := func(n string, weight int) string {
		w := ""
		if weight > 0 {
			w = fmt.Sprintf("\n      weight: %d", weight)
		}
		return fmt.Sprintf("    - group: agentic.networking.x-k8s.io\n      kind: XBackend\n      name: %s%s\n", n, w)
	}
	ri := routeInfo{ns: ns, name: name, host: host, gwNS: gwns, gw: gwName(gi), backends: [2]string{b0, b1}}
	d.f("  - name: %s-session\n    matches:\n    - path:\n        type: Exact\n        value: /%s/mcp\n      method: DELETE\n    backendRefs:\n%s", b0, b0, xb(b0, 0))
	d.f("  - name: %s\n    matches:\n    - path:\n        type: PathPrefix\n        value: /%s\n    backendRefs:\n%s", b0, b0, xb(b0, 0))
	ri.rules = append(ri.rules, ruleInfo{path: "/" + b0 + "/mcp"})
	d.f("  - name: %s-canary\n    matches:\n    - path:\n        type: PathPrefix\n        value: /%s\n      headers:\n      - name: x-canary\n        value: \"true\"\n    backendRefs:\n%s%s", b1, b1, xb(b1, 90), xb(b0, 10))
	ri.rules = append(ri.rules, ruleInfo{path: "/" + b1 + "/mcp", header: "x-canary"})
	d.f("  - name: %s\n    matches:\n    - path:\n        type: PathPrefix\n        value: /%s\n    - path:\n        type: RegularExpression\n        value: /v[0-9]+/%s/.*\n    backendRefs:\n%s", b1, b1, b1, xb(b1, 0))
	ri.rules = append(ri.rules, ruleInfo{path: "/" + b1 + "/mcp"})
	d.f("  - name: docs\n    matches:\n    - path:\n        type: PathPrefix\n        value: /docs\n    backendRefs:\n    - name: docs\n      port: 8080\n")
	g.count("HTTPRoute")
	g.routes = append(g.routes, ri)
}

func (g *gen) targetBackends(d *doc, names ...string) {
	d.f("  targetRefs:\n")
	for _, n := range names {
		d.f("  - group: agentic.networking.x-k8s.io\n    kind: XBackend\n    name: %s\n", n)
	}
}

// backendPolicies writes the XAccessPolicies of XBackend k of application namespace a:
// its quota of policies, of every kind, each with its own rules.
func (g *gen) backendPolicies(d *doc, a, k int) {
	ns := appName(a)
	b := a*backendsPerNS + k
	xb := fmt.Sprintf("mcp-%d", k)
	for q := 0; q < g.quota[b]; q++ {
		name := fmt.Sprintf("%s-p%d", xb, q)
		targets := []string{xb}
		// One policy in 25 also covers the XBackend's sibling (targetRefs of one kind).
		if (b+q)%25 == 0 {
			targets = append(targets, fmt.Sprintf("mcp-%d", k^1))
		}
		legacy := q == 3 && b%10 == 3
		d.start("")
		if legacy {
			// Written against v0alpha0: InlineTools rules, no action.
			d.f("apiVersion: agentic.networking.x-k8s.io/v0alpha0\nkind: XAccessPolicy\nmetadata:\n  name: %s\n  namespace: %s\n  creationTimestamp: %q\nspec:\n", name, ns, g.stamp())
			g.targetBackends(d, targets...)
			d.f("  rules:\n  - name: legacy-tools\n")
			g.saSource(d, "    ", b+q)
			d.f("    authorization:\n      type: InlineTools\n      tools: [%s]\n", strings.Join(g.pick(tools, 2), ", "))
			g.count("XAccessPolicy")
			continue
		}
		d.f("apiVersion: agentic.networking.x-k8s.io/v1alpha1\nkind: XAccessPolicy\nmetadata:\n  name: %s\n  namespace: %s\n  creationTimestamp: %q\n  labels:\n    team: team-%d\nspec:\n", name, ns, g.stamp(), b%13)
		g.targetBackends(d, targets...)
		switch {
		case q == 0:
			// The backend's main Allow policy: handshake, per-agent tool lists.
			d.f("  action: Allow\n  rules:\n")
			g.handshake(d)
			for r := 0; r < 3; r++ {
				d.f("  - name: agent-%d-tools\n", r)
				g.saSource(d, "    ", b*3+r)
				picked := g.pick(tools, 3)
				d.f("    authorization:\n      type: Inline\n      mcp:\n        methods:\n        - name: tools/list\n        - name: tools/call\n          params: [%s]\n", strings.Join(picked, ", "))
				key := ns + "/" + xb
				g.callers[key] = append(g.callers[key], caller{sa: b*3 + r, tools: picked})
			}
		case q == 1:
			// CEL on the tool name and a header.
			d.f("  action: Allow\n  rules:\n  - name: cel-tools\n")
			g.saSource(d, "    ", b+11)
			d.f("    authorization:\n      type: CEL\n      cel:\n        expression: request.mcp.tool_name in [%s] && request.headers['x-tenant'] == 'tenant-%d'\n",
				quoted(g.pick(tools, 2)), b%7)
		case q == 2 && b%3 == 1:
			// An external authorizer (HTTP) for the write tools.
			d.f("  action: ExternalAuth\n  externalAuth:\n    protocol: HTTP\n    backendRef:\n      name: authz\n      namespace: %s\n      port: 8080\n    http:\n      path: /check\n      allowedHeaders: [authorization]\n", infraName(g.gatewayOf(a)/gatewaysPerNS))
			d.f("  rules:\n  - name: writes\n    authorization:\n      type: Inline\n      mcp:\n        methods:\n        - name: tools/call\n          params: [%s]\n", strings.Join(g.pick(tools, 2), ", "))
		case q == 2:
			// L7 fields: methods, paths and headers (ignored by the reference controller).
			d.f("  action: Allow\n  rules:\n  - name: http-read\n")
			g.saSource(d, "    ", b+5)
			d.f("    authorization:\n      type: Inline\n      methods: [GET, POST]\n      paths:\n      - type: PathPrefix\n        value: /%s\n      headers:\n      - name: x-tenant\n        value: tenant-%d\n", xb, b%7)
		case q == 3:
			// Mesh workloads by SPIFFE ID, prompts and resources.
			d.f("  action: Allow\n  rules:\n  - name: mesh-prompts\n    source:\n      type: SPIFFE\n      spiffe: spiffe://cluster.local/ns/%s/sa/worker-%d\n", ns, q)
			d.f("    authorization:\n      type: Inline\n      mcp:\n        methods:\n        - name: prompts/get\n          params: [summary, triage]\n        - name: resources/read\n          params: [catalog]\n")
		default:
			// Team policies: several rules each.
			d.f("  action: Allow\n  rules:\n")
			for r := 0; r < 2; r++ {
				d.f("  - name: team-%d-rule-%d\n", q, r)
				g.saSource(d, "    ", b+q*5+r)
				d.f("    authorization:\n      type: Inline\n      mcp:\n        methods:\n        - name: tools/call\n          params: [%s]\n", strings.Join(g.pick(tools, 2), ", "))
			}
		}
		g.count("XAccessPolicy")
	}
}

func (g *gen) appAuthPolicies(d *doc, a int) {
	ns := appName(a)
	// Route-level policy on tools-a: an API key and a scope check.
	d.start("")
	d.f(`apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata:
  name: tools-a
  namespace: %s
  creationTimestamp: %q
spec:
  targetRef:
    group: gateway.networking.k8s.io
    kind: HTTPRoute
    name: tools-a
  rules:
    authentication:
      tenant-keys:
        apiKey:
          selector:
            matchLabels:
              tenant: %s
        credentials:
          authorizationHeader:
            prefix: APIKEY
    authorization:
      tools-scope:
        when:
        - predicate: request.method == 'POST'
        patternMatching:
          patterns:
          - selector: auth.identity.scope
            operator: incl
            value: tools
`, ns, g.stamp(), ns)
	g.count("AuthPolicy")
	if a%2 == 1 {
		// Every other namespace overrides the canary rule of tools-b.
		d.start("")
		d.f(`apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata:
  name: tools-b-canary
  namespace: %s
  creationTimestamp: %q
spec:
  targetRef:
    group: gateway.networking.k8s.io
    kind: HTTPRoute
    name: tools-b
    sectionName: mcp-3-canary
  defaults:
    rules:
      authorization:
        canary-testers:
          patternMatching:
            patterns:
            - selector: auth.identity.groups
              operator: incl
              value: canary
`, ns, g.stamp())
		g.count("AuthPolicy")
	}
}

// requests writes a request file (agpol simulate --requests) of n requests that route
// through the topology: tool calls, listings and plain HTTP, from agents with and
// without rights, with the external authorizers' answers given.
func (g *gen) requests(n int) []byte {
	d := &doc{}
	d.f("# Requests through the synthetic topology (hack/gen).\napiVersion: agpol.dev/v1alpha1\nkind: SimulationRequests\ntrustDomain: cluster.local\nrequests:\n")
	methods := []string{"tools/call", "tools/call", "tools/call", "tools/list", "initialize", "prompts/get"}
	for i := 0; i < n; i++ {
		r := g.routes[g.rng.IntN(len(g.routes))]
		ri := g.rng.IntN(len(r.rules))
		rule := r.rules[ri]
		// Half the requests are the intended traffic: an agent the backend's main policy
		// names, calling one of its tools; the others come from any agent.
		var intended *caller
		if cs := g.callers[r.ns+"/"+r.backends[min(ri, 1)]]; len(cs) > 0 && g.rng.IntN(2) == 0 {
			intended = &cs[g.rng.IntN(len(cs))]
		}
		saIdx := g.rng.IntN(g.agentNS * agentsPerNS * 3)
		if intended != nil {
			saIdx = intended.sa
		}
		sans, saname := g.sa(saIdx)
		d.f("- name: r%06d\n  from: {serviceAccount: %s/%s}\n  gateway: %s/%s\n", i, sans, saname, r.gwNS, r.gw)
		hdr := fmt.Sprintf("x-tenant: tenant-%d", g.rng.IntN(7))
		if rule.header != "" && g.rng.IntN(2) == 0 {
			hdr += ", " + rule.header + ": \"true\""
		}
		d.f("  http: {method: POST, host: %s, path: %s, headers: {%s}}\n", r.host, rule.path, hdr)
		m := methods[g.rng.IntN(len(methods))]
		if intended != nil {
			d.f("  mcp: {method: tools/call, tool: %s}\n  extauth: allow\n", intended.tools[g.rng.IntN(len(intended.tools))])
			continue
		}
		switch m {
		case "tools/call":
			d.f("  mcp: {method: tools/call, tool: %s}\n", tools[g.rng.IntN(len(tools))])
		case "prompts/get":
			d.f("  mcp: {method: prompts/get, tool: summary}\n")
		default:
			d.f("  mcp: {method: %s}\n", m)
		}
		d.f("  extauth: allow\n")
	}
	return []byte(d.b.String())
}
