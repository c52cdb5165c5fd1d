// The cluster-wide, agents and infrastructure files: Gateways and their policies.

package topogen

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/topology"
)

func (g *gen) clusterFile() File {
	d := &doc{}
	d.start("Synthetic topology for agpol benchmarks (hack/gen): cluster-scoped objects and namespaces.")
	d.f("apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: agentic\nspec:\n  controllerName: %s\n", topology.AgenticControllerName)
	g.count("GatewayClass")
	for i := 0; i < g.infraNS; i++ {
		d.start("")
		d.f("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n    role: gateways\n", infraName(i))
		g.count("Namespace")
	}
	for i := 0; i < g.agentNS; i++ {
		d.start("")
		d.f("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n    role: agents\n", agentName(i))
		g.count("Namespace")
	}
	for i := 0; i < g.appNS; i++ {
		d.start("")
		// Every tenth application namespace is not labelled: its routes are refused by the
		// HTTPS listeners' selector and only reach the gateways over plain HTTP.
		label := "true"
		if i%10 == 9 {
			label = "false"
		}
		d.f("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n    role: tools\n    mcp-access: %q\n", appName(i), label)
		g.count("Namespace")
	}
	return File{Name: "00-cluster.yaml", Data: []byte(d.b.String())}
}

func (g *gen) agentsFile() File {
	d := &doc{}
	d.start("Caller identities: the agents' ServiceAccounts.")
	for i := 0; i < g.agentNS; i++ {
		for k := 0; k < agentsPerNS; k++ {
			d.start("")
			d.f("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: agent-%d\n  namespace: %s\n", k, agentName(i))
			g.count("ServiceAccount")
		}
	}
	return File{Name: "01-agents.yaml", Data: []byte(d.b.String())}
}

func (g *gen) infraFile(i int) File {
	ns := infraName(i)
	d := &doc{}
	d.start(fmt.Sprintf("Gateway namespace %s: gateways, their authorizer, gateway-level policies.", ns))
	d.f("apiVersion: v1\nkind: Service\nmetadata:\n  name: authz\n  namespace: %s\nspec:\n  selector:\n    app: authz\n  ports:\n  - name: grpc\n    port: 9000\n  - name: http\n    port: 8080\n", ns)
	g.count("Service")
	for k := 0; k < gatewaysPerNS; k++ {
		gi := i*gatewaysPerNS + k
		g.gateway(d, ns, gi)
		g.gatewayPolicies(d, ns, gi)
		g.gatewayAuthPolicies(d, ns, gi)
	}
	return File{Name: fmt.Sprintf("10-%s.yaml", ns), Data: []byte(d.b.String())}
}

