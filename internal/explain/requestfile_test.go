package explain

import (
	"testing"
	"unsafe"
)

const twoRequests = `apiVersion: agpol.dev/v1alpha1
kind: SimulationRequests
trustDomain: cluster.local
requests:
- name: a
  from: {serviceAccount: agents/billing}
  gateway: prod/edge
  http: {method: post, host: tools.example.com, path: /mcp, headers: {X-Tenant: t1, x-tenant: t2}}
  mcp: {tool: refund}
- name: b
  from: {serviceAccount: agents/billing}
  gateway: edge
  http: {method: POST, host: tools.example.com, path: /mcp, headers: {x-tenant: t1}}
  mcp: {method: tools/call, tool: refund}
`

// TestRequestFileValues: what the parser makes of each field, and that requests which
// repeat a value share one copy of it without sharing anything a caller may change.
func TestRequestFileValues(t *testing.T) {
	rf, err := ParseRequestFile("requests.yaml", []byte(twoRequests), "default")
	if err != nil {
		t.Fatal(err)
	}
	if len(rf.Requests) != 2 {
		t.Fatalf("%d requests, want 2", len(rf.Requests))
	}
	a, b := rf.Requests[0], rf.Requests[1]
	for _, c := range []struct{ field, got, want string }{
		{"a.from", a.From.String(), "sa:agents/billing"},
		{"a.gateway", a.Gateway.String(), "prod/edge"},
		{"b.gateway", b.Gateway.String(), "default/edge"},
		{"a.method", a.HTTP.Method, "POST"},
		{"a.header", a.HTTP.Headers["x-tenant"], "t1,t2"},
		{"b.header", b.HTTP.Headers["x-tenant"], "t1"},
		{"a.mcp.method", a.MCP.Method, "tools/call"},
		{"b.mcp.tool", b.MCP.Tool, "refund"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.field, c.got, c.want)
		}
	}
	for _, c := range []struct{ field, x, y string }{
		{"host", a.HTTP.Host, b.HTTP.Host},
		{"path", a.HTTP.Path, b.HTTP.Path},
		{"method", a.HTTP.Method, b.HTTP.Method},
		{"caller namespace", a.From.Namespace, b.From.Namespace},
		{"tool", a.MCP.Tool, b.MCP.Tool},
	} {
		if unsafe.StringData(c.x) != unsafe.StringData(c.y) {
			t.Errorf("the two requests hold two copies of the %s %q", c.field, c.x)
		}
	}
	if a.Gateway == b.Gateway || a.MCP == b.MCP || a == b {
		t.Fatal("two requests share a part a caller may change")
	}
	b.Gateway.Name, b.MCP.Tool = "other", "other"
	if a.Gateway.Name != "edge" || a.MCP.Tool != "refund" {
		t.Errorf("changing request b changed request a: gateway %s, tool %s", a.Gateway, a.MCP.Tool)
	}
}

// TestRequestFileNormalForm: a request file's requests come out of the parser as
// Normalize leaves them (Normalize does nothing more to them): method and path
// defaulted, method in capitals, header names in lower case.
func TestRequestFileNormalForm(t *testing.T) {
	const file = `apiVersion: agpol.dev/v1alpha1
kind: SimulationRequests
requests:
- name: defaults
  from: {serviceAccount: agents/billing}
  gateway: edge
- name: spelled
  from: {serviceAccount: agents/billing}
  gateway: edge
  http: {method: delete, path: /x, headers: {MCP-Session-Id: s1, X-A: a, x-a: b}}
`
	rf, err := ParseRequestFile("requests.yaml", []byte(file), "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		r            *Request
		method, path string
		headers      map[string]string
	}{
		{rf.Requests[0], "POST", "/mcp", nil},
		{rf.Requests[1], "DELETE", "/x", map[string]string{"mcp-session-id": "s1", "x-a": "a,b"}},
	} {
		if !c.r.normal {
			t.Errorf("%s: not marked normal", c.r.Name)
		}
		got := *c.r
		got.normal = false
		got.Normalize() // what Normalize would make of it, were it not marked
		if got.HTTP.Method != c.method || c.r.HTTP.Method != c.method || got.HTTP.Path != c.path || c.r.HTTP.Path != c.path {
			t.Errorf("%s: method %q path %q, normalized %q %q; want %q %q", c.r.Name, c.r.HTTP.Method, c.r.HTTP.Path,
				got.HTTP.Method, got.HTTP.Path, c.method, c.path)
		}
		if len(c.r.HTTP.Headers) != len(c.headers) {
			t.Errorf("%s: headers %v, want %v", c.r.Name, c.r.HTTP.Headers, c.headers)
		}
		for k, v := range c.headers {
			if c.r.HTTP.Headers[k] != v || got.HTTP.Headers[k] != v {
				t.Errorf("%s: header %s = %q (normalized %q), want %q", c.r.Name, k, c.r.HTTP.Headers[k], got.HTTP.Headers[k], v)
			}
		}
	}
}
