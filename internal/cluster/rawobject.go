// RawObject: an object as read, typed at reading and decoded again from its file on demand.

package cluster

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/crds"
	"github.com/agpol/agpol/internal/snapshot"
)

// RawObject is an object as read (from a file or the cluster), before it joins a snapshot.
//
// An object read from a file is typed as soon as it is read, and its unstructured form is
// not kept: Object decodes it again from the file's bytes when asked. Until then the
// object's identity, namespace defaulting and typing use what was recorded at reading;
// once Object has been called, every operation works on that object, as if it had been
// held from the start (so a caller that edits it sees its edits typed by Build).
// RawObjects come from ReadFiles, ReadLive or NewRawObject; the zero value holds nothing
// and must not be used.
type RawObject struct {
	Source snapshot.Source
	r      *rawState
}

// rawState is shared by the copies of a RawObject.
type rawState struct {
	raw *snapshot.Raw
	// lazy rebuilds the object from the file; nil when the object is held.
	lazy lazyObject
	// typed is the object as typed at reading (for an object typed by Build as written,
	// the object Build appended); fresh says Build has not used it yet.
	typed snapshot.Typed
	fresh bool
	// id is the identity recorded at reading (namespace kept up to date by DefaultNamespace).
	id snapshot.Ref
	// apiVersion, kind and annotations are recorded at reading too, for the object's header.
	apiVersion, kind string
	annotations      map[string]string
	// dropped are the fields the API server would drop, found when the object was
	// typed at reading (admit).
	dropped []snapshot.DroppedField
	// unadmitted is set for an object of a kind FileOptions.Admit leaves out: it is
	// typed as written, not admitted (AdmitKinds.skips).
	unadmitted bool
}

// NewRawObject holds an object already decoded (read from the cluster, or built by a caller).
func NewRawObject(u *unstructured.Unstructured, src snapshot.Source) RawObject {
	return RawObject{Source: src, r: &rawState{raw: snapshot.NewRaw(u)}}
}

// Object returns the object as read (for a file, with the namespace DefaultNamespace gave
// it); the same pointer every time.
func (o RawObject) Object() *unstructured.Unstructured {
	if o.r == nil {
		return nil
	}
	return o.r.raw.Object()
}

// pristine reports whether the object is still as recorded at reading: typed, not
// decoded again, and not yet used by Build.
func (o RawObject) pristine() bool {
	return o.r != nil && o.r.fresh && o.r.raw.Decoded() == nil
}

// Ref returns the object's reference (group, kind, namespace, name), as
// snapshot.RefOf(o.Object()) would, without decoding it again.
func (o RawObject) Ref() snapshot.Ref {
	if o.r != nil && o.r.lazy != nil && o.r.raw.Decoded() == nil {
		return o.r.id
	}
	return snapshot.RefOf(o.Object())
}

// Check returns the error Build would report for the object (nil when it types cleanly).
func (o RawObject) Check() error {
	if o.pristine() {
		return nil // typed cleanly at reading (objects that did not are held as read)
	}
	var scratch snapshot.Snapshot
	return scratch.Add(o.Object(), o.Source)
}

// transient returns the object for one pass (writing a snapshot) without keeping it decoded.
func (o RawObject) transient() *unstructured.Unstructured {
	if o.r != nil && o.r.lazy != nil && o.r.raw.Decoded() == nil {
		if u := o.r.lazy.transient(); u != nil {
			return u
		}
	}
	return o.Object()
}

// typeInto adds the object to s: the type recorded at reading when still pristine,
// else the object typed now.
func (o RawObject) typeInto(s *snapshot.Snapshot) error {
	if o.pristine() {
		o.r.fresh = false // a second Build types the object again, as it types a held one
		if o.r.unadmitted {
			s.Unadmitted++
		}
		s.Append(o.r.typed, snapshot.NewOrigin(o.Source, o.r.raw))
		o.record(s, o.r.dropped)
		return nil
	}
	u := o.Object()
	var dropped []snapshot.DroppedField
	if o.r.unadmitted {
		if t, err := snapshot.Decode(u); err == nil {
			s.Unadmitted++
			o.r.typed = t // admitNeeded may replace it with the admitted form
			s.Append(t, snapshot.NewOrigin(o.Source, o.r.raw))
			return nil
		}
		// Typed as written it fails: admitted, as a load admitting every object does
		// (the API server may prune the field at fault).
		o.r.unadmitted = false
	}
	if !o.Source.AsStored() && u != nil {
		// Typed as the API server would store it; the object as read stays as it is
		// (lint validates it, a snapshot writes it).
		u = u.DeepCopy()
		dropped = admit(u, nil)
	}
	t, err := snapshot.Decode(u)
	s.Append(t, snapshot.NewOrigin(o.Source, o.r.raw))
	if err == nil {
		o.record(s, dropped)
	}
	return err
}

// record adds the fields the API server would drop of the object to s.Dropped.
func (o RawObject) record(s *snapshot.Snapshot, dropped []snapshot.DroppedField) {
	if len(dropped) == 0 {
		return
	}
	id := o.Ref()
	for _, d := range dropped {
		d.Source, d.Namespace, d.Name = o.Source, id.Namespace, id.Name
		s.Dropped = append(s.Dropped, d)
	}
}

