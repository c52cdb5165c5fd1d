package render

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Selector narrows a listing to one namespace and/or one name ("" = any), and to the
// objects a label selector (-l) and a field selector (--field-selector) match (nil = any).
type Selector struct {
	Namespace string
	Name      string
	Labels    labels.Selector
	Fields    fields.Selector
}

func (s Selector) match(m metav1.ObjectMeta) bool {
	return (s.Namespace == "" || m.Namespace == s.Namespace) && (s.Name == "" || m.Name == s.Name) &&
		(s.Labels == nil || s.Labels.Matches(labels.Set(m.Labels))) &&
		(s.Fields == nil || s.Fields.Matches(ObjectFields(m)))
}

// Match reports whether the selector selects an object with this metadata.
func (s Selector) Match(m metav1.ObjectMeta) bool { return s.match(m) }

// ObjectFields are the fields a field selector can name on agpol's kinds: the API server
// supports metadata.name and metadata.namespace on every custom resource.
func ObjectFields(m metav1.ObjectMeta) fields.Set {
	return fields.Set{"metadata.name": m.Name, "metadata.namespace": m.Namespace}
}

// Item is one object of a listing: the object as read (what kubectl's printers print),
// where it was read, and whatever agpol computed about it (the table's columns).
type Item struct {
	// Object is nil until Load: GetView does not decode the objects again, which only
	// kubectl's printers print (a table needs none of them).
	Object *unstructured.Unstructured `json:"object"`
	Source snapshot.Source            `json:"source"`
	// Admission is the admission the data plane follows (XAccessPolicy; computed by effective).
	Admission any `json:"admission,omitempty"`
	// Enforcement is whether the data plane enforces the policy (XAccessPolicy, AuthPolicy).
	Enforcement any `json:"enforcement,omitempty"`
	resource    string
	origin      snapshot.Origin
	// fill completes the object as printed (a ListenerSet's computed status), or nil.
	fill func(*unstructured.Unstructured)
}

// Load sets Object to the object as read (decoded again, and kept, on the first call
// for the object) and returns it.
func (it *Item) Load() *unstructured.Unstructured {
	if it.Object == nil {
		it.Object = it.origin.Object()
		if it.fill != nil {
			it.Object = it.Object.DeepCopy()
			it.fill(it.Object)
		}
	}
	return it.Object
}

// Fresh returns a copy of the object as read that the caller owns, decoded again
// without being kept when it can be (snapshot.Origin.Fresh).
func (it *Item) Fresh() *unstructured.Unstructured {
	if it.Object != nil {
		return it.Object.DeepCopy()
	}
	u := it.origin.Fresh()
	if it.fill != nil {
		it.fill(u)
	}
	return u
}

// encoded returns the object as an item of get's JSON List, encoded while it was read
// (ListedJSONInspect); nil when it was not, or when it is printed completed (fill).
func (it *Item) encoded() []byte {
	if it.fill != nil || it.Object != nil {
		return nil
	}
	b, _ := it.origin.Inspected().(encodedItem)
	return b
}

// ReportAPIVersion versions agpol's own report documents.
const ReportAPIVersion = "agpol.dev/v1alpha1"

func item(o snapshot.Origin, resource string) Item {
	return Item{Source: o.Source, resource: resource, origin: o}
}

