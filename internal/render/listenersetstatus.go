package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/snapshot"
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
