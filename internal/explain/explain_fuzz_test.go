package explain

// Fuzz targets for the inputs explain parses (request files, caller identities) and for
// the decision engine itself: a random small topology and a random request must never
// panic and must give the same answer twice. Run them with `make fuzz` (hack/fuzz.sh);
// crashers found are committed under testdata/fuzz/<FuzzName>/ and replayed by go test.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/model"
)

// maxFuzzSeed bounds the size of a seed read from testdata.
const maxFuzzSeed = 1024

// FuzzParseRequestFile: any bytes give a request file or a *FileError naming the file;
// a parsed file's requests are normalized without panicking and have unique names.
func FuzzParseRequestFile(f *testing.F) {
	// Small seeds only: the fuzzer minimises every new input it finds from a seed, and a
	// seed of a few kilobytes holds a target at minimising for most of its time.
	files, _ := filepath.Glob("../../testdata/simulate/*/requests.yaml")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil && len(data) <= maxFuzzSeed {
			f.Add(data)
		}
	}
	for _, s := range []string{
		"requests: []",
		"requests:\n- from: {serviceAccount: a/b}\n  http: {headers: {X-A: '1', x-a: '2'}}\n",
		"requests:\n- &r {name: a}\n- *r\n",
		"a: &a [*a]\n",
		"requests: [{from: {spiffe: 'spiffe://'}}]",
		"requests: [{http: {port: 99999, time: 'x'}}]",
		"requests: [{extauth: {gateway: allow, backend: maybe}}]",
		"\xff\xfe",
		"",
		"---\n---\n",
		"requests: [{name: a}]\n---\nrequests: [{name: b}]\n",
		"requests:\n- &r {name: a, http: &h {method: GET}}\n- {<<: *r, name: b, http: *h}\n",
		"requests: [{<<: [{name: a}, {gateway: g}]}]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rf, err := ParseRequestFile("req.yaml", data, "default")
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error is %T, not *FileError: %v", err, err)
			}
			if fe.File != "req.yaml" || fe.Line < 0 || !strings.HasPrefix(err.Error(), "req.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		names := map[string]bool{}
		for _, r := range rf.Requests {
			if r == nil {
				t.Fatal("nil request")
			}
			if names[r.Name] {
				t.Fatalf("duplicate request name %q accepted", r.Name)
			}
			names[r.Name] = true
			before := fmt.Sprintf("%+v", r.HTTP.Headers)
			r.Normalize()
			c := *r
			c.Normalize()
			if fmt.Sprintf("%+v", c.HTTP.Headers) != fmt.Sprintf("%+v", r.HTTP.Headers) {
				t.Fatalf("Normalize is not idempotent: %s", before)
			}
			_ = r.Describe()
		}
	})
}

// FuzzParseIdentity: every accepted caller round-trips through its String form, and
// its principal is a SPIFFE ID or empty.
func FuzzParseIdentity(f *testing.F) {
	for _, s := range []string{"", "anonymous", "sa:agents/billing", "sa:/x", "sa:a/", "sa:a/b/c", "sa:a",
		"spiffe://", "spiffe://cluster.local/ns/a/sa/b", "spiffe://td", "SPIFFE://x", "sa:a/b\x00", "sa:ä/ö"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseCaller(s)
		if err != nil {
			if !strings.Contains(err.Error(), "invalid") {
				t.Fatalf("unclear error for %q: %v", s, err)
			}
			return
		}
		again, err := ParseCaller(id.String())
		if err != nil || again != id {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, id, id.String(), again, err)
		}
		p := id.Principal("cluster.local")
		switch id.Kind {
		case CallerAnonymous:
			if p != "" {
				t.Fatalf("anonymous has principal %q", p)
			}
		case CallerServiceAccount, CallerSPIFFE:
			if !strings.HasPrefix(p, "spiffe://") || len(p) == len("spiffe://") {
				t.Fatalf("%q: principal %q", s, p)
			}
		default:
			t.Fatalf("%q: kind %q", s, id.Kind)
		}
	})
}

// byteSource draws choices from fuzz bytes; exhausted, it keeps answering 0, so every
// input, however short, builds a topology.
type byteSource struct {
	data []byte
	i    int
}

func (b *byteSource) pick(n int) int {
	if b.i >= len(b.data) || n <= 1 {
		b.i++
		return 0
	}
	v := int(b.data[b.i]) % n
	b.i++
	return v
}

func (b *byteSource) one(options ...string) string { return options[b.pick(len(options))] }

// celChoices are expressions the decision fuzzer puts in CEL rules: valid ones over
// every allowed variable, runtime errors (missing keys), non-bool results and one that
// does not compile.
var celChoices = []string{
	`request.mcp.tool_name == 'add'`,
	`request.mcp.tool_name.startsWith('re')`,
	`request.headers['x-tenant'] == 'a'`,
	`'x-tenant' in request.headers`,
	`request.path.startsWith('/mcp')`,
	`request.url_path == '/mcp'`,
	`request.method == 'POST' && request.host.endsWith('example.com')`,
	`request.time.getFullYear() > 2000`,
	`request.headers.exists(k, k.startsWith('x-'))`,
	`request.mcp.tool_name`,
	`request.nope == 1`,
	`request.path.matches('^/m[a-z]+$')`,
}

