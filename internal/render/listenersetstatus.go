package render

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// recordedListenerSetStatus reports whether a controller recorded a status on the
// ListenerSet: conditions other than the CRD's default (reason Pending, "Waiting for
// controller", gateway-api listenerset_types.go), or listener statuses. Where none is,
// -o json|yaml print agpol's computed status instead, so that files and a cluster
// without a controller show the same, and a controller's own status is never replaced.
func recordedListenerSetStatus(ls *snapshot.ListenerSet) bool {
	if len(ls.Status.Listeners) > 0 {
		return true
	}
	for _, c := range ls.Status.Conditions {
		if c.Reason != string(gwapiv1.ListenerSetReasonPending) {
			return true
		}
	}
	return false
}

// setStatus sets an object's status to st (a pointer to a typed status), as JSON would
// encode it.
func setStatus(u *unstructured.Unstructured, st any) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
	if err != nil {
		return
	}
	u.Object["status"] = m
}

// computedMessagePrefix starts the message of every condition of SpecStatus: agpol
// computed it, no controller recorded it.
const computedMessagePrefix = "computed by agpol, no controller status recorded: "

// unsetTransition is the lastTransitionTime of the computed conditions: the one the
// ListenerSet CRD's default status carries (gateway-api listenerset_types.go, the Status
// field's kubebuilder:default), since agpol knows no transition.
var unsetTransition = metav1.Unix(0, 0).Rfc3339Copy()

// listenerSetSpecStatus is the ListenerSet status (gateway-api listenerset_types.go
// ListenerSetStatus) that follows from topology's computation, as a controller would
// write it:
//   - Accepted: True (Accepted; ListenersNotValid when a listener is Conflicted), or False
//     with agpol's reason (NotAllowed, ParentNotFound, NotSupported) and the detail
//     (ListenerSetMissText);
//   - Programmed: True (Programmed), False (ListenersNotValid) when a listener is
//     Conflicted, or False with the Accepted reason when the Gateway does not take it;
//   - per listener, when the Gateway takes the ListenerSet: attachedRoutes, and the
//     Accepted, Conflicted (HostnameConflict, ProtocolConflict, or NoConflicts) and
//     Programmed conditions, a conflict's message written by NotProgrammedText.
//
// Every message starts with computedMessagePrefix.
func listenerSetSpecStatus(st topology.ListenerSetStatus) gwapiv1.ListenerSetStatus {
	ls := st.ListenerSet
	cond := func(t string, ok bool, reason, msg string) metav1.Condition {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: computedMessagePrefix + msg,
			ObservedGeneration: ls.Generation, LastTransitionTime: unsetTransition}
	}
	var out gwapiv1.ListenerSetStatus
	if !st.Accepted {
		detail := ListenerSetMissText(&st)
		out.Conditions = []metav1.Condition{
			cond(string(gwapiv1.ListenerSetConditionAccepted), false, st.Reason, detail),
			cond(string(gwapiv1.ListenerSetConditionProgrammed), false, st.Reason, detail),
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
			conflict := NotProgrammedText(sl.NotProgrammed)
			es.Conditions = []metav1.Condition{
				cond(string(gwapiv1.ListenerEntryConditionAccepted), false, sl.ConflictReason, conflict),
				cond(string(gwapiv1.ListenerEntryConditionConflicted), true, sl.ConflictReason, conflict),
				cond(string(gwapiv1.ListenerEntryConditionProgrammed), false, string(gwapiv1.ListenerEntryReasonInvalid), conflict),
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
