package effective

import (
	"strconv"
	"strings"
)

// String describes who a principal selects.
func (p Principal) String() string {
	switch {
	case p.None:
		return "nobody"
	case p.Any:
		return "any caller"
	}
	return p.Value
}

// String describes what a permission allows, e.g. "tools/call [balance, history]".
func (p Permission) String() string {
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
		out += " and " + p.L7.String()
	}
	return out
}

// String describes the L7 matchers.
func (m *L7Match) String() string {
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
