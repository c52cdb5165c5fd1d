package explain

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/topology"
)

// An HTTPRoute match that names a method takes requests of any method in the data
// plane (the translator drops method matches): the request is routed there, and the
// trace says why.
func TestIgnoredMethodMatch(t *testing.T) {
	topo := strings.Replace(baseTopology, "  - matches: [{path: {type: PathPrefix, value: /mcp}}]\n",
		"  - matches: [{path: {type: PathPrefix, value: /mcp}, method: GET}]\n", 1)
	if topo == baseTopology {
		t.Fatal("the topology has no /mcp match to restrict")
	}
	sim := New(model.New(loadYAML(t, topo)), []effective.Semantics{effective.Reference()}, "")
	for _, tc := range []struct {
		method string
		note   bool
	}{{"POST", true}, {"GET", false}} {
		r := &Request{Name: "t", From: sa("billing"), Gateway: &NamespacedName{"gw", "gw"}, Listener: "https",
			HTTP: HTTP{Method: tc.method, Path: "/mcp"}, MCP: &MCP{Method: "tools/list"}}
		res, err := sim.Explain(Full, r)
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Path.Backend != "XBackend app/xb" {
			t.Fatalf("%s /mcp went to %q (%s), want XBackend app/xb", tc.method, res[0].Path.Backend, res[0].Path.NoBackend)
		}
		found := false
		want := topology.IgnoredMethod{Route: "app/r", Rule: "0", Method: "GET", RequestMethod: "POST"}
		for _, s := range res[0].Trace {
			if s.Event == EventIgnoredMethod && s.IgnoredMethod != nil && *s.IgnoredMethod == want {
				found = true
			}
		}
		if found != tc.note {
			t.Errorf("%s: ignored-method note in the trace = %v, want %v: %+v", tc.method, found, tc.note, res[0].Trace)
		}
	}
}