// fuzzTopology renders a small topology from the choices in b: one Gateway (one or two
// listeners), one or two HTTPRoutes onto XBackends and a Service, and up to four
// XAccessPolicies with up to three rules each, on the Gateway or a backend.
func fuzzTopology(b *byteSource) string {
	var sb strings.Builder
	sb.WriteString(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: gw}
spec:
  gatewayClassName: c
  listeners:
`)
	fmt.Fprintf(&sb, "  - {name: https, protocol: HTTPS, port: 443, %stls: {mode: Terminate, certificateRefs: [{name: c}]}, allowedRoutes: {namespaces: {from: %s}}}\n",
		b.one("", "hostname: '*.example.com', ", "hostname: a.example.com, "), b.one("All", "Same"))
	if b.pick(2) == 1 {
		fmt.Fprintf(&sb, "  - {name: http, protocol: HTTP, port: 80, %sallowedRoutes: {namespaces: {from: All}}}\n",
			b.one("", "hostname: '*.example.com', "))
	}
	routes := 1 + b.pick(2)
	for i := 0; i < routes; i++ {
		fmt.Fprintf(&sb, `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r%d, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: gw%s}]
%s  rules:
`, i, b.one("", ", sectionName: https", ", sectionName: http"), b.one("", "  hostnames: [a.example.com]\n", "  hostnames: ['*.example.com', b.example.com]\n"))
		rules := 1 + b.pick(3)
		for j := 0; j < rules; j++ {
			fmt.Fprintf(&sb, "  - matches: [{path: {type: %s, value: %s}%s}]\n", b.one("PathPrefix", "Exact", "RegularExpression"),
				b.one("/mcp", "/", "/other", "'/m.*'"), b.one("", ", method: POST", ", headers: [{name: x-tenant, value: a}]"))
			switch b.pick(4) {
			case 0:
				sb.WriteString("    backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb}]\n")
			case 1:
				sb.WriteString("    backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb2}]\n")
			case 2:
				sb.WriteString("    backendRefs:\n    - {group: agentic.networking.x-k8s.io, kind: XBackend, name: xb, weight: 1}\n    - {group: agentic.networking.x-k8s.io, kind: XBackend, name: xb2, weight: 1}\n")
			default:
				sb.WriteString("    backendRefs: [{name: svc, port: 80}]\n")
			}
		}
	}
	sb.WriteString(baseBackends)
	policies := b.pick(5)
	for i := 0; i < policies; i++ {
		ns, ref := "gw", "{group: gateway.networking.k8s.io, kind: Gateway, name: gw}"
		switch b.pick(3) {
		case 1:
			ns, ref = "app", "{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb}"
		case 2:
			ns, ref = "app", "{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb2}"
		}
		action := b.one("Allow", "Allow", "Deny", "ExternalAuth")
		fmt.Fprintf(&sb, `---
apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: {name: p%d, namespace: %s, creationTimestamp: "2026-01-0%dT00:00:00Z"}
spec:
  targetRefs: [%s]
  action: %s
