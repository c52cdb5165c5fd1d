package topology

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ComputedMessagePrefix starts the message of every condition of SpecStatus: agpol
// computed it, no controller recorded it.
const ComputedMessagePrefix = "computed by agpol, no controller status recorded: "

// unsetTransition is the lastTransitionTime of the computed conditions: the one the
// ListenerSet CRD's default status carries (gateway-api listenerset_types.go, the Status
// field's kubebuilder:default), since agpol knows no transition.
var unsetTransition = metav1.Unix(0, 0).Rfc3339Copy()

// SpecStatus is the ListenerSet status (gateway-api listenerset_types.go
// ListenerSetStatus) that follows from this computation, as a controller would write it:
//   - Accepted: True (Accepted; ListenersNotValid when a listener is Conflicted), or False
//     with agpol's reason (NotAllowed, ParentNotFound, NotSupported) and the detail;
//   - Programmed: True (Programmed), False (ListenersNotValid) when a listener is
//     Conflicted, or False with the Accepted reason when the Gateway does not take it;
//   - per listener, when the Gateway takes the ListenerSet: attachedRoutes, and the
//     Accepted, Conflicted (HostnameConflict, ProtocolConflict, or NoConflicts) and
//     Programmed conditions.
//
// Every message starts with ComputedMessagePrefix.
func (st ListenerSetStatus) SpecStatus() gwapiv1.ListenerSetStatus {
	ls := st.ListenerSet
	cond := func(t string, ok bool, reason, msg string) metav1.Condition {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: ComputedMessagePrefix + msg,
			ObservedGeneration: ls.Generation, LastTransitionTime: unsetTransition}
	}
	var out gwapiv1.ListenerSetStatus
	if !st.Accepted {
		reason, detail, _ := strings.Cut(st.Reason, ": ")
		out.Conditions = []metav1.Condition{
			cond(string(gwapiv1.ListenerSetConditionAccepted), false, reason, detail),
			cond(string(gwapiv1.ListenerSetConditionProgrammed), false, reason, detail),
		}
		return out
	}
	if len(st.Conflicts) > 0 {
		msg := "the Gateway takes the ListenerSet; some of its listeners are Conflicted and carry no traffic"
		out.Conditions = []metav1.Condition{
			cond(string(gwapiv1.ListenerSetConditionAccepted), true, string(gwapiv1.ListenerSetReasonListenersNotValid), msg),
			cond(string(gwapiv1.ListenerSetConditionProgrammed), false, string(gwapiv1.ListenerSetReasonListenersNotValid), msg),
		}
	} else {
		out.Conditions = []metav1.Condition{
			cond(string(gwapiv1.ListenerSetConditionAccepted), true, string(gwapiv1.ListenerSetReasonAccepted), "the Gateway takes the ListenerSet"),
			cond(string(gwapiv1.ListenerSetConditionProgrammed), true, string(gwapiv1.ListenerSetReasonProgrammed), "the Gateway takes the ListenerSet"),
		}
	}
	for _, sl := range st.Listeners {
		es := gwapiv1.ListenerEntryStatus{Name: sl.Entry.Name, AttachedRoutes: int32(sl.AttachedRoutes)}
		if sl.ConflictReason != "" {
			es.Conditions = []metav1.Condition{
				cond(string(gwapiv1.ListenerEntryConditionAccepted), false, sl.ConflictReason, sl.Conflict),
				cond(string(gwapiv1.ListenerEntryConditionConflicted), true, sl.ConflictReason, sl.Conflict),
				cond(string(gwapiv1.ListenerEntryConditionProgrammed), false, string(gwapiv1.ListenerEntryReasonInvalid), sl.Conflict),
			}
		} else {
			es.Conditions = []metav1.Condition{
				cond(string(gwapiv1.ListenerEntryConditionAccepted), true, string(gwapiv1.ListenerEntryReasonAccepted), "no conflict"),
				cond(string(gwapiv1.ListenerEntryConditionConflicted), false, "NoConflicts", "no conflict"),
				cond(string(gwapiv1.ListenerEntryConditionProgrammed), true, string(gwapiv1.ListenerEntryReasonProgrammed), "no conflict"),
			}
		}
		out.Listeners = append(out.Listeners, es)
	}
	return out
}
