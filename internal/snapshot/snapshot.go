// Package snapshot owns the Snapshot: the typed objects agpol reasons about,
// each with its provenance (file and line, or the cluster it was listed from),
// plus what loading noticed (skipped kinds, kinds not installed, warnings, and
// whether the answer is partial). It is plain data: it neither reads files nor
// talks to a cluster, so every later stage can consume it without caring where
// the objects came from.
package snapshot

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
	kuadrantv1beta2 "github.com/agpol/agpol/internal/apis/kuadrant/v1beta2"
)

// Source says where an object was read from.
type Source struct {
	// File is the path as the user gave it ("-" is shown as "<stdin>"); empty for cluster objects.
	File string `json:"file,omitempty"`
	// Line and Column locate the first key of the object (1-based); 0 when unknown.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Doc is the 0-based index of the YAML document in File, Item the index inside a List (-1 otherwise).
	Doc  int `json:"-"`
	Item int `json:"-"`
	// Cluster names the kubeconfig context (or server) for objects read live.
	Cluster string `json:"cluster,omitempty"`
	// Stored is set for objects read from a file that --snapshot-out wrote: they are
	// as an API server stored them (defaulted, pruned, validated when created).
	Stored bool `json:"stored,omitempty"`
}

// String renders the source as "file:line" or "cluster:CONTEXT".
func (s Source) String() string {
	switch {
	case s.File != "" && s.Line > 0:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	case s.File != "":
		return s.File
	case s.Cluster != "":
		return "cluster:" + s.Cluster
	}
	return "cluster"
}

// IsFile reports whether the object came from a file (or stdin).
func (s Source) IsFile() bool { return s.File != "" }

// AsStored reports whether the object is as an API server stored it: read from a
// cluster, or from a snapshot of one (--snapshot-out). Such an object was defaulted,
// pruned and validated when it was created.
func (s Source) AsStored() bool { return s.File == "" || s.Stored }

// Origin is embedded in every typed object of a Snapshot.
type Origin struct {
	// Source is where the object was read.
	Source Source `json:"-"`
	// raw holds the object as read, or what rebuilds it; copies of an Origin share it.
	raw *Raw
}

// NewOrigin returns the Origin of an object read from src, whose object as read raw holds.
func NewOrigin(src Source, raw *Raw) Origin { return Origin{Source: src, raw: raw} }

// Object returns the object as read (all fields, including ones agpol's types do not
// know), nil when there is none. An object read from a file is decoded again from the
// file's bytes on the first call (few objects are ever asked for: keeping every one
// decoded would double the memory a load needs); every call returns the same pointer.
func (o Origin) Object() *unstructured.Unstructured {
	if o.raw == nil {
		return nil
	}
	return o.raw.Object()
}

// Header is what names an object: the values Object's GetAPIVersion, GetKind,
// GetNamespace and GetName return.
type Header struct {
	APIVersion, Kind, Namespace, Name string
}