// defaultNamespace defaults the namespace of a namespaced object that has none (DefaultNamespace).
func (o RawObject) defaultNamespace(ns string) {
	if o.r.lazy != nil && o.r.raw.Decoded() == nil {
		id := o.r.id
		if id.Namespace != "" || !defaultsNamespace(id.Group, id.Kind) {
			return
		}
		o.r.id.Namespace = ns
		o.r.lazy.setNamespace(ns)
		if o.r.fresh {
			o.r.typed.SetNamespace(ns)
		}
		return
	}
	u := o.Object()
	if u.GetNamespace() != "" {
		return
	}
	gvk := u.GroupVersionKind()
	if defaultsNamespace(gvk.Group, gvk.Kind) {
		u.SetNamespace(ns)
	}
}

// defaultsNamespace reports whether kubectl apply gives an object of this kind the
// default namespace when it has none.
func defaultsNamespace(group, kind string) bool {
	if k, ok := snapshot.LookupKind(group, kind); ok && !k.Namespaced {
		return false
	}
	return kind != "Namespace" && kind != "GatewayClass"
}

// readObject returns the RawObject of an object just read. When the object can be
// decoded again from its file (lazy is set), it is typed now and its unstructured form is
// dropped; an object whose typing fails, or that has a namespace that is not a string
// (which DefaultNamespace replaces before typing), is held as read and typed by Build, as
// every object used to be.
//
// again converts the object from its node again, as read (the file's parts are
// numbered only once every part is read, so lazy cannot decode it yet).
//
// When inspect is set, it sees a copy of the object as read (before admission), and what
// it returns is kept with the typed object. Objects of a kind admits leaves out are typed
// as written.
func readObject(u *unstructured.Unstructured, src snapshot.Source, lazy lazyObject, again func() map[string]any, inspect *inspection, admits AdmitKinds) RawObject {
	id := snapshot.RefOf(u)
	unadmitted := !src.AsStored() && admits.skips(u, id)
	held := func(u *unstructured.Unstructured) RawObject {
		o := NewRawObject(u, src)
		o.r.unadmitted = unadmitted
		return o
	}
	if lazy == nil {
		return held(u)
	}
	if ns, found, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "namespace"); found {
		if _, ok := ns.(string); !ok {
			return held(u)
		}
	}
	apiVersion, kind, annotations := u.GetAPIVersion(), u.GetKind(), u.GetAnnotations()
	var (
		dropped   []snapshot.DroppedField
		inspected any
	)
	if !src.AsStored() && inspect != nil {
		inspected = inspect.of(u, id)
	}
	if !src.AsStored() && admits.admits(id) {
		var atVersion func(*crds.Validator, crds.Decoding)
		if ai, ok := inspected.(DecodingInspector); ok {
			atVersion = func(v *crds.Validator, d crds.Decoding) {
				d.Object = inspect.namespaced(d.Object, id)
				ai.InspectDecoding(v, d)
			}
		}
		dropped = admit(u, atVersion) // in place: the object as read is decoded again from the file
	}
	t, err := snapshot.Decode(u)
	if err != nil {
		if orig := again(); orig != nil {
			u = &unstructured.Unstructured{Object: orig} // held as read, typed (and admitted) again by Build
		}
		return held(u)
	}
	st := &rawState{lazy: lazy, typed: t, fresh: true, id: id, apiVersion: apiVersion, kind: kind, annotations: annotations, dropped: dropped, unadmitted: unadmitted}
	st.raw = snapshot.NewLazyRaw(snapshot.Lazy{Decode: lazy.object, Fresh: lazy.transient, Header: st.header, Annotations: st.annots, Inspected: inspected})
	return RawObject{Source: src, r: st}
}

// inspection is FileOptions.Inspect with the namespace objects without one will get.
type inspection struct {
	fn        func(*unstructured.Unstructured) any
	namespace string
}

// DecodingInspector is implemented by what FileOptions.Inspect returns when it would
// also see the object as the API server decodes it at its own version, during its
// admission (crds.Validator.AdmitWith), to validate it without decoding it again
// (crds.Validator.ValidateDecoded). The object has the namespace DefaultNamespace will
// give it, as Inspect's has; InspectDecoding must not change it.
type DecodingInspector interface {
	InspectDecoding(v *crds.Validator, d crds.Decoding)
}

// of inspects u, the object as read whose reference is id, with the namespace
// DefaultNamespace will give it (namespaced).
func (in *inspection) of(u *unstructured.Unstructured, id snapshot.Ref) any {
	return in.fn(in.namespaced(u, id))
}

// namespaced is u with the namespace DefaultNamespace will give it. Inspect does not
// change what it is given (it copies what it would change), so u is not copied: when a
// namespace is set, the top level and metadata are, the rest is shared.
func (in *inspection) namespaced(u *unstructured.Unstructured, id snapshot.Ref) *unstructured.Unstructured {
	if id.Namespace == "" && in.namespace != "" && defaultsNamespace(id.Group, id.Kind) {
		c := &unstructured.Unstructured{Object: maps.Clone(u.Object)}
		if md, ok := u.Object["metadata"].(map[string]any); ok {
			c.Object["metadata"] = maps.Clone(md)
		}
		c.SetNamespace(in.namespace)
		u = c
	}
	return u
}

// header is the header of the object as recorded at reading (with the namespace
// DefaultNamespace gave it), for snapshot.Raw.Header while the object is not decoded.
func (st *rawState) header() snapshot.Header {
	return snapshot.Header{APIVersion: st.apiVersion, Kind: st.kind, Namespace: st.id.Namespace, Name: st.id.Name}
}

// annots returns the annotations of the object as recorded at reading, as GetAnnotations
// returns them (a copy), for snapshot.Raw.Annotations while the object is not decoded.
func (st *rawState) annots() map[string]string { return maps.Clone(st.annotations) }
