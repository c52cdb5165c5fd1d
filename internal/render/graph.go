package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/emicklei/dot"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Graph formats.
const (
	GraphDOT     = "dot"
	GraphMermaid = "mermaid"
)

// GraphInput is what a topology graph shows: the gateways to draw, the resolved
// attachment graph, the policy target index, and the admission / enforcement cells
// other stages computed (the same as agpol get's ADMISSION / ENFORCED columns).
type GraphInput struct {
	Gateways []*snapshot.Gateway
	Graph    *topology.Graph
	Targets  *topology.Targets
	Computed Computed
}

type graphBuilder struct {
	g       *dot.Graph
	mermaid bool
	nodes   map[string]dot.Node
}

func (b *graphBuilder) node(id, label, shape string, dashed bool) dot.Node {
	if n, ok := b.nodes[id]; ok {
		return n
	}
	if b.mermaid {
		label = strings.ReplaceAll(label, "\n", " · ")
	}
	n := b.g.Node(id).Label(label)
	if b.mermaid {
		switch shape {
		case "box":
			n.Attr("shape", "box")
		case "component", "hexagon":
			n.Attr("shape", "hexagon")
		case "note":
			n.Attr("shape", "asymmetric")
		case "cylinder":
			n.Attr("shape", "cylinder")
		}
		if dashed { // a policy not enforced, dashed as in DOT
			n.Attr("style", "stroke-dasharray: 5 5")
		}
	} else {
		n.Attr("shape", shape)
		if dashed {
			n.Attr("style", "dashed")
		}
	}
	b.nodes[id] = n
	return n
}

// edge draws from → to; dashed edges are policy attachments and problems.
func (b *graphBuilder) edge(from, to dot.Node, label string, dashed bool) {
	e := b.g.Edge(from, to)
	if label != "" {
		e.Label(label)
	}
	if dashed {
		if b.mermaid {
			e.Attr("link", "-.->")
		} else {
			e.Attr("style", "dashed")
		}
	}
}

// GatewayGraph writes the topology of the gateways (listeners, routes, backends) with
// the XAccessPolicies and AuthPolicies attached and their admission / enforcement state,
// as Graphviz DOT or a Mermaid flowchart.
func GatewayGraph(w io.Writer, format string, in GraphInput) error {
	b := &graphBuilder{g: dot.NewGraph(dot.Directed), mermaid: format == GraphMermaid, nodes: map[string]dot.Node{}}
	if !b.mermaid {
		b.g.Attr("rankdir", "LR")
		b.g.Attr("fontname", "Helvetica")
	}
	for _, gw := range in.Gateways {
		b.gateway(gw, in)
	}
	if b.mermaid {
		_, err := io.WriteString(w, dot.MermaidFlowchart(b.g, dot.MermaidLeftToRight))
		return err
	}
	_, err := io.WriteString(w, b.g.String()+"\n")
	return err
}

func (b *graphBuilder) gateway(gw *snapshot.Gateway, in GraphInput) {
	gref := topology.GatewayRef(gw.Namespace, gw.Name)
	gid := "Gateway/" + gw.Namespace + "/" + gw.Name
	gn := b.node(gid, fmt.Sprintf("Gateway %s/%s\nclass %s", gw.Namespace, gw.Name, gw.Spec.GatewayClassName), "box", false)
	listeners := map[string]dot.Node{}
	for _, l := range gw.Spec.Listeners {
		label := fmt.Sprintf("listener %s\n%s :%d", l.Name, l.Protocol, l.Port)
		if l.Hostname != nil {
			label += " " + string(*l.Hostname)
		}
		ln := b.node(gid+"/listener/"+string(l.Name), label, "box", false)
		listeners[string(l.Name)] = ln
		b.edge(gn, ln, "", false)
	}
	b.listenerSets(gref, gn, in, listeners)
	// Routes: accepted attachments hang under their listener; a route that names the
	// gateway but attaches nowhere hangs under the gateway with the reason.
	attached := map[string]bool{}
	reason := map[string]string{}
	var routeOrder []string
	routeNodes := map[string]dot.Node{}
	routeNode := func(r *snapshot.HTTPRoute) dot.Node {
		id := "HTTPRoute/" + r.Namespace + "/" + r.Name
		if _, ok := routeNodes[id]; !ok {
			routeOrder = append(routeOrder, id)
		}
		n := b.node(id, fmt.Sprintf("HTTPRoute %s/%s", r.Namespace, r.Name), "box", false)
		routeNodes[id] = n
		return n
	}
	for _, a := range in.Graph.Attachments(gref) {
		rn := routeNode(a.Route)
		id := "HTTPRoute/" + a.Route.Namespace + "/" + a.Route.Name
		if a.Accepted {
			attached[id] = true
			b.edge(listeners[a.Listener], rn, "", false)
		} else if a.ParentRef >= 0 && reason[id] == "" {
			reason[id] = a.Reason
		}
	}
	for _, id := range routeOrder {
		if !attached[id] {
			r := reason[id]
			if r == "" {
				r = "not attached"
			}
			b.edge(gn, routeNodes[id], "not attached: "+r, true)
		}
	}
	// Backends of every path.
	seenEdge := map[string]bool{}
	backends := map[topology.Ref]dot.Node{}
	for _, p := range in.Graph.Paths(gref) {
		rn := routeNode(p.Route)
		rule := p.RuleName
		if rule == "" {
			rule = fmt.Sprintf("rule %d", p.RuleIndex)
		}
		if p.Backend.Kind == topology.BackendNone {
			k := rn.ID() + "/none/" + rule
			if !seenEdge[k] {
				seenEdge[k] = true
				pn := b.node(k, "no backend (500)", "box", true)
				b.edge(rn, pn, rule, true)
			}
			continue
		}
		ref := p.Backend.Ref
		kind := p.Backend.Kind
		id := kind + "/" + ref.Namespace + "/" + ref.Name
		label := fmt.Sprintf("%s %s/%s", kind, ref.Namespace, ref.Name)
		if p.Backend.Problem != nil {
			label += "\n500: " + BackendProblemText(p.Backend.Problem)
		}
		bn := b.node(id, label, "cylinder", p.Backend.Problem != nil)
		if kind == topology.BackendXBackend {
			backends[topology.XBackendRef(ref.Namespace, ref.Name)] = bn
		}
		k := rn.ID() + "→" + id + "/" + rule
		if seenEdge[k] {
			continue
		}
		seenEdge[k] = true
		el := rule
		if p.RuleProblem != nil {
			el += " (500)"
		}
		b.edge(rn, bn, el, p.RuleProblem != nil || p.Backend.Problem != nil)
	}
	// XAccessPolicies on the gateway and its backends.
	b.accessPolicies(in, gref, gn)
	var refs []topology.Ref
	for r := range backends {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].String() < refs[j].String() })
	for _, r := range refs {
		b.accessPolicies(in, r, backends[r])
	}
	// AuthPolicies on the gateway (or one listener) and on its routes.
	b.authPolicies(in, gref, gn, listeners)
	for _, id := range routeOrder {
		parts := strings.SplitN(id, "/", 3)
		b.authPolicies(in, topology.HTTPRouteRef(parts[1], parts[2]), routeNodes[id], nil)
	}
}