// Computed carries what other stages computed about objects, for get and graph to show.
// Nil functions leave the column to the status recorded on the object.
type Computed struct {
	// Admission is an XAccessPolicy's ACCEPTED cell: the verdict followed, and its origin.
	Admission func(*snapshot.XAccessPolicy) State
	// AccessEnforcement is an XAccessPolicy's ENFORCED cell: what the data plane does.
	AccessEnforcement func(*snapshot.XAccessPolicy) State
	// Enforcement is an AuthPolicy's ENFORCED cell.
	Enforcement func(*snapshot.AuthPolicy) State
	// ListenerSetAccepted is a ListenerSet's ACCEPTED cell: whether its Gateway takes it.
	ListenerSetAccepted func(*snapshot.ListenerSet) State
	// ListenerSetStatus is the status agpol computes for a ListenerSet (spec-shaped),
	// which -o json|yaml print where no controller recorded one.
	ListenerSetStatus func(*snapshot.ListenerSet) (gwapiv1.ListenerSetStatus, bool)
	// ListenerConflicts are a ListenerSet's listeners that conflict with an earlier
	// listener of the Gateway (by name, with why): LISTENERS marks them (Conflicted).
	ListenerConflicts func(*snapshot.ListenerSet) map[string]*topology.NotProgrammed
	// GatewayListenerSets is what a Gateway's LISTENERS cell adds after its own
	// listeners: the ListenerSets naming it, each with whether the Gateway takes it and
	// how many of its listeners are Conflicted.
	GatewayListenerSets func(*snapshot.Gateway) State
}

// State is what another stage computed about one object.
type State struct {
	// Cell is the table cell (and the graph label).
	Cell string
	// InForce is set when the object counts: admitted, or enforced.
	InForce bool
	// Detail is the value for the -o json|yaml item.
	Detail any
}

// GetView builds the table and the items for one resource type of agpol get.
func GetView(kind string, s *snapshot.Snapshot, t *topology.Targets, sel Selector, wide bool, c Computed) (*Table, []Item) {
	switch kind {
	case "gateways":
		return gatewayView(s, t, sel, wide, c)
	case "httproutes":
		return routeView(s, sel, wide)
	case "xbackends":
		return backendView(s, t, sel, wide)
	case "xaccesspolicies":
		return accessPolicyView(s, sel, wide, c)
	case "authpolicies":
		return authPolicyView(s, sel, wide, c)
	case "listenersets":
		return listenerSetView(s, sel, wide, c)
	}
	return &Table{}, nil
}

func withWide(wide bool, base []string, extra ...string) []string {
	if wide {
		return append(base, extra...)
	}
	return base
}

func gatewayView(s *snapshot.Snapshot, t *topology.Targets, sel Selector, wide bool, c Computed) (*Table, []Item) {
	tab := &Table{Header: withWide(wide, []string{"NAMESPACE", "NAME", "CLASS", "LISTENERS", "ACCESS-POLICIES", "AUTH-POLICIES", "AGE"}, "ADDRESSES", "SOURCE")}
	var items []Item
	for _, g := range sortByName(s.Gateways, func(g *snapshot.Gateway) metav1.ObjectMeta { return g.ObjectMeta }) {
		if !sel.match(g.ObjectMeta) {
			continue
		}
		var ls []string
		for _, l := range g.Spec.Listeners {
			ls = append(ls, fmt.Sprintf("%s:%s/%d", l.Name, l.Protocol, l.Port))
		}
		ref := topology.Ref{Group: gwapiv1.GroupName, Kind: "Gateway", Namespace: g.Namespace, Name: g.Name}
		if c.GatewayListenerSets != nil {
			if sets := c.GatewayListenerSets(g).Cell; sets != "" {
				ls = append(ls, sets)
			}
		}
		row := []string{g.Namespace, g.Name, string(g.Spec.GatewayClassName), Join(ls),
			policyNames(t.AccessPolicies[ref]), authPolicyNames(t.AuthPolicies, ref), Age(g.CreationTimestamp.Time)}
		if wide {
			var addrs []string
			for _, a := range g.Status.Addresses {
				addrs = append(addrs, a.Value)
			}
			row = append(row, Join(addrs), g.Source.String())
		}
		tab.Rows = append(tab.Rows, row)
		items = append(items, item(g.Origin, "gateway.gateway.networking.k8s.io"))
	}
	return tab, items
}

