package render

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/snapshot"
)

// unreadCause is the reason of a decision that depends on kinds a live read could not
// read (explain.CauseUnread, CauseNotRead; docs/sources.md).
func unreadCause(c *explain.Cause) string {
	what := strings.Join(unreadKinds(c.Unread), ", ")
	if c.Event == explain.CauseNotRead {
		return fmt.Sprintf("cannot decide: %s is not among the objects read, and agpol could not read %s", c.Object, what)
	}
	return fmt.Sprintf("cannot decide: agpol could not read %s; the answer depends on them (%s)", what, wasText(c.Was))
}

// unreadStep is the trace step of kinds a live read could not read: the read's own
// messages, then what the objects that were read decide.
func unreadStep(s explain.Step) string {
	msgs := make([]string, len(s.Unread))
	for i, w := range s.Unread {
		msgs[i] = w.Message
	}
	t := strings.Join(msgs, "; ")
	if s.Was != nil {
		t += "; " + wasText(s.Was)
	}
	return t
}

// routedText is what agpol decided on its own routing, when Envoy may route otherwise.
func routedText(w *explain.Was) string {
	if w == nil {
		return ""
	}
	return fmt.Sprintf("as agpol routes it: %s by %s at level %s", strings.ToUpper(w.Verdict), w.DecidedBy, w.Level)
}

func wasText(w *explain.Was) string {
	if w == nil {
		return ""
	}
	return fmt.Sprintf("on the objects that could be read: %s by %s at level %s", strings.ToUpper(w.Verdict), w.DecidedBy, w.Level)
}

// unreadKinds names each unread kind with the permission missing.
func unreadKinds(unread []snapshot.Warning) []string {
	what := make([]string, len(unread))
	for i, w := range unread {
		switch {
		case strings.Contains(w.Message, "forbidden") && w.Namespace != "":
			what[i] = fmt.Sprintf("%s (missing permission: list %s in namespace %s)", w.Kind, w.Kind, w.Namespace)
		case strings.Contains(w.Message, "forbidden"):
			what[i] = fmt.Sprintf("%s (missing permission: list %s)", w.Kind, w.Kind)
		default:
			what[i] = fmt.Sprintf("%s (%s)", w.Kind, w.Message)
		}
	}
	return what
}
