package whatif

import (
	"fmt"
	"sort"

	"github.com/agpol/agpol/internal/explain"
)

// Names are the tools and callers an input knows, for the requests of explain and
// simulate: the tool names its policies mention (tools/call matchers, CEL literals
// compared with the tool name), the ServiceAccounts of the input and the identities rule
// sources name. A request naming anything else is answered as any tool (caller) no rule
// names, which a misspelt name in a test would pass silently: Request warns of it. An
// input that names no tool at all (only Kuadrant AuthPolicies, say) knows no tool to
// compare with, and gets no tool warning; the same for callers.
type Names struct {
	td              string
	tools, callers  map[string]bool
	toolL, callersL []string
}

// KnownNames collects the names of sim's input, compiling the chains of every path on
// sim's engines (they are cached there for the requests that follow).
func KnownNames(sim *explain.Simulator) *Names {
	n := &Names{td: sim.TrustDomain, tools: map[string]bool{}, callers: map[string]bool{}}
	f := chainFacts{principals: map[string]bool{}, tools: n.tools}
	for _, t := range targets(sim.Graph) {
		for _, en := range sim.Engines {
			factsOf(chainOf(en, t), &f)
		}
	}
	for t := range n.tools {
		n.toolL = append(n.toolL, t)
	}
	sort.Strings(n.toolL)
	for _, id := range identities(sim.Snapshot, sim.TrustDomain) {
		if !id.Other && id.Kind != explain.CallerAnonymous {
			n.callers[id.ID] = true
			n.callersL = append(n.callersL, id.ID)
		}
	}
	return n
}

// Request is the warnings of r's caller and tool that the input does not know; source
// says where r is ("FILE:LINE: request \"NAME\":", or "" for explain's flags).
func (n *Names) Request(r *explain.Request, source string) []Warning {
	var out []Warning
	if c := r.From; c.Kind != explain.CallerAnonymous {
		id := c.String()
		if c.Kind == explain.CallerSPIFFE {
			if ns, name, ok := saOfSPIFFE(c.SPIFFE, n.td); ok {
				id = explain.Caller{Kind: explain.CallerServiceAccount, Namespace: ns, Name: name}.String()
			}
		}
		if len(n.callersL) > 0 && !n.callers[id] {
			// Named as it was typed (a SPIFFE ID stays one); compared as sa:NS/NAME.
			out = append(out, Warning{Kind: UnknownCaller, Source: sourced(source, "from", "--from"), Name: c.String(), Nearest: nearestOther(id, n.callersL)})
		}
	}
	if m := r.MCP; m != nil && m.Method == "tools/call" && m.Tool != "" && len(n.toolL) > 0 && !n.tools[m.Tool] {
		out = append(out, Warning{Kind: UnknownTool, Source: sourced(source, "tool", "--tool"), Name: m.Tool, Nearest: nearestOther(m.Tool, n.toolL)})
	}
	return out
}

// sourced is "SOURCE FIELD", or flag without a source.
func sourced(source, field, flag string) string {
	if source == "" {
		return flag
	}
	return source + " " + field
}

// RequestSource is the source of a request of a request file, for Request: "FILE:LINE:
// request \"NAME\":".
func RequestSource(file string, r *explain.Request) string {
	s := file
	if r.Line > 0 {
		s = fmt.Sprintf("%s:%d", file, r.Line)
	}
	if r.Name != "" {
		s += fmt.Sprintf(": request %q:", r.Name)
	} else {
		s += ":"
	}
	return s
}

// Strict is the name that fails a request's expectation under simulate --strict for a
// warning of Request (an unknown caller or tool), as data: render writes the failure.
func (w Warning) Strict() explain.UnknownName {
	return explain.UnknownName{Tool: w.Kind == UnknownTool, Name: w.Name, Nearest: w.Nearest}
}