func listenerSetView(s *snapshot.Snapshot, sel Selector, wide bool, c Computed) (*Table, []Item) {
	tab := &Table{Header: withWide(wide, []string{"NAMESPACE", "NAME", "PARENT", "LISTENERS", "ACCEPTED", "AGE"}, "SOURCE")}
	var items []Item
	for _, ls := range sortByName(s.ListenerSets, func(l *snapshot.ListenerSet) metav1.ObjectMeta { return l.ObjectMeta }) {
		if !sel.match(ls.ObjectMeta) {
			continue
		}
		var conflicts map[string]*topology.NotProgrammed
		if c.ListenerConflicts != nil {
			conflicts = c.ListenerConflicts(ls)
		}
		var listeners []string
		for _, l := range ls.Spec.Listeners {
			cell := fmt.Sprintf("%s:%s/%d", l.Name, l.Protocol, l.Port)
			if conflicts[string(l.Name)] != nil {
				cell += "(Conflicted)"
			}
			listeners = append(listeners, cell)
		}
		p := ls.Spec.ParentRef
		ns := ls.Namespace
		if p.Namespace != nil {
			ns = string(*p.Namespace)
		}
		parent := ns + "/" + string(p.Name)
		if p.Kind != nil && string(*p.Kind) != "Gateway" {
			parent = string(*p.Kind) + ":" + parent
		}
		accepted := "<unknown>"
		if c.ListenerSetAccepted != nil {
			accepted = c.ListenerSetAccepted(ls).Cell
		}
		row := []string{ls.Namespace, ls.Name, parent, Join(listeners), accepted, Age(ls.CreationTimestamp.Time)}
		if wide {
			row = append(row, ls.Source.String())
		}
		tab.Rows = append(tab.Rows, row)
		it := item(ls.Origin, "listenerset.gateway.networking.k8s.io")
		if c.ListenerSetStatus != nil {
			if computed, ok := c.ListenerSetStatus(ls); ok && !recordedListenerSetStatus(ls) {
				it.fill = func(u *unstructured.Unstructured) { setStatus(u, &computed) }
			}
		}
		items = append(items, it)
	}
	return tab, items
}

func routeView(s *snapshot.Snapshot, sel Selector, wide bool) (*Table, []Item) {
	// The backends make a row long: only -o wide lists them, as kubectl keeps its long
	// columns (a pod's IP and node) for -o wide.
	tab := &Table{Header: withWide(wide, []string{"NAMESPACE", "NAME", "HOSTNAMES", "PARENTS", "AGE"}, "BACKENDS", "RULES", "SOURCE")}
	var items []Item
	for _, r := range sortByName(s.HTTPRoutes, func(r *snapshot.HTTPRoute) metav1.ObjectMeta { return r.ObjectMeta }) {
		if !sel.match(r.ObjectMeta) {
			continue
		}
		var hosts, parents, backends []string
		for _, h := range r.Spec.Hostnames {
			hosts = append(hosts, string(h))
		}
		for _, p := range r.Spec.ParentRefs {
			ns := r.Namespace
			if p.Namespace != nil {
				ns = string(*p.Namespace)
			}
			ps := ns + "/" + string(p.Name)
			if p.SectionName != nil {
				ps += "#" + string(*p.SectionName)
			}
			parents = append(parents, ps)
		}
		seen := map[string]bool{}
		for _, rule := range r.Spec.Rules {
			for _, b := range rule.BackendRefs {
				kind := "Service"
				if b.Kind != nil {
					kind = string(*b.Kind)
				}
				ns := r.Namespace
				if b.Namespace != nil {
					ns = string(*b.Namespace)
				}
				bs := kind + ":" + ns + "/" + string(b.Name)
				if !seen[bs] {
					seen[bs] = true
					backends = append(backends, bs)
				}
			}
		}
		row := []string{r.Namespace, r.Name, Join(hosts), Join(parents), Age(r.CreationTimestamp.Time)}
		if wide {
			row = append(row, Join(backends), fmt.Sprint(len(r.Spec.Rules)), r.Source.String())
		}
		tab.Rows = append(tab.Rows, row)
		items = append(items, item(r.Origin, "httproute.gateway.networking.k8s.io"))
	}
	return tab, items
}

