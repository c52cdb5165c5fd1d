package render

import (
	"strconv"
	"strings"

	"github.com/agpol/agpol/internal/effective"
)

// principalText describes who a principal selects.
func principalText(p effective.Principal) string {
	switch {
	case p.None:
		return "nobody"
	case p.Any:
		return "any caller"
	case p.ServiceAccount:
		return identityText(p.Value) // sa:NS/NAME, as the source was written
	}
	return p.Value
}

// permissionText describes what a permission allows, e.g. "tools/call [balance, history]".
func permissionText(p *effective.Permission) string {
	if p == nil {
		return ""
	}
	var parts []string
	switch {
	case p.Any:
		parts = append(parts, "any request")
	case p.NotToolsCall:
		parts = append(parts, "anything but tools/call")
	}
	for _, m := range p.Methods {
		name := m.Name
		if m.Prefix {
			name += "*"
		}
		if len(m.Params) > 0 {
			name += " [" + strings.Join(m.Params, ", ") + "]"
		}
		parts = append(parts, name)
	}
	if p.Base {
		parts = append(parts, "base protocol (initialize, tools/list, ping, completion/*, logging/*, notifications/*, GET, DELETE+mcp-session-id)")
	}
	for _, m := range p.HTTPMethods {
		parts = append(parts, "HTTP "+m)
	}
	if p.SessionClose {
		parts = append(parts, "HTTP DELETE with mcp-session-id")
	}
	if p.CEL != nil {
		s := "CEL " + p.CEL.Expression
		if p.ToolsCallOnly {
			s = "tools/call where " + p.CEL.Expression
		}
		parts = append(parts, s)
	}
	out := strings.Join(parts, ", ")
	if p.L7 != nil {
		out += " and " + l7Text(p.L7)
	}
	if p.ToolsDropped {
		out += " (assumed: the cluster stores v1alpha1, which dropped authorization.tools; the legacy translator reading it sees no tool list either)"
	}
	return out
}

// l7Text describes the L7 matchers.
func l7Text(m *effective.L7Match) string {
	var parts []string
	if len(m.Methods) > 0 {
		parts = append(parts, "method in ["+strings.Join(m.Methods, ", ")+"]")
	}
	if len(m.Paths) > 0 {
		var ps []string
		for _, p := range m.Paths {
			ps = append(ps, p.Type+" "+p.Value)
		}
		parts = append(parts, "path "+strings.Join(ps, " or "))
	}
	for _, h := range m.Headers {
		parts = append(parts, "header "+h.Name+" "+h.Type+" "+h.Value)
	}
	if len(m.Hosts) > 0 {
		parts = append(parts, "host in ["+strings.Join(m.Hosts, ", ")+"]")
	}
	if len(m.Ports) > 0 {
		var ps []string
		for _, p := range m.Ports {
			ps = append(ps, strconv.Itoa(int(p)))
		}
		parts = append(parts, "port in ["+strings.Join(ps, ", ")+"]")
	}
	return strings.Join(parts, " and ")
}