// HeaderOf returns the header of an object.
func HeaderOf(u *unstructured.Unstructured) Header {
	return Header{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// GroupVersionKind is what Object().GroupVersionKind() returns: empty when the
// apiVersion does not parse.
func (h Header) GroupVersionKind() schema.GroupVersionKind {
	gv, err := schema.ParseGroupVersion(h.APIVersion)
	if err != nil {
		return schema.GroupVersionKind{}
	}
	return gv.WithKind(h.Kind)
}

// Header returns the header of the object as read, without decoding it again when its
// reader recorded it; ok is false when there is no object.
func (o Origin) Header() (h Header, ok bool) {
	if o.raw == nil {
		return Header{}, false
	}
	return o.raw.Header()
}

// Annotations returns what Object().GetAnnotations() would (nil when there is no
// object), without decoding the object again when its reader recorded them.
func (o Origin) Annotations() map[string]string {
	if o.raw == nil {
		return nil
	}
	return o.raw.Annotations()
}

// Fresh returns a copy of the object as read that the caller may modify, decoded again
// from the file's bytes when it can be without keeping it (nil when there is no object).
// Its content is that of Object; unlike Object, it leaves nothing decoded behind.
func (o Origin) Fresh() *unstructured.Unstructured {
	if o.raw == nil {
		return nil
	}
	return o.raw.Fresh()
}

// Inspected returns what the reader's inspection of the object as read returned
// (cluster.FileOptions.Inspect), nil when it was not inspected.
func (o Origin) Inspected() any {
	if o.raw == nil {
		return nil
	}
	return o.raw.lazy.Inspected
}

// Raw returns what holds the object; copies of an Origin return the same pointer, so it
// tells objects apart (as a map key, for instance).
func (o Origin) Raw() *Raw { return o.raw }

// Raw holds an object as read: either the object itself, or a function that decodes it
// again, run at most once (on the first Object call) and safe for concurrent use.
type Raw struct {
	obj    atomic.Pointer[unstructured.Unstructured]
	mu     sync.Mutex
	decode func() *unstructured.Unstructured
	// lazy is set by NewLazyRaw and never changed; it is used only while obj is nil.
	lazy Lazy
}

// Lazy says how to rebuild an object read from a file, and what it is without rebuilding it.
type Lazy struct {
	// Decode rebuilds the object; it must return the same content each time.
	Decode func() *unstructured.Unstructured
	// Fresh, when set, rebuilds a copy of the object that nothing else holds (nil when it
	// cannot). It must be safe for concurrent use.
	Fresh func() *unstructured.Unstructured
	// Header, when set, returns what HeaderOf would of the object Decode returns.
	Header func() Header
	// Annotations, when set, returns what GetAnnotations would of the object Decode returns.
	Annotations func() map[string]string
	// Inspected is what the reader's inspection of the object as read returned (nil for
	// none), so that a later stage need not decode the object again (Origin.Inspected).
	Inspected any
}

// NewRaw holds an object already decoded (objects read live, overlays, tests).
func NewRaw(u *unstructured.Unstructured) *Raw {
	r := &Raw{}
	if u != nil {
		r.obj.Store(u)
	}
	return r
}

// LazyRaw holds an object that decode rebuilds when it is first asked for. decode must
// return the same content each time it is called.
func LazyRaw(decode func() *unstructured.Unstructured) *Raw {
	return &Raw{decode: decode}
}

// NewLazyRaw holds an object that l.Decode rebuilds when it is first asked for; l.Header
// and l.Fresh, when set, answer Header and Fresh without keeping the object decoded.
func NewLazyRaw(l Lazy) *Raw {
	return &Raw{decode: l.Decode, lazy: l}
}

// Object returns the object, decoding it on the first call; later calls (from any
// goroutine) return the same pointer.
func (r *Raw) Object() *unstructured.Unstructured {
	if r == nil {
		return nil
	}
	if u := r.obj.Load(); u != nil {
		return u
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if u := r.obj.Load(); u != nil {
		return u
	}
	if r.decode == nil {
		return nil
	}
	u := r.decode()
	r.obj.Store(u)
	r.decode = nil // what rebuilt it (file bytes) is no longer needed here
	return u
}

// Header returns HeaderOf(Object()), without decoding the object when it has not been
// and its reader recorded the header; ok is false when there is no object.
func (r *Raw) Header() (Header, bool) {
	if r == nil {
		return Header{}, false
	}
	if u := r.obj.Load(); u == nil && r.lazy.Header != nil {
		return r.lazy.Header(), true
	}
	u := r.Object()
	if u == nil {
		return Header{}, false
	}
	return HeaderOf(u), true
}

// Annotations returns Object().GetAnnotations(), without decoding the object when it has
// not been and its reader recorded them; nil when there is no object.
func (r *Raw) Annotations() map[string]string {
	if r == nil {
		return nil
	}
	if u := r.obj.Load(); u == nil && r.lazy.Annotations != nil {
		return r.lazy.Annotations()
	}
	u := r.Object()
	if u == nil {
		return nil
	}
	return u.GetAnnotations()
}

// Fresh returns a copy of Object() that the caller owns: decoded again without being
// kept when the object has not been decoded and its reader can, else a deep copy.
func (r *Raw) Fresh() *unstructured.Unstructured {
	if r == nil {
		return nil
	}
	if u := r.obj.Load(); u == nil && r.lazy.Fresh != nil {
		if u := r.lazy.Fresh(); u != nil {
			return u
		}
	}
	u := r.Object()
	if u == nil {
		return nil
	}
	return u.DeepCopy()
}

// Decoded returns the object if it has been decoded (or was given), else nil, without decoding it.
func (r *Raw) Decoded() *unstructured.Unstructured {
	if r == nil {
		return nil
	}
	return r.obj.Load()
}

// Typed wrappers: the upstream or agpol type plus its Origin.
type (
	// GatewayClass is a gateway.networking.k8s.io GatewayClass.
	GatewayClass struct {
		gwapiv1.GatewayClass
		Origin
	}
	// Gateway is a gateway.networking.k8s.io Gateway.
	Gateway struct {
		gwapiv1.Gateway
		Origin
	}
	// HTTPRoute is a gateway.networking.k8s.io HTTPRoute.
	HTTPRoute struct {
		gwapiv1.HTTPRoute
		Origin
	}
	// ReferenceGrant is a gateway.networking.k8s.io ReferenceGrant (read at v1 or v1beta1).
	ReferenceGrant struct {
		gwapiv1.ReferenceGrant
		Origin
	}
	// ListenerSet is a gateway.networking.k8s.io ListenerSet (v1, standard channel since
	// Gateway API v1.5): listeners attached to a Gateway that allows them.
	ListenerSet struct {
		gwapiv1.ListenerSet
		Origin
	}
	// XBackend is an agentic XBackend.
	XBackend struct {
		v0alpha0.XBackend
		Origin
	}
	// XAccessPolicy is an agentic XAccessPolicy as the v1alpha1 controller sees it. An object
	// written at v0alpha0 is relabelled (no conversion, as the API server stores it): its
	// v1alpha1 view has an empty Action, and Legacy keeps the v0alpha0 fields.
	XAccessPolicy struct {
		v1alpha1.XAccessPolicy
		// Legacy is set when the object was read at v0alpha0.
		Legacy *v0alpha0.XAccessPolicy
		Origin
	}
	// AuthPolicy is a Kuadrant AuthPolicy. An object read at kuadrant.io/v1beta2 has
	// V1beta2 set, and its v1 view holds only the metadata, the target (group, kind,
	// name) and the status: code that computes v1 semantics must skip it (IsV1beta2).
	AuthPolicy struct {
		kuadrantv1.AuthPolicy
		// V1beta2 is set when the object was read at kuadrant.io/v1beta2.
		V1beta2 *kuadrantv1beta2.AuthPolicy
		Origin
	}
	// Service is a core Service (backendRefs and XBackend serviceName resolve to it).
	Service struct {
		corev1.Service
		Origin
	}
	// ServiceAccount is a core ServiceAccount (a caller identity).
	ServiceAccount struct {
		corev1.ServiceAccount
		Origin
	}
	// Namespace is a core Namespace (its labels feed allowedRoutes selectors).
	Namespace struct {
		corev1.Namespace
		Origin
	}
)

// IsV1beta2 reports whether the policy was read at kuadrant.io/v1beta2.
func (p *AuthPolicy) IsV1beta2() bool { return p.V1beta2 != nil }

// APIVersion returns the version the policy was read at ("v1alpha1" or "v0alpha0").
func (p *XAccessPolicy) APIVersion() string {
	if p.Legacy != nil {
		return v0alpha0.Version
	}
	return v1alpha1.Version
}

// Warning is something loading noticed that does not stop agpol.
type Warning struct {
	Message string `json:"message"`
	// Kind and Namespace are set for per-kind warnings (e.g. RBAC denied a list).
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Namespaces are the namespaces a refusal covers when the kind was read namespace
	// by namespace and some refused it (Namespace is then ""); empty for a refusal of
	// Namespace, or of every namespace.
	Namespaces []string `json:"namespaces,omitempty"`
	Source     string   `json:"source,omitempty"`
}

// Covers reports whether the warning concerns namespace ns: its Namespace, one of its
// Namespaces, or every namespace when it names none.
func (w Warning) Covers(ns string) bool {
	switch {
	case w.Namespace != "":
		return w.Namespace == ns
	case len(w.Namespaces) > 0:
		for _, n := range w.Namespaces {
			if n == ns {
				return true
			}
		}
		return false
	}
	return true
}

// Snapshot is everything loaded, typed and with provenance.
type Snapshot struct {
	GatewayClasses  []*GatewayClass
	Gateways        []*Gateway
	HTTPRoutes      []*HTTPRoute
	ReferenceGrants []*ReferenceGrant
	ListenerSets    []*ListenerSet
	XBackends       []*XBackend
	XAccessPolicies []*XAccessPolicy
	AuthPolicies    []*AuthPolicy
	Services        []*Service
	ServiceAccounts []*ServiceAccount
	Namespaces      []*Namespace

	// Input-only kinds (InputOnlyKinds), read from files: what Authorino's rules read.
	// They are not counted in Len nor listed by Objects.
	Secrets             []*Secret
	Roles               []*Role
	ClusterRoles        []*ClusterRole
	RoleBindings        []*RoleBinding
	ClusterRoleBindings []*ClusterRoleBinding
	Kuadrants           []*Kuadrant

	// Skipped counts objects of kinds agpol does not use, by "Kind.group" (core kinds by "Kind").
	Skipped map[string]int
	// NotInstalled lists kinds the cluster does not serve (live loading only).
	NotInstalled []string
	// Warnings are non-fatal problems found while loading.
	Warnings []Warning
	// Dropped lists the fields of objects read from files that the API server would
	// drop when it stores them (not in the CRD schema); the objects were typed without
	// them, as a cluster would hold them. It also lists the fields for which the API
	// server would refuse the object (DroppedField.Rejected).
	Dropped []DroppedField
	// Unadmitted counts the objects read from files, of kinds with a CRD, that the load
	// typed as written instead of admitting them (a command that neither prints nor
	// decides their kind asked not to, cluster.LoadOptions.Admit): Dropped says nothing
	// of their fields.
	Unadmitted int
	// UnadmittedUnread says that the objects counted in Unadmitted are ones the command's
	// answer does not read (cluster.LoadOptions.Needs: describe), rather than objects it
	// prints as written.
	UnadmittedUnread bool
	// Partial is true when some objects could not be read (e.g. RBAC), so answers may be incomplete.
	Partial bool
	// Complete is true when the snapshot holds everything of the kinds agpol reads (a live read
	// of all namespaces that nothing refused, possibly with files laid over it). Manifests given
	// as files are usually a part of a cluster: then an object that a reference names but the
	// input lacks is unknown, not missing.
	Complete bool
	// Origins says what fed the snapshot: "files", "cluster", or both for an overlay.
	Origins []string
	// Positions resolves field paths to source positions, when the loader can.
	Positions PositionResolver
	// ClassDataPlanes maps GatewayClass names to the data plane that serves their
	// Gateways, as the user configured it (.agpol.yaml dataPlanes, --data-plane); other
	// classes are known by their controllerName (topology.ClassifyGateways).
	ClassDataPlanes map[string]string
}

// DroppedField is a field of an object read from a file that the API server drops.
type DroppedField struct {
	Source Source
	Kind   string
	// Namespace and Name name the object.
	Namespace, Name string
	// Path is the field path, e.g. "spec.rules[0].authorization.tools".
	Path string
	// StoredAt is set when the field is dropped only when the object is stored at that
	// other version (no conversion webhook): e.g. v0alpha0 fields stored at v1alpha1.
	StoredAt string
	// Rejected is set when the field is not dropped but makes the API server refuse the
	// whole object: the reason (a list over its CRD's maxItems). The object is analysed
	// as written, and every command warns that no cluster can hold it.
	Rejected string
}

// DroppedFields returns the fields of Dropped the API server drops (not Rejected).
func (s *Snapshot) DroppedFields() []DroppedField { return s.droppedWhere(false) }

// RejectedFields returns the fields of Dropped that make the API server refuse their object.
func (s *Snapshot) RejectedFields() []DroppedField { return s.droppedWhere(true) }

func (s *Snapshot) droppedWhere(rejected bool) []DroppedField {
	var out []DroppedField
	for _, d := range s.Dropped {
		if (d.Rejected != "") == rejected {
			out = append(out, d)
		}
	}
	return out
}

// PositionResolver maps a field path of an object (e.g. "spec.rules[2].authorization")
// to the line and column where it appears in the object's source file.
type PositionResolver interface {
	Position(src Source, fieldPath string) (line, column int, ok bool)
}

// FieldPosition returns "file:line" for a field of an object read from a file, falling
// back to the object's own position, and to the cluster origin for live objects.
func (s *Snapshot) FieldPosition(src Source, fieldPath string) Source {
	if s != nil && s.Positions != nil && src.IsFile() && fieldPath != "" {
		if l, c, ok := s.Positions.Position(src, fieldPath); ok {
			src.Line, src.Column = l, c
		}
	}
	return src
}

// Warnf records a warning.
func (s *Snapshot) Warnf(format string, args ...any) {
	s.Warnings = append(s.Warnings, Warning{Message: fmt.Sprintf(format, args...)})
}

// Len is the number of typed objects in the snapshot.
func (s *Snapshot) Len() int {
	return len(s.GatewayClasses) + len(s.Gateways) + len(s.HTTPRoutes) + len(s.ReferenceGrants) + len(s.ListenerSets) +
		len(s.XBackends) + len(s.XAccessPolicies) + len(s.AuthPolicies) + len(s.Services) +
		len(s.ServiceAccounts) + len(s.Namespaces)
}

// SkippedKinds returns the skipped kinds in a stable order.
func (s *Snapshot) SkippedKinds() []string {
	out := make([]string, 0, len(s.Skipped))
	for k := range s.Skipped {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Objects returns the Origin (source and object as read) of every typed object, kind by kind
// in the order of the Snapshot's fields, each kind in load order.
func (s *Snapshot) Objects() []Origin {
	out := make([]Origin, 0, s.Len())
	for _, x := range s.GatewayClasses {
		out = append(out, x.Origin)
	}
	for _, x := range s.Gateways {
		out = append(out, x.Origin)
	}
	for _, x := range s.HTTPRoutes {
		out = append(out, x.Origin)
	}
	for _, x := range s.ReferenceGrants {
		out = append(out, x.Origin)
	}
	for _, x := range s.ListenerSets {
		out = append(out, x.Origin)
	}
	for _, x := range s.XBackends {
		out = append(out, x.Origin)
	}
	for _, x := range s.XAccessPolicies {
		out = append(out, x.Origin)
	}
	for _, x := range s.AuthPolicies {
		out = append(out, x.Origin)
	}
	for _, x := range s.Services {
		out = append(out, x.Origin)
	}
	for _, x := range s.ServiceAccounts {
		out = append(out, x.Origin)
	}
	for _, x := range s.Namespaces {
		out = append(out, x.Origin)
	}
	return out
}