func backendView(s *snapshot.Snapshot, t *topology.Targets, sel Selector, wide bool) (*Table, []Item) {
	tab := &Table{Header: withWide(wide, []string{"NAMESPACE", "NAME", "MCP-SERVER", "ACCESS-POLICIES", "AGE"}, "PATH", "SOURCE")}
	var items []Item
	for _, b := range sortByName(s.XBackends, func(b *snapshot.XBackend) metav1.ObjectMeta { return b.ObjectMeta }) {
		if !sel.match(b.ObjectMeta) {
			continue
		}
		server := "<none>"
		switch m := b.Spec.MCP; {
		case m.ServiceName != nil:
			server = fmt.Sprintf("service:%s:%d", *m.ServiceName, m.Port)
		case m.Hostname != nil:
			server = fmt.Sprintf("%s:%d", *m.Hostname, m.Port)
		}
		ref := topology.Ref{Group: agentic.GroupName, Kind: agentic.KindXBackend, Namespace: b.Namespace, Name: b.Name}
		row := []string{b.Namespace, b.Name, server, policyNames(t.AccessPolicies[ref]), Age(b.CreationTimestamp.Time)}
		if wide {
			p := b.Spec.MCP.Path
			if p == "" {
				p = "/mcp"
			}
			row = append(row, p, b.Source.String())
		}
		tab.Rows = append(tab.Rows, row)
		items = append(items, item(b.Origin, "xbackend.agentic.networking.x-k8s.io"))
	}
	return tab, items
}

// targetShortKinds are the short names agpol get takes for the kinds a policy targets,
// used in the TARGETS column so that the table fits a 100-column terminal.
var targetShortKinds = map[string]string{"Gateway": "gw", "XBackend": "xb"}

func accessPolicyView(s *snapshot.Snapshot, sel Selector, wide bool, c Computed) (*Table, []Item) {
	tab := &Table{Header: withWide(wide, []string{"NAMESPACE", "NAME", "ACTION", "TARGETS", "ACCEPTED", "ENFORCED", "AGE"}, "RULES", "VERSION", "SOURCE")}
	var items []Item
	for _, p := range sortByName(s.XAccessPolicies, func(p *snapshot.XAccessPolicy) metav1.ObjectMeta { return p.ObjectMeta }) {
		if !sel.match(p.ObjectMeta) {
			continue
		}
		var targets []string
		for _, tr := range p.Spec.TargetRefs {
			kind := string(tr.Kind)
			if short, ok := targetShortKinds[kind]; ok {
				kind = short
			}
			ts := kind + "/" + string(tr.Name)
			if tr.SectionName != nil {
				ts += "#" + string(*tr.SectionName)
			}
			targets = append(targets, ts)
		}
		action := string(p.Spec.Action)
		if action == "" {
			action = "<none>"
		}
		rules := fmt.Sprint(len(p.Spec.Rules))
		if p.Legacy != nil {
			rules = fmt.Sprint(len(p.Legacy.Spec.Rules))
		}
		accepted := RecordedAccepted(p.Status.Ancestors)
		it := item(p.Origin, "xaccesspolicy.agentic.networking.x-k8s.io")
		if c.Admission != nil {
			st := c.Admission(p)
			accepted, it.Admission = st.Cell, st.Detail
		}
		enforced := "<unknown>"
		if c.AccessEnforcement != nil {
			st := c.AccessEnforcement(p)
			enforced, it.Enforcement = st.Cell, st.Detail
		}
		row := []string{p.Namespace, p.Name, action, Join(targets), accepted, enforced, Age(p.CreationTimestamp.Time)}
		if wide {
			row = append(row, rules, p.APIVersion(), p.Source.String())
		}
		tab.Rows = append(tab.Rows, row)
		items = append(items, it)
	}
	return tab, items
}

