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