`, i, ns, 1+b.pick(3), ref, action)
		if action == "ExternalAuth" {
			sb.WriteString("  externalAuth: {protocol: GRPC, backendRef: {name: authz, port: 9000}, grpc: {}}\n")
		}
		sb.WriteString("  rules:\n")
		rules := 1 + b.pick(3)
		for j := 0; j < rules; j++ {
			fmt.Fprintf(&sb, "  - name: r%d\n", j)
			switch b.pick(4) {
			case 1:
				fmt.Fprintf(&sb, "    source: {type: ServiceAccount, serviceAccount: {namespace: agents, name: %s}}\n", b.one("billing", "support"))
			case 2:
				fmt.Fprintf(&sb, "    source: {type: SPIFFE, spiffe: %s}\n", b.one("spiffe://cluster.local/ns/agents/sa/billing", "spiffe://other.td/x"))
			case 3:
				sb.WriteString("    source: {type: ServiceAccount, serviceAccount: {name: support}}\n")
			}
			switch b.pick(5) {
			case 1:
				fmt.Fprintf(&sb, "    authorization: {type: Inline, mcp: {methods: [{name: tools/call, params: [%s]}]}}\n", b.one("add", "refund", "add, refund"))
			case 2:
				sb.WriteString("    authorization: {type: Inline, mcp: {mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS}}\n")
			case 3:
				fmt.Fprintf(&sb, "    authorization: {type: CEL, cel: {expression: %q}}\n", celChoices[b.pick(len(celChoices))])
			case 4:
				fmt.Fprintf(&sb, "    authorization: {type: Inline, mcp: {methods: [{name: %s}]}}\n", b.one("tools/list", "initialize", "resources/read"))
			}
		}
	}
	return sb.String()
}

// fuzzRequest builds a request from the choices in b.
func fuzzRequest(b *byteSource) *Request {
	r := &Request{Name: "fuzz", Gateway: &NamespacedName{Namespace: "gw", Name: "gw"}}
	switch b.pick(4) {
	case 0:
		r.From = Caller{Kind: CallerAnonymous}
	case 1:
		r.From = Caller{Kind: CallerServiceAccount, Namespace: "agents", Name: b.one("billing", "support")}
	case 2:
		r.From = Caller{Kind: CallerSPIFFE, SPIFFE: b.one("spiffe://cluster.local/ns/agents/sa/billing", "spiffe://other.td/x")}
	default:
		r.From = Caller{Kind: CallerServiceAccount, Namespace: "default", Name: "support"}
	}
	r.Listener = b.one("", "https", "http")
	switch b.pick(4) {
	case 1:
		r.Backend = &NamespacedName{Namespace: "app", Name: b.one("xb", "xb2")}
	case 2:
		r.Service = &NamespacedName{Namespace: "app", Name: "svc"}
	}
	r.HTTP = HTTP{
		Method: b.one("POST", "GET", "DELETE", "post"),
		Path:   b.one("/mcp", "/", "/mcp?x=1", "/other", "/mcpx"),
		Host:   b.one("", "a.example.com", "b.example.com:443", "A.Example.COM", "example.com", "[::1]:80"),
	}
	if b.pick(2) == 1 {
		r.HTTP.Headers = map[string]string{"x-tenant": b.one("a", "b")}
		if b.pick(2) == 1 {
			// Two spellings of one header: joined in a stable order whatever the map order.
			r.HTTP.Headers["X-Tenant"] = "c"
			r.HTTP.Headers["X-TENANT"] = "d"
		}
	}
	if b.pick(4) != 0 {
		r.MCP = &MCP{Method: b.one("tools/call", "tools/list", "initialize", "resources/read", "ping"), Tool: b.one("", "add", "refund", "read_x")}
	}
	r.ExtAuth = ExtAuth{Gateway: Answer(b.one("", "allow", "deny")), Backend: Answer(b.one("", "allow", "deny"))}
	return r
}

// decisionKey is everything a result's reader sees, in a comparable form.
func decisionKey(t *testing.T, res []*Result) string {
	t.Helper()
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("results do not marshal: %v", err)
	}
	return string(data)
}

// FuzzDecide: a random small topology and request, under every semantics preset, never
// panic, and deciding the same request twice — on the same simulator, and on a new one
// built from the same snapshot — gives the same results.
func FuzzDecide(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 0, 1, 2, 0, 0, 1, 2, 3, 4, 3, 1, 3, 1, 1, 2, 3, 3, 1, 2, 1, 1, 1, 1, 2, 1})
	f.Add([]byte("\x01\x01\x01\x01\x02\x02\x02\x02\x03\x03\x03\x03\x04\x04\x04\x04\x05\x05\x05"))
	f.Add([]byte("ExternalAuth CEL headers spiffe"))
	sems := allSemantics(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		b := &byteSource{data: data}
		manifests := fuzzTopology(b)
		s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(manifests)})
		if err != nil {
			t.Fatalf("generated topology does not load: %v\n%s", err, manifests)
		}
		req := fuzzRequest(b)
		clone := func() *Request {
			c := *req
			c.HTTP.Headers = nil
			for k, v := range req.HTTP.Headers {
				if c.HTTP.Headers == nil {
					c.HTTP.Headers = map[string]string{}
				}
				c.HTTP.Headers[k] = v
			}
			if req.MCP != nil {
				m := *req.MCP
				c.MCP = &m
			}
			return &c
		}
		sim := New(model.New(s), sems, "cluster.local")
		first, err1 := sim.Explain(Full, clone())
		second, err2 := sim.Explain(Full, clone())
		third, err3 := New(model.New(s), sems, "cluster.local").Explain(Full, clone())
		if (err1 == nil) != (err2 == nil) || (err1 == nil) != (err3 == nil) {
			t.Fatalf("errors differ: %v / %v / %v", err1, err2, err3)
		}
		if err1 != nil {
			if !errors.Is(err1, ErrInput) || err1.Error() != err2.Error() || err1.Error() != err3.Error() {
				t.Fatalf("errors differ or are not input errors: %v / %v / %v", err1, err2, err3)
			}
			return
		}
		k1, k2, k3 := decisionKey(t, first), decisionKey(t, second), decisionKey(t, third)
		if k1 != k2 || k1 != k3 {
			t.Fatalf("same request, different answers:\n%s\n%s\n%s\nmanifests:\n%s", k1, k2, k3, manifests)
		}
		for _, r := range first {
			switch r.Verdict {
			case Allow, Deny, Indeterminate:
			default:
				t.Fatalf("verdict %q", r.Verdict)
			}
			if r.Verdict == Indeterminate && req.ExtAuth.Gateway != "" && req.ExtAuth.Backend != "" {
				t.Fatalf("indeterminate although every authorizer answer is given: %s", k1)
			}
		}
		if !reflect.DeepEqual(len(first), len(third)) {
			t.Fatalf("result counts differ")
		}
	})
}