func authPolicyView(s *snapshot.Snapshot, sel Selector, wide bool, c Computed) (*Table, []Item) {
	tab := &Table{Header: withWide(wide, []string{"NAMESPACE", "NAME", "TARGET", "MODE", "ACCEPTED", "ENFORCED", "AGE"}, "SOURCE")}
	var items []Item
	for _, p := range sortByName(s.AuthPolicies, func(p *snapshot.AuthPolicy) metav1.ObjectMeta { return p.ObjectMeta }) {
		if !sel.match(p.ObjectMeta) {
			continue
		}
		tr := p.Spec.TargetRef
		target := string(tr.Kind) + "/" + string(tr.Name)
		if tr.SectionName != nil {
			target += "#" + string(*tr.SectionName)
		}
		mode := "rules"
		switch {
		case p.Spec.Defaults != nil:
			mode = "defaults(" + strategyOr(p.Spec.Defaults.Strategy) + ")"
		case p.Spec.Overrides != nil:
			mode = "overrides(" + strategyOr(p.Spec.Overrides.Strategy) + ")"
		}
		enforced := conditionStatus(p.Status.Conditions, "Enforced")
		it := item(p.Origin, "authpolicy.kuadrant.io")
		if c.Enforcement != nil {
			st := c.Enforcement(p)
			enforced, it.Enforcement = st.Cell, st.Detail
		}
		accepted := conditionStatus(p.Status.Conditions, "Accepted")
		if p.IsV1beta2() && accepted == "<none>" {
			// kuadrant-operator v0.x records one condition, Available.
			if av := conditionStatus(p.Status.Conditions, "Available"); av != "<none>" {
				accepted = "Available=" + av
			}
		}
		row := []string{p.Namespace, p.Name, target, mode, accepted,
			enforced, Age(p.CreationTimestamp.Time)}
		if wide {
			row = append(row, p.Source.String())
		}
		tab.Rows = append(tab.Rows, row)
		items = append(items, it)
	}
	return tab, items
}

func strategyOr(s string) string {
	if s == "" {
		return "atomic"
	}
	return s
}

// RecordedAccepted summarises the Accepted conditions a controller recorded on an
// XAccessPolicy: True only when every ancestor says True, "<none>" without status.
func RecordedAccepted(ancestors []gwapiv1.PolicyAncestorStatus) string {
	return recordedAccepted(ancestors).Cell
}

// recordedAccepted is RecordedAccepted's cell, in force when it is True.
func recordedAccepted(ancestors []gwapiv1.PolicyAncestorStatus) State {
	if len(ancestors) == 0 {
		return State{Cell: "<none>"}
	}
	for _, a := range ancestors {
		if st := conditionStatus(a.Conditions, "Accepted"); st != "True" {
			if st == "<none>" {
				return State{Cell: "Unknown"}
			}
			return State{Cell: st}
		}
	}
	return State{Cell: "True", InForce: true}
}

func conditionStatus(conds []metav1.Condition, t string) string {
	for _, c := range conds {
		if c.Type == t {
			s := string(c.Status)
			if c.Status != metav1.ConditionTrue && c.Reason != "" {
				s += "(" + c.Reason + ")"
			}
			return s
		}
	}
	return "<none>"
}

func policyNames(ps []*snapshot.XAccessPolicy) string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return Join(names)
}

func authPolicyNames(m map[topology.Ref][]*snapshot.AuthPolicy, ref topology.Ref) string {
	var names []string
	for _, p := range m[ref] {
		names = append(names, p.Name)
	}
	return Join(names)
}

