// Admitting only the objects an answer reads (LoadOptions.Needs).

package cluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agpol/agpol/internal/parallel"
	"github.com/agpol/agpol/internal/snapshot"
)

// deferredAdmission is the AdmitKinds of a load whose admission waits for LoadOptions.Needs:
// the kinds with a CRD that agpol types (snapshot.KnownKinds) are typed as written and
// counted unadmitted; the input-only kinds are admitted as they are read.
func deferredAdmission() AdmitKinds {
	out := AdmitKinds{}
	for _, k := range snapshot.InputOnlyKinds {
		out[schema.GroupKind{Group: k.Group, Kind: k.Kind}] = true
	}
	return out
}

// admitNeeded admits the objects of objs that Build typed as written (their admission
// deferred) and that need names (every one when need is nil), on every core, and gives
// the typed object s holds the admitted form: for them, s is what a load admitting every
// object gives. The fields the API server would drop are recorded in input order, as
// Build records them. Objects need leaves out stay as written, counted in s.Unadmitted.
func admitNeeded(s *snapshot.Snapshot, objs []RawObject, positions snapshot.PositionResolver, need func(snapshot.Ref) bool) error {
	var todo []int
	for i, o := range objs {
		if o.r != nil && o.r.unadmitted && (need == nil || need(o.Ref())) {
			todo = append(todo, i)
		}
	}
	type admitted struct {
		typed   snapshot.Typed
		dropped []snapshot.DroppedField
		err     error
	}
	out := make([]admitted, len(todo))
	parallel.For(len(todo), func(k int) {
		u := objs[todo[k]].admissionCopy()
		dropped := admit(u, nil)
		t, err := snapshot.Decode(u)
		out[k] = admitted{t, dropped, err}
	})
	for k, i := range todo {
		o, a := objs[i], out[k]
		if a.err != nil {
			return typingError(o, positions, a.err)
		}
		if err := o.r.typed.Become(a.typed); err != nil {
			return err
		}
		o.r.unadmitted = false
		s.Unadmitted--
		o.record(s, a.dropped)
	}
	return nil
}

// admissionCopy is the object as read (with the namespace DefaultNamespace gave it), a
// copy admit may change.
func (o RawObject) admissionCopy() *unstructured.Unstructured {
	if o.r.lazy != nil && o.r.raw.Decoded() == nil {
		if u := o.r.lazy.transient(); u != nil {
			return u // decoded anew
		}
	}
	return o.Object().DeepCopy()
}
