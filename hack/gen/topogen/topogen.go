// Package topogen writes synthetic, realistic agpol topologies for benchmarks: N
// namespaces, Gateways with several listeners, HTTPRoutes with several rules (exact,
// prefix, header and weighted matches), XBackends with their Services, ServiceAccounts,
// XAccessPolicies of every kind (Inline with methods and params, Inline with L7 fields,
// CEL, SPIFFE sources, ExternalAuth, v0alpha0) and Kuadrant AuthPolicies with defaults,
// overrides and rule-level targets. The output is deterministic for a size and seed, and
// valid against the CRDs. Every size is ten times the previous one in every kind of
// object, so cost ratios between sizes measure scaling directly.
//
// It owns nothing agpol runs: it is used by hack/gen (the command) and by benchmarks.
package topogen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agpol/agpol/internal/topology"
)

// Size is the shape of a topology.
type Size struct {
	Name     string
	Gateways int // two per gateway namespace
	Backends int // XBackends, four per application namespace
	Policies int // XAccessPolicies
}

// Sizes are the named sizes of issue 8: each is ten times the previous.
var Sizes = []Size{
	{Name: "small", Gateways: 2, Backends: 20, Policies: 100},
	{Name: "medium", Gateways: 20, Backends: 200, Policies: 1000},
	{Name: "large", Gateways: 200, Backends: 2000, Policies: 10000},
}

// SizeByName returns a named size.
func SizeByName(name string) (Size, error) {
	var names []string
	for _, s := range Sizes {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Size{}, fmt.Errorf("unknown size %q (use %s)", name, strings.Join(names, ", "))
}

const (
	gatewaysPerNS    = 2
	backendsPerNS    = 4
	agentsPerNS      = 5
	gatewayPolicies  = 3  // XAccessPolicies per Gateway
	overLimitEvery   = 20 // every 20th XBackend has more policies than the controller admits
	overLimitCount   = 7
	backendsPerAgent = 20 // one agents namespace per 20 XBackends
)

// Scaled is s with every kind of object n times as many (n >= 1), named NAMExN: the
// same shape, for measuring how a cost grows between sizes other than tenfold.
func (s Size) Scaled(n int) Size {
	if n <= 1 {
		return s
	}
	return Size{Name: fmt.Sprintf("%sx%d", s.Name, n), Gateways: s.Gateways * n, Backends: s.Backends * n, Policies: s.Policies * n}
}

// Validate checks that a size can be generated.
func (s Size) Validate() error {
	switch {
	case s.Gateways <= 0 || s.Gateways%gatewaysPerNS != 0:
		return fmt.Errorf("gateways must be a positive multiple of %d", gatewaysPerNS)
	case s.Backends <= 0 || s.Backends%backendsPerAgent != 0:
		return fmt.Errorf("backends must be a positive multiple of %d", backendsPerAgent)
	case s.Policies < gatewayPolicies*s.Gateways+s.Backends*2:
		return fmt.Errorf("policies must be at least %d for %d gateways and %d backends",
			gatewayPolicies*s.Gateways+s.Backends*2, s.Gateways, s.Backends)
	}
	return nil
}

// Options say what to generate.
type Options struct {
	Size Size
	Seed uint64
	// Requests is the number of requests of the request file (0: none).
	Requests int
}

// File is one generated manifest file.
type File struct {
	Name string
	Data []byte
}

// Stats counts what was generated.
type Stats struct {
	Objects  map[string]int // by kind
	Files    int
	Bytes    int64
	Requests int
}

// Total is the number of objects.
func (s Stats) Total() int {
	n := 0
	for _, c := range s.Objects {
		n += c
	}
	return n
}

// String is e.g. "12345 objects (Gateway 200, ...), 503 files, 12.3 MB".
func (s Stats) String() string {
	kinds := make([]string, 0, len(s.Objects))
	for k := range s.Objects {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, s.Objects[k])
	}
	return fmt.Sprintf("%d objects (%s) in %d files, %.1f MB", s.Total(), strings.Join(parts, ", "), s.Files, float64(s.Bytes)/1e6)
}

// Topology is a generated topology: manifest files and, optionally, a request file
// (agpol simulate --requests) whose requests route through it.
type Topology struct {
	Files    []File
	Requests []byte
	Stats    Stats
}

// Generate builds the topology in memory.
func Generate(opts Options) (*Topology, error) {
	if err := opts.Size.Validate(); err != nil {
		return nil, err
	}
	g := &gen{size: opts.Size, rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		stats: Stats{Objects: map[string]int{}}, callers: map[string][]caller{}, epoch: time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)}
	g.plan()
	t := &Topology{}
	t.Files = append(t.Files, g.clusterFile(), g.agentsFile())
	for i := 0; i < g.infraNS; i++ {
		t.Files = append(t.Files, g.infraFile(i))
	}
	for i := 0; i < g.appNS; i++ {
		t.Files = append(t.Files, g.appFile(i))
	}
	if opts.Requests > 0 {
		t.Requests = g.requests(opts.Requests)
		g.stats.Requests = opts.Requests
	}
	g.stats.Files = len(t.Files)
	for _, f := range t.Files {
		g.stats.Bytes += int64(len(f.Data))
	}
	t.Stats = g.stats
	return t, nil
}

