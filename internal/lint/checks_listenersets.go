package lint

import (
	"fmt"

	"github.com/agpol/agpol/internal/topology"
)

// ListenerSet checks: what Gateway API rejects of a ListenerSet (docs/routing.md (ListenerSet)).
func init() {
	Register(&Check{
		Code: "AGP214", Severity: SeverityWarning, Category: CategoryReferences,
		Title: "ListenerSet not attached to its Gateway",
		Explanation: `The ListenerSet's spec.parentRef names no Gateway of the input (ParentNotFound), the
Gateway's spec.allowedListeners does not admit the ListenerSet's namespace (NotAllowed:
allowedListeners unset or from None, Same for another namespace, or a Selector the
namespace's labels do not match), or the Gateway's data plane reads no ListenerSets
(NotSupported: the kube-agentic-networking reference data plane at c7e4194). Gateway
API sets the ListenerSet's Accepted condition to False (listenerset_types.go), and none
of its listeners carries traffic: every route attached through it is unreachable. See
docs/routing.md (ListenerSet).`,
		Fix: `Name an existing Gateway in spec.parentRef, allow the ListenerSet's namespace in the
Gateway's spec.allowedListeners.namespaces (from Same, All or a matching Selector), or,
on the reference data plane, move the listeners onto the Gateway itself.`,
		DataPlanes: AppliesToAll,
		Run:        runListenerSetNotAttached,
	})
	Register(&Check{
		Code: "AGP215", Severity: SeverityWarning, Category: CategoryReferences,
		Title: "ListenerSet listener conflicts with an earlier listener",
		Explanation: `A listener of a ListenerSet shares its port with a listener that comes before it (the
Gateway's own listeners first, then those of older ListenerSets, by creation time then
namespace/name) and either has the same hostname (HostnameConflict) or mixes TCP/UDP
with HTTP/HTTPS/TLS (ProtocolConflict). Gateway API gives precedence to the earlier
listener: this one gets Conflicted=True and Accepted=False, and routes attached to it
carry no traffic (listenerset_types.go, GEP-1713). See docs/routing.md (ListenerSet).`,
		Fix: `Give the listener a hostname or port no earlier listener of the Gateway uses, or remove
it and attach its routes to the earlier listener.`,
		DataPlanes: AppliesToAll,
		Run:        runListenerSetConflict,
	})
}

func runListenerSetNotAttached(ctx *Context) []Finding {
	var out []Finding
	for _, st := range graph(ctx).ListenerSetStatuses() {
		ls := st.ListenerSet
		if st.Accepted || ctx.Rejected(ls.Origin) {
			continue
		}
		f := ctx.Blame(ls.Origin, "spec.parentRef")
		f.Message = "ListenerSet not attached, its listeners carry no traffic: "
		f.Quoted = &Quoted{ListenerSet: &st}
		out = append(out, f)
	}
	return out
}

func runListenerSetConflict(ctx *Context) []Finding {
	g := graph(ctx)
	var out []Finding
	for _, gw := range g.Gateways() {
		for _, sl := range g.ListenerSetListeners(topology.GatewayRef(gw.Namespace, gw.Name)) {
			if sl.ConflictReason == "" || ctx.Rejected(sl.ListenerSet.Origin) {
				continue
			}
			i := 0
			for i < len(sl.ListenerSet.Spec.Listeners) && sl.ListenerSet.Spec.Listeners[i].Name != sl.Entry.Name {
				i++
			}
			f := ctx.Blame(sl.ListenerSet.Origin, fmt.Sprintf("spec.listeners[%d]", i))
			f.Message = fmt.Sprintf("listener %s of Gateway %s/%s is not programmed: ", sl.Name, gw.Namespace, gw.Name)
			f.Quoted = &Quoted{NotProgrammed: sl.NotProgrammed}
			out = append(out, f)
		}
	}
	return out
}
