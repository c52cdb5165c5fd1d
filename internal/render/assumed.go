package render

import (
	"fmt"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/topology"
)

// backendAssumed is the note of a path whose backend object agpol assumed exists
// (explain's BackendAssumption); "" when it assumed none.
func backendAssumed(p *explain.PathInfo) string {
	if p.BackendAssumed != "" || p.BackendAssumption == nil {
		return p.BackendAssumed
	}
	return AssumedText(*p.BackendAssumption)
}

// AssumedText is the sentence of what agpol assumes of a backend object the input cannot
// show (topology.Assumption, docs/routing.md); "" when it assumes nothing.
func AssumedText(a topology.Assumption) string {
	of := ""
	if a.Of.Kind != "" {
		of = fmt.Sprintf(" of XBackend %s/%s", a.Of.Namespace, a.Of.Name)
	}
	ns, name := a.Ref.Namespace, a.Ref.Name
	switch a.Why {
	case "":
		return ""
	case topology.AssumedXBackend:
		return fmt.Sprintf("XBackend %s/%s is not in the input; assumed to exist", ns, name)
	case topology.AssumedServiceRefused:
		return fmt.Sprintf("Service %s/%s%s exists (read refused: agpol may not list Services in namespace %s, so it cannot tell)", ns, name, of, ns)
	case topology.AssumedService:
		return fmt.Sprintf("Service %s/%s%s is not in the input, which carries no Service of namespace %s: assumed to exist", ns, name, of, ns)
	case topology.AssumedKindSupported:
		kind := a.Ref.Kind
		if g := a.Ref.Group; g != "" && g != "core" {
			kind += "." + g
		}
		return fmt.Sprintf("backend kind %s is not one agpol knows of the data plane (%s); assumed supported", kind, a.DataPlane)
	}
	return "assumed: " + a.Why // a code this function does not know yet: still shown
}
