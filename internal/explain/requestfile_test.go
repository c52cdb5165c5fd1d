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