// listenerSets draws the ListenerSets naming the Gateway between it and the routes
// attached through them: each ListenerSet, then its listeners (keyed in listeners by
// their routing name, namespace/listenerset/listener). A ListenerSet the Gateway does
// not take, and a listener that is not programmed (Conflicted), are dashed.
func (b *graphBuilder) listenerSets(gref topology.Ref, gn dot.Node, in GraphInput, listeners map[string]dot.Node) {
	for _, st := range in.Graph.ListenerSetStatuses() {
		if st.Gateway != gref {
			continue
		}
		ls := st.ListenerSet
		sid := "ListenerSet/" + ls.Namespace + "/" + ls.Name
		label := fmt.Sprintf("ListenerSet %s/%s", ls.Namespace, ls.Name)
		if !st.Accepted {
			label += "\nnot taken: " + st.Reason
		}
		sn := b.node(sid, label, "box", !st.Accepted)
		b.edge(gn, sn, "", !st.Accepted)
		taken := map[string]topology.SetListener{}
		for _, sl := range st.Listeners {
			taken[string(sl.Entry.Name)] = sl
		}
		for _, l := range ls.Spec.Listeners {
			label := fmt.Sprintf("listener %s\n%s :%d", l.Name, l.Protocol, l.Port)
			if l.Hostname != nil {
				label += " " + string(*l.Hostname)
			}
			sl, ok := taken[string(l.Name)]
			switch {
			case !ok:
				label += "\nnot programmed (ListenerSet not taken)"
			case sl.ConflictReason != "":
				label += "\nConflicted: " + sl.ConflictReason
			case sl.NotProgrammed != nil:
				label += "\nnot programmed"
			}
			name := topology.ListenerSetListenerName(ls, string(l.Name))
			ln := b.node(sid+"/listener/"+string(l.Name), label, "box", !ok || sl.NotProgrammed != nil)
			listeners[name] = ln
			b.edge(sn, ln, "", !ok || sl.NotProgrammed != nil)
		}
	}
}

func (b *graphBuilder) accessPolicies(in GraphInput, target topology.Ref, tn dot.Node) {
	for _, p := range in.Targets.AccessPolicies[target] {
		action := string(p.Spec.Action)
		if p.Legacy != nil {
			action = "v0alpha0"
		}
		state := recordedAccepted(p.Status.Ancestors)
		if in.Computed.Admission != nil {
			state = in.Computed.Admission(p)
		}
		label := fmt.Sprintf("XAccessPolicy %s/%s\n%s, accepted %s", p.Namespace, p.Name, action, state.Cell)
		inForce := state.InForce
		if in.Computed.AccessEnforcement != nil {
			enf := in.Computed.AccessEnforcement(p)
			label += "\nenforced " + enf.Cell
			inForce = enf.InForce
		}
		pn := b.node("XAccessPolicy/"+p.Namespace+"/"+p.Name, label, "note", !inForce)
		b.edge(pn, tn, "", true)
	}
}

func (b *graphBuilder) authPolicies(in GraphInput, target topology.Ref, tn dot.Node, listeners map[string]dot.Node) {
	for _, p := range in.Targets.AuthPolicies[target] {
		state := State{Cell: "-"}
		if in.Computed.Enforcement != nil {
			state = in.Computed.Enforcement(p)
		}
		label := fmt.Sprintf("AuthPolicy %s/%s\n%s", p.Namespace, p.Name, state.Cell)
		pn := b.node("AuthPolicy/"+p.Namespace+"/"+p.Name, label, "note", !state.InForce)
		to := tn
		if sn := p.Spec.TargetRef.SectionName; sn != nil && listeners != nil {
			if ln, ok := listeners[string(*sn)]; ok {
				to = ln
			}
		}
		b.edge(pn, to, "", true)
	}
}