// Write generates the topology into dir (created if needed; existing generated files are
// replaced) and, when opts.Requests > 0, the request file requestsPath.
func Write(dir, requestsPath string, opts Options) (Stats, error) {
	t, err := Generate(opts)
	if err != nil {
		return Stats{}, err
	}
	if opts.Requests > 0 && requestsPath == "" {
		return Stats{}, errors.New("requests asked for but no request file path given")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Stats{}, fmt.Errorf("creating %s: %w", dir, err)
	}
	for _, f := range t.Files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			return Stats{}, fmt.Errorf("writing topology: %w", err)
		}
	}
	if t.Requests != nil {
		if err := os.WriteFile(requestsPath, t.Requests, 0o644); err != nil {
			return Stats{}, fmt.Errorf("writing requests: %w", err)
		}
	}
	return t.Stats, nil
}

type gen struct {
	size  Size
	rng   *rand.Rand
	stats Stats
	epoch time.Time
	tick  int // creationTimestamps advance one minute per object that has one

	infraNS, appNS, agentNS int
	quota                   []int // XAccessPolicies per XBackend
	// routes, for requests: one per (app namespace, half)
	routes []routeInfo
	// callers lists, per XBackend ("ns/name"), the agents its main policy lets call tools
	// and those tools, so that requests include the intended traffic.
	callers map[string][]caller
}

type caller struct {
	sa    int
	tools []string
}

type routeInfo struct {
	ns, name, host, gwNS, gw string
	backends                 [2]string
	rules                    []ruleInfo
}

type ruleInfo struct {
	path, header string
}

// Tools offered by the synthetic MCP servers.
var tools = []string{"search", "fetch", "summarize", "translate", "balance", "history", "refund", "quote",
	"create-ticket", "close-ticket", "list-orders", "get-order", "add", "multiply", "convert", "lookup"}

func (g *gen) plan() {
	s := g.size
	g.infraNS = s.Gateways / gatewaysPerNS
	g.appNS = s.Backends / backendsPerNS
	g.agentNS = s.Backends / backendsPerAgent
	// XAccessPolicies per XBackend: every overLimitEvery-th has overLimitCount (above the
	// controller's limit of five), the rest share what is left as evenly as possible.
	rest := s.Policies - gatewayPolicies*s.Gateways
	over := s.Backends / overLimitEvery
	rest -= over * overLimitCount
	normal := s.Backends - over
	g.quota = make([]int, s.Backends)
	k := 0
	for j := range g.quota {
		if j%overLimitEvery == overLimitEvery-1 {
			g.quota[j] = overLimitCount
			continue
		}
		g.quota[j] = rest / normal
		if k < rest%normal {
			g.quota[j]++
		}
		k++
	}
}

func (g *gen) stamp() string {
	g.tick++
	return g.epoch.Add(time.Duration(g.tick) * time.Minute).Format(time.RFC3339)
}

func (g *gen) count(kind string) { g.stats.Objects[kind]++ }

func infraName(i int) string { return fmt.Sprintf("infra-%03d", i) }
func appName(i int) string   { return fmt.Sprintf("app-%03d", i) }
func agentName(i int) string { return fmt.Sprintf("agents-%03d", i) }
func gwName(i int) string    { return fmt.Sprintf("gw-%03d", i) }
func gwDomain(i int) string  { return fmt.Sprintf("g%03d.example.com", i) }

// gatewayOf is the global index of the gateway an app namespace's routes attach to.
func (g *gen) gatewayOf(app int) int { return app % g.size.Gateways }

func (g *gen) sa(i int) (ns, name string) {
	return agentName(i % g.agentNS), fmt.Sprintf("agent-%d", (i/g.agentNS)%agentsPerNS)
}

func (g *gen) pick(list []string, n int) []string {
	idx := g.rng.Perm(len(list))[:n]
	sort.Ints(idx)
	out := make([]string, n)
	for i, j := range idx {
		out[i] = list[j]
	}
	return out
}

func quoted(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, ", ")
}

type doc struct{ b strings.Builder }

func (d *doc) start(comment string) {
	if d.b.Len() > 0 {
		d.b.WriteString("---\n")
	}
	if comment != "" {
		d.b.WriteString("# " + comment + "\n")
	}
}

func (d *doc) f(format string, args ...any) { fmt.Fprintf(&d.b, format, args...) }

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