func (g *gen) gateway(d *doc, ns string, gi int) {
	dom := gwDomain(gi)
	d.start("")
	d.f(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: %s
  namespace: %s
  creationTimestamp: %q
  labels:
    tier: edge
spec:
  gatewayClassName: agentic
  listeners:
  - name: https
    protocol: HTTPS
    port: 443
    hostname: "*.%s"
    tls:
      mode: Terminate
      certificateRefs:
      - name: %s-cert
    allowedRoutes:
      namespaces:
        from: Selector
        selector:
          matchLabels:
            mcp-access: "true"
  - name: http
    protocol: HTTP
    port: 80
    hostname: "*.%s"
    allowedRoutes:
      namespaces:
        from: All
  - name: internal
    protocol: HTTPS
    port: 8443
    hostname: "*.internal.%s"
    tls:
      mode: Terminate
      certificateRefs:
      - name: %s-internal-cert
    allowedRoutes:
      namespaces:
        from: All
      kinds:
      - kind: HTTPRoute
`, gwName(gi), ns, g.stamp(), dom, gwName(gi), dom, dom, gwName(gi))
	g.count("Gateway")
}

func (g *gen) targetGateway(d *doc, gi int, section string) {
	d.f("  targetRefs:\n  - group: gateway.networking.k8s.io\n    kind: Gateway\n    name: %s\n", gwName(gi))
	if section != "" {
		d.f("    sectionName: %s\n", section)
	}
}

func (g *gen) saSource(d *doc, indent string, i int) {
	ns, name := g.sa(i)
	d.f("%ssource:\n%s  type: ServiceAccount\n%s  serviceAccount:\n%s    namespace: %s\n%s    name: %s\n", indent, indent, indent, indent, ns, indent, name)
}

func (g *gen) handshake(d *doc) {
	d.f("  - name: handshake\n    authorization:\n      type: Inline\n      mcp:\n        mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS\n")
}

func (g *gen) gatewayPolicies(d *doc, ns string, gi int) {
	// 1: baseline Allow: the MCP handshake for everyone, tool calls for named agents.
	d.start("")
	d.f("apiVersion: agentic.networking.x-k8s.io/v1alpha1\nkind: XAccessPolicy\nmetadata:\n  name: %s-baseline\n  namespace: %s\n  creationTimestamp: %q\nspec:\n", gwName(gi), ns, g.stamp())
	g.targetGateway(d, gi, "")
	d.f("  action: Allow\n  rules:\n")
	g.handshake(d)
	// Any caller may use tools at the gateway; the backends' policies decide which.
	d.f("  - name: any-agent-tools\n    authorization:\n      type: Inline\n      mcp:\n        methods:\n        - name: tools/list\n        - name: tools/call\n")
	for r := 0; r < 3; r++ {
		d.f("  - name: agents-%d\n", r)
		g.saSource(d, "    ", gi*3+r)
		d.f("    authorization:\n      type: Inline\n      mcp:\n        methods:\n        - name: tools/list\n        - name: tools/call\n          params: [%s]\n", strings.Join(g.pick(tools, 4), ", "))
	}
	g.count("XAccessPolicy")

	// 2: mesh identities by SPIFFE ID and a CEL rule on the tool name and method.
	d.start("")
	d.f("apiVersion: agentic.networking.x-k8s.io/v1alpha1\nkind: XAccessPolicy\nmetadata:\n  name: %s-mesh\n  namespace: %s\n  creationTimestamp: %q\nspec:\n", gwName(gi), ns, g.stamp())
	g.targetGateway(d, gi, "")
	d.f("  action: Allow\n  rules:\n")
	d.f("  - name: batch-jobs\n    source:\n      type: SPIFFE\n      spiffe: spiffe://cluster.local/ns/batch-%d/sa/runner\n    authorization:\n      type: Inline\n      mcp:\n        methods:\n        - name: tools\n", gi)
	d.f("  - name: read-tools\n    authorization:\n      type: CEL\n      cel:\n        expression: request.method == 'POST' && request.mcp.tool_name in [%s]\n", quoted(g.pick(tools, 3)))
	g.count("XAccessPolicy")

	// 3: every fourth gateway delegates to an external authorizer; the others restrict the
	// internal listener.
	d.start("")
	if gi%4 == 0 {
		d.f("apiVersion: agentic.networking.x-k8s.io/v1alpha1\nkind: XAccessPolicy\nmetadata:\n  name: %s-authz\n  namespace: %s\n  creationTimestamp: %q\nspec:\n", gwName(gi), ns, g.stamp())
		g.targetGateway(d, gi, "")
		d.f("  action: ExternalAuth\n  externalAuth:\n    protocol: GRPC\n    backendRef:\n      name: authz\n      port: 9000\n    grpc:\n      allowedHeaders: [authorization, x-tenant]\n")
	} else {
		d.f("apiVersion: agentic.networking.x-k8s.io/v1alpha1\nkind: XAccessPolicy\nmetadata:\n  name: %s-internal\n  namespace: %s\n  creationTimestamp: %q\nspec:\n", gwName(gi), ns, g.stamp())
		g.targetGateway(d, gi, "internal")
		d.f("  action: Allow\n  rules:\n")
		g.handshake(d)
		d.f("  - name: operators\n")
		g.saSource(d, "    ", gi+7)
		d.f("    authorization:\n      type: Inline\n      mcp:\n        methods:\n        - name: tools\n        - name: resources/read\n          params: [config, status]\n")
	}
	g.count("XAccessPolicy")
}

func (g *gen) gatewayAuthPolicies(d *doc, ns string, gi int) {
	// Defaults for every route of the gateway (merged), a JWT from the company IdP.
	d.start("")
	d.f(`apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata:
  name: %s-defaults
  namespace: %s
  creationTimestamp: %q
spec:
  targetRef:
    group: gateway.networking.k8s.io
    kind: Gateway
    name: %s
  defaults:
    strategy: merge
    rules:
      authentication:
        company-idp:
          jwt:
            issuerUrl: https://idp.example.com/realms/g%03d
      authorization:
        tenant-member:
          patternMatching:
            patterns:
            - selector: auth.identity.groups
              operator: incl
              value: tenant-%d
`, gwName(gi), ns, g.stamp(), gwName(gi), gi, gi%7)
	g.count("AuthPolicy")
	if gi%5 == 2 {
		// Every fifth gateway forces an audit rule on every route (atomic overrides).
		d.start("")
		d.f(`apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata:
  name: %s-overrides
  namespace: %s
  creationTimestamp: %q
spec:
  targetRef:
    group: gateway.networking.k8s.io
    kind: Gateway
    name: %s
  overrides:
    strategy: atomic
    when:
    - predicate: request.host.endsWith('.%s')
    rules:
      authorization:
        audit-scope:
          patternMatching:
            patterns:
            - selector: auth.identity.scope
              operator: incl
              value: audit
`, gwName(gi), ns, g.stamp(), gwName(gi), gwDomain(gi))
		g.count("AuthPolicy")
	}
	if gi%10 == 5 {
		// Every tenth gateway has an API-key policy on its internal listener.
		d.start("")
		d.f(`apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata:
  name: %s-internal
  namespace: %s
  creationTimestamp: %q
spec:
  targetRef:
    group: gateway.networking.k8s.io
    kind: Gateway
    name: %s
    sectionName: internal
  rules:
    authentication:
      operator-keys:
        apiKey:
          selector:
            matchLabels:
              app: operators
        credentials:
          authorizationHeader:
            prefix: APIKEY
`, gwName(gi), ns, g.stamp(), gwName(gi))
		g.count("AuthPolicy")
	}
}
