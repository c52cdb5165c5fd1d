package explain

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/topology"
)

// TestUncertainRegexRoute: a path regular expression Envoy and Go read differently makes
// the answer indeterminate, with the reason, instead of a confident 404 (\C: Envoy
// accepts it, Go cannot compile it) or a confident routing (a program over Envoy's size
// limit: Envoy refuses the route configuration). A request a match of higher precedence
// takes is decided as before.
func TestUncertainRegexRoute(t *testing.T) {
	const match = "  - matches: [{path: {type: PathPrefix, value: /mcp}}]\n"
	for _, tc := range []struct {
		name, match, path, want string
		verdict                 string
	}{
		{"any byte", "  - matches: [{path: {type: RegularExpression, value: '/mc\\C'}}]\n", "/mcp", topology.RegexAnyByte, Indeterminate},
		{"program size", "  - matches: [{path: {type: RegularExpression, value: '/mcp|/x{120}'}}]\n", "/mcp", topology.RegexOverLimit, Indeterminate},
		{"plain regex", "  - matches: [{path: {type: RegularExpression, value: '/mc[p]'}}]\n", "/mcp", "", Allow},
	} {
		topo := strings.Replace(baseTopology, match, tc.match, 1)
		if topo == baseTopology {
			t.Fatal("the topology has no /mcp match to replace")
		}
		sim := New(model.New(loadYAML(t, topo)), []effective.Semantics{effective.Reference()}, "")
		r := &Request{Name: "t", From: sa("billing"), Gateway: &NamespacedName{"gw", "gw"}, Listener: "https",
			HTTP: HTTP{Method: "POST", Path: tc.path}, MCP: &MCP{Method: "tools/list"}}
		res, err := sim.Explain(Full, r)
		if err != nil {
			t.Fatal(err)
		}
		d := res[0].Decision
		if d.Verdict != tc.verdict {
			t.Errorf("%s: %s by %s (%s), want %s", tc.name, d.Verdict, d.DecidedBy, d.Reason, tc.verdict)
			continue
		}
		if tc.want != "" && (d.DecidedBy != UncertainRouteBy || d.Reason != "" || d.Cause == nil || d.Cause.Event != CauseUncertainRoute ||
			d.Cause.Uncertain == nil || d.Cause.Uncertain.Why != tc.want || d.Cause.Was == nil ||
			len(d.Trace) == 0 || d.Trace[0].Uncertain != d.Cause.Uncertain) {
			t.Errorf("%s: decided by %s: %q, cause %+v; want %s with %q and the decision on agpol's routing as data", tc.name, d.DecidedBy, d.Reason, d.Cause, UncertainRouteBy, tc.want)
		}
	}
}
