package explain

import (
	"fmt"
	"sort"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/suggest"
	"github.com/agpol/agpol/internal/topology"
)

// Kinds agpol reads that no access decision depends on: AuthPolicies run beside the
// verdict (Result.AuthPolicy), ServiceAccounts only name the callers of who-can and
// matrix, and the input-only kinds (snapshot.InputOnlyKinds) feed only the AuthPolicy
// decision, which says itself what it lacks.
var notInVerdict = map[string]bool{
	"authpolicies.kuadrant.io":                      true,
	"serviceaccounts":                               true,
	"secrets":                                       true,
	"roles.rbac.authorization.k8s.io":               true,
	"clusterroles.rbac.authorization.k8s.io":        true,
	"rolebindings.rbac.authorization.k8s.io":        true,
	"clusterrolebindings.rbac.authorization.k8s.io": true,
	"kuadrants.kuadrant.io":                         true,
	// A Service decides only whether a backend exists: where a live read was refused
	// the Services of its namespace, routing assumes it exists and the path says so
	// (topology.BackendTarget.Assumed, PathInfo.BackendAssumed), as for files that
	// carry no Service of the namespace.
	topology.ServicesResource: true,
}

// xaccesspolicies is the resource.group of XAccessPolicy, whose policies only target
// objects of their own namespace.
const xaccesspolicies = "xaccesspolicies.agentic.networking.x-k8s.io"

// Unread returns the warnings of kinds a live read could not read that a decision on a
// path through the given namespaces (the gateway's and the backend's) depends on, one
// per kind, sorted; nil when the read was complete. Unreadable XAccessPolicies of
// another namespace do not matter (a policy targets objects of its own namespace);
// anything else unread may change routing or the policies that apply.
func Unread(s *snapshot.Snapshot, namespaces ...string) []snapshot.Warning {
	if s == nil || !s.Partial {
		return nil
	}
	var out []snapshot.Warning
	seen := map[string]bool{}
	for _, w := range s.Warnings {
		if w.Kind == "" || notInVerdict[w.Kind] || seen[w.Kind] {
			continue
		}
		if w.Kind == xaccesspolicies && !coversAny(w, namespaces) {
			continue
		}
		seen[w.Kind] = true
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// coversAny reports whether warning w concerns one of the namespaces.
func coversAny(w snapshot.Warning, namespaces []string) bool {
	for _, ns := range namespaces {
		if w.Covers(ns) {
			return true
		}
	}
	return false
}

// UnreadBy is the DecidedBy of a decision made indeterminate by unread kinds.
const UnreadBy = "unread-objects"

// UnreadDecision is d made indeterminate because it depends on kinds agpol could not
// read: its cause names each kind (render says which permission is missing), and keeps
// what the decision would be on the objects that were read, as does its first step.
func UnreadDecision(d Decision, unread []snapshot.Warning) Decision {
	was := &Was{Verdict: d.Verdict, DecidedBy: d.DecidedBy, Level: d.Level}
	trace := append([]Step{{Level: "none", Phase: "read", Outcome: OutcomeInfo, Event: EventUnread, Unread: unread, Was: was}}, d.Trace...)
	return Decision{
		Verdict:   Indeterminate,
		Level:     "none",
		DecidedBy: UnreadBy,
		Semantics: d.Semantics,
		Cause:     &Cause{Event: CauseUnread, Unread: unread, Was: was},
		Trace:     trace,
	}
}

// Was is what a decision made indeterminate by unread kinds would be on the objects that
// were read (Cause.Was, Step.Was).
type Was struct {
	Verdict   string `json:"decision"`
	DecidedBy string `json:"decidedBy"`
	Level     string `json:"level"`
}

// unread is Unread for the path of choice ch through gateway gw.
func (sim *Simulator) unread(gw *snapshot.Gateway, ch *choice) []snapshot.Warning {
	if !sim.Snapshot.Partial {
		return nil
	}
	ns := []string{gw.Namespace}
	if ch.hasBackend {
		ns = append(ns, ch.backend.Namespace)
	}
	return Unread(sim.Snapshot, ns...)
}

// Resources of the objects a request can name.
const (
	gatewaysResource   = "gateways.gateway.networking.k8s.io"
	httproutesResource = "httproutes.gateway.networking.k8s.io"
	xbackendsResource  = "xbackends.agentic.networking.x-k8s.io"
)

// notFound is resolve's answer to a request that names an object (a gateway, route or
// backend; resource its resource.group) that is not in the snapshot, or a listener rt's
// gateway does not have (what "listener", resource ""): an input error, unless the
// object's kind could not be read in its namespace, when rt gets one choice that nothing
// can be decided on.
func (sim *Simulator) notFound(rt *routing, what, resource string, n NamespacedName) error {
	var unread []snapshot.Warning
	if sim.Snapshot.Partial && resource != "" {
		for _, w := range sim.Snapshot.Warnings {
			if w.Kind == resource && (w.Namespace == "" || w.Namespace == n.Namespace) {
				unread = append(unread, w)
				break
			}
		}
	}
	if unread == nil {
		return fmt.Errorf("%w: %s", ErrInput, sim.notFoundText(rt, what, n))
	}
	rt.gw, rt.options = nil, nil
	rt.choices = append(rt.choices[:0], choice{info: PathInfo{Gateway: what + " " + n.String()}, unread: unread})
	return nil
}

// requestFields are the request's fields (and explain's flags) naming each kind.
var requestFields = map[string]string{"gateway": "--gateway", "httproute": "--route", "xbackend": "--backend", "service": "--service"}

// notFoundText says that n, of the request's kind what, names nothing, with suggest's
// "did you mean …?" (asked once): for an object, the same NAME in another namespace, an
// object of another kind (and the flag naming it), or the nearest name; for a listener,
// the nearest listener name of rt's gateway.
func (sim *Simulator) notFoundText(rt *routing, what string, n NamespacedName) string {
	msg := fmt.Sprintf("%s %s not found", what, n)
	var objs []suggest.Object
	if what == "listener" {
		msg = fmt.Sprintf("gateway %s/%s has no listener %q", rt.gw.Namespace, rt.gw.Name, n.Name)
		for _, l := range rt.gw.Spec.Listeners {
			objs = append(objs, suggest.Object{Kind: what, Name: string(l.Name)})
		}
	} else {
		objs = suggest.Objects(sim.Snapshot)
	}
	ask := func(o suggest.Object) string {
		if f := requestFields[o.Kind]; f != "" {
			return f + " " + o.ID()
		}
		return ""
	}
	if h := suggest.Hint(suggest.Query{Kinds: []string{what}, Namespace: n.Namespace, Name: n.Name, Ask: ask}, objs); h != "" {
		msg += "; " + h
	}
	return msg
}

// NotReadDecision is the decision on a request that names an object agpol could not
// read: indeterminate, its cause naming the object and the kinds unread.
func NotReadDecision(p PathInfo, unread []snapshot.Warning) Decision {
	return Decision{
		Verdict:   Indeterminate,
		Level:     "none",
		DecidedBy: UnreadBy,
		Cause:     &Cause{Event: CauseNotRead, Object: p.Gateway, Unread: unread},
		Trace:     []Step{{Level: "none", Phase: "read", Outcome: OutcomeInfo, Event: EventUnread, Unread: unread}},
	}
}