func sortByName[T any](in []T, meta func(T) metav1.ObjectMeta) []T {
	out := append([]T(nil), in...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := meta(out[i]), meta(out[j])
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// ComputedFrom is the computed cells of agpol get (and the graph's labels) from what
// effective computed: an XAccessPolicy's ACCEPTED (the admission the data plane follows
// and where it comes from) and ENFORCED cells, and an AuthPolicy's ENFORCED cell.
func ComputedFrom(st *effective.Statuses) Computed {
	var c Computed
	if st.Admission != nil {
		c.Admission = func(p *snapshot.XAccessPolicy) State {
			a, ok := st.Admission[p]
			if !ok {
				return State{Cell: "<unknown>"}
			}
			return State{Cell: a.EffectiveCell(), InForce: a.Effective.Accepted, Detail: a}
		}
		c.AccessEnforcement = func(p *snapshot.XAccessPolicy) State {
			pe, ok := st.Enforcement[p]
			if !ok {
				return State{Cell: "<unknown>"}
			}
			return State{Cell: pe.Cell(), InForce: pe.InForce(), Detail: enforcementView(pe)}
		}
	}
	if st.ListenerSets != nil {
		c.ListenerSetAccepted = func(ls *snapshot.ListenerSet) State {
			lst, ok := st.ListenerSets[ls]
			if !ok {
				return State{Cell: "<unknown>"}
			}
			if lst.Accepted {
				return State{Cell: "True", InForce: true, Detail: ListenerSetReasonText(&lst)}
			}
			return State{Cell: "False(" + lst.Reason + ")", Detail: ListenerSetReasonText(&lst)}
		}
		c.ListenerConflicts = func(ls *snapshot.ListenerSet) map[string]*topology.NotProgrammed {
			return st.ListenerSets[ls].Conflicts
		}
		c.ListenerSetStatus = func(ls *snapshot.ListenerSet) (gwapiv1.ListenerSetStatus, bool) {
			lst, ok := st.ListenerSets[ls]
			if !ok {
				return gwapiv1.ListenerSetStatus{}, false
			}
			return listenerSetSpecStatus(lst), true
		}
		byGateway := map[topology.Ref][]topology.ListenerSetStatus{}
		for _, lst := range st.ListenerSets {
			byGateway[lst.Gateway] = append(byGateway[lst.Gateway], lst)
		}
		c.GatewayListenerSets = func(gw *snapshot.Gateway) State {
			return gatewayListenerSetsCell(byGateway[topology.GatewayRef(gw.Namespace, gw.Name)])
		}
	}
	if st.AuthPolicy != nil {
		c.Enforcement = func(p *snapshot.AuthPolicy) State {
			ref := p.Namespace + "/" + p.Name
			if p.IsV1beta2() {
				pr := st.V1beta2.Policy(ref)
				if pr == nil || pr.Object != p {
					return State{Cell: "<duplicate>"}
				}
				return State{Cell: V1beta2EnforcementCell(pr), InForce: pr.Enforcement == authpolicy.Enforced || pr.Enforcement == authpolicy.PartiallyEnforced,
					Detail: pr}
			}
			pr := st.AuthPolicy.Policy(ref)
			if pr == nil || pr.Policy.Object != p {
				return State{Cell: "<duplicate>"}
			}
			return State{Cell: AuthPolicyEnforcementCell(pr), InForce: pr.Enforcement == authpolicy.Enforced,
				Detail: NewAuthPolicyStatus(pr)}
		}
	}
	return c
}

// gatewayListenerSetsCell is what a Gateway's LISTENERS cell adds: the listeners of each
// ListenerSet naming it, by the name routing gives them (namespace/listenerset/listener,
// what --listener takes), each marked when it carries no traffic: why the Gateway does
// not take its ListenerSet (NotAllowed, NotSupported, …) or that it is Conflicted; ""
// when none names it. In force when every listener is taken and programmed.
func gatewayListenerSetsCell(sets []topology.ListenerSetStatus) State {
	sort.Slice(sets, func(i, j int) bool {
		a, b := sets[i].ListenerSet, sets[j].ListenerSet
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	var cells []string
	ok := true
	for _, st := range sets {
		reason := st.Reason
		for _, l := range st.ListenerSet.Spec.Listeners {
			cell := fmt.Sprintf("%s:%s/%d", topology.ListenerSetListenerName(st.ListenerSet, string(l.Name)), l.Protocol, l.Port)
			switch {
			case !st.Accepted:
				cell += "(" + reason + ")"
				ok = false
			case st.Conflicts[string(l.Name)] != nil:
				cell += "(Conflicted)"
				ok = false
			}
			cells = append(cells, cell)
		}
	}
	return State{Cell: strings.Join(cells, ","), InForce: ok}
}
