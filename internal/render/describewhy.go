package render

import (
	"fmt"
	"sort"

	"github.com/agpol/agpol/internal/describe"
)

// The sentences of describe's view: why a policy does not run (NotRunText), the view's
// remarks (ViewNoteText), a listener's client certificates (MTLSText) and a rule
// another policy's replaces (ShadowText). describe gives each as a code and the names
// its sentence needs.

// NotRunText is why a described XAccessPolicy does not run on a path or target
// (describe.NotRun); "" for nil (it runs).
func NotRunText(n *describe.NotRun) string {
	if n == nil {
		return ""
	}
	switch n.Why {
	case describe.NotRunIgnored:
		return IgnoredText(n.Ignored)
	case describe.NotRunInert:
		return "inert: " + NoExtAuthFilterText(n.NoFilter)
	case describe.NotRunNoLevel:
		return "the path has no level for this target"
	case describe.NotRunNotOnLevel:
		return "not on this level"
	case describe.NotRunOtherDataPlane:
		return OtherDataPlaneText(n.OtherDataPlane)
	case describe.NotRunUnsupportedKind:
		return fmt.Sprintf("%s is neither a Gateway nor an XBackend: the data plane attaches nothing to it", n.Kind)
	case describe.NotRunTargetNotFound:
		return fmt.Sprintf("%s %s is not in the input", n.Kind, n.Name)
	case describe.NotRunBackendNotRouted:
		return "no route of any gateway reaches this XBackend"
	case describe.NotRunGatewayNoRoute:
		return "no route is attached to the gateway: no path runs the gateway level"
	case describe.NotRunPathsDiffer:
		return "runs on no path (see each path)"
	}
	return "not run: " + n.Why // a code this function does not know yet: still shown
}

// ViewNoteText is a remark on a described object (describe.Note).
func ViewNoteText(n describe.Note) string {
	switch n.Why {
	case describe.NoteNotAttached:
		return fmt.Sprintf("not attached to %s/%s listener %s: %s", n.Gateway.Namespace, n.Gateway.Name, n.Listener, AttachmentText(n.Attachment))
	case describe.NoteRouteChains:
		return "XAccessPolicies attach to Gateways and XBackends, not to routes: the chains below are those of the route's paths"
	case describe.NoteBackendNotRouted:
		return "no route of any gateway reaches this XBackend: its policies produce nothing in the data plane"
	}
	return n.Why // a code this function does not know yet: still shown
}

// MTLSText is why callers of a listener present a client certificate or not
// (describe.Listener.MTLS).
func MTLSText(l describe.Listener) string {
	switch l.MTLS {
	case describe.MTLSRequired:
		return "the kube-agentic-networking data plane requires a client certificate on HTTPS listeners"
	case describe.MTLSNone:
		return "plain HTTP carries no client certificate"
	case describe.MTLSUnknown:
		return "agpol does not model client certificates of " + l.Protocol + " listeners on the " + string(l.DataPlane) + " data plane"
	}
	return l.MTLS // a value this function does not know yet: still shown
}

// ShadowText is a rule of a described policy that another policy's replaces, or that
// replaces another's (describe.Shadow).
func ShadowText(s describe.Shadow) string {
	if s.Replaces {
		return fmt.Sprintf("rule %q replaces %s on %s", s.Rule, s.Other, s.On)
	}
	return fmt.Sprintf("rule %q is replaced by %s on %s", s.Rule, s.Other, s.On)
}

// shadowTexts are the sentences of shadows, sorted.
func shadowTexts(shadows []describe.Shadow) []string {
	if len(shadows) == 0 {
		return nil
	}
	out := make([]string, len(shadows))
	for i, s := range shadows {
		out[i] = ShadowText(s)
	}
	sort.Strings(out)
	return out
}

// viewNoteTexts are the sentences of notes, in order.
func viewNoteTexts(notes []describe.Note) []string {
	if len(notes) == 0 {
		return nil
	}
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = ViewNoteText(n)
	}
	return out
}
