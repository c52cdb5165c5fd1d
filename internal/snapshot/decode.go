package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
	kuadrantv1beta2 "github.com/agpol/agpol/internal/apis/kuadrant/v1beta2"
)

// v1View is the part of a v1beta2 AuthPolicy that reads the same at v1: metadata, the
// target's group, kind and name, and the status. It has no rules: the v1 semantics
// must not be computed on it.
func v1View(p *kuadrantv1beta2.AuthPolicy) kuadrantv1.AuthPolicy {
	v := kuadrantv1.AuthPolicy{TypeMeta: p.TypeMeta, ObjectMeta: p.ObjectMeta}
	v.Spec.TargetRef.Group = p.Spec.TargetRef.Group
	v.Spec.TargetRef.Kind = p.Spec.TargetRef.Kind
	v.Spec.TargetRef.Name = p.Spec.TargetRef.Name
	v.Status.ObservedGeneration = p.Status.ObservedGeneration
	v.Status.Conditions = p.Status.Conditions
	return v
}

// GatewayGroup is the Gateway API group.
const GatewayGroup = gwapiv1.GroupName

// KnownKind describes a kind agpol reads and the versions it understands.
type KnownKind struct {
	Group    string
	Kind     string
	Resource string // plural resource name, for listing live
	Versions []string
	// Namespaced is false for cluster-scoped kinds.
	Namespaced bool
}

// GroupKind returns the group/kind.
func (k KnownKind) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: k.Group, Kind: k.Kind}
}

// KnownKinds lists every kind agpol reads, in the order loaders should fetch them.
var KnownKinds = []KnownKind{
	{GatewayGroup, "GatewayClass", "gatewayclasses", []string{"v1", "v1beta1"}, false},
	{GatewayGroup, "Gateway", "gateways", []string{"v1", "v1beta1"}, true},
	{GatewayGroup, "HTTPRoute", "httproutes", []string{"v1", "v1beta1"}, true},
	{GatewayGroup, "ReferenceGrant", "referencegrants", []string{"v1", "v1beta1", "v1alpha2"}, true},
	{GatewayGroup, "ListenerSet", "listenersets", []string{"v1"}, true},
	{agentic.GroupName, agentic.KindXBackend, "xbackends", []string{v0alpha0.Version}, true},
	{agentic.GroupName, agentic.KindXAccessPolicy, "xaccesspolicies", []string{v1alpha1.Version, v0alpha0.Version}, true},
	{kuadrantv1.GroupName, kuadrantv1.KindAuthPolicy, "authpolicies", []string{kuadrantv1.Version, kuadrantv1beta2.Version}, true},
	{"", "Service", "services", []string{"v1"}, true},
	{"", "ServiceAccount", "serviceaccounts", []string{"v1"}, true},
	{"", "Namespace", "namespaces", []string{"v1"}, false},
}

// LookupKind finds the known kind for a group and kind; the legacy agentic group is an alias.
func LookupKind(group, kind string) (KnownKind, bool) {
	if agentic.IsGroup(group) {
		group = agentic.GroupName
	}
	return lookupIn(KnownKinds, group, kind)
}

// lookupIn finds the kind of a group in kinds.
func lookupIn(kinds []KnownKind, group, kind string) (KnownKind, bool) {
	for _, k := range kinds {
		if k.Group == group && k.Kind == kind {
			return k, true
		}
	}
	return KnownKind{}, false
}

// Ref names an object by group, kind, namespace and name (agentic group aliases
// folded). It is the one object reference of every package: how objects are told apart
// (and replaced, in an overlay), and how topology, effective, explain and lint name them
// (topology.Ref is this type).
type Ref struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String is "Kind ns/name".
func (r Ref) String() string { return r.Kind + " " + r.Namespace + "/" + r.Name }

// RefOf returns the reference of a raw object, with group aliases folded.
func RefOf(u *unstructured.Unstructured) Ref {
	gvk := u.GroupVersionKind()
	g := gvk.Group
	if agentic.IsGroup(g) {
		g = agentic.GroupName
	}
	return Ref{Group: g, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// Add decodes a raw object into its typed form and appends it. Objects of kinds agpol
// does not read are counted in Skipped. An unknown version of a known kind, or a field
// of the wrong type, is an error (the caller adds the source position).
func (s *Snapshot) Add(u *unstructured.Unstructured, src Source) error {
	t, err := Decode(u)
	s.Append(t, NewOrigin(src, NewRaw(u)))
	return err
}

// Typed is one object typed by Decode, not yet in a Snapshot: loaders type each object
// as soon as it is read, so that the raw form need not be kept for all of them at once.
type Typed struct {
	// obj is *GatewayClass, *Gateway, ... (nil for a kind agpol does not read).
	obj any
	// skipped is the "Kind.group" name counted in Skipped for a kind agpol does not read.
	skipped string
}

// Decode types a raw object: what Add does before appending, with the same checks and
// errors. On an error from the typed decoding the partly typed object is still
// returned, as Add appends it. The typed object's Origin is set by Append.
func Decode(u *unstructured.Unstructured) (Typed, error) {
	gvk := u.GroupVersionKind()
	if gvk.Kind == "" {
		return Typed{}, fmt.Errorf("object has no kind")
	}
	if gvk.Version == "" {
		return Typed{}, fmt.Errorf("%s %q has no apiVersion", gvk.Kind, u.GetName())
	}
	known, ok := LookupKind(gvk.Group, gvk.Kind)
	if !ok {
		if k, io := lookupInputOnly(gvk.Group, gvk.Kind); io && contains(k.Versions, gvk.Version) && u.GetName() != "" {
			return decodeInputOnly(u, k)
		}
		name := gvk.Kind
		if gvk.Group != "" {
			name += "." + gvk.Group
		}
		return Typed{skipped: name}, nil
	}
	if !contains(known.Versions, gvk.Version) {
		return Typed{}, fmt.Errorf("%s %s/%s: unsupported apiVersion %q (agpol reads %s)", gvk.Kind, gvk.Group, u.GetName(),
			gvk.GroupVersion().String(), versionList(known))
	}
	if u.GetName() == "" {
		return Typed{}, fmt.Errorf("%s has no metadata.name", gvk.Kind)
	}
	var (
		t   Typed
		err error
	)
	switch known.Kind {
	case "GatewayClass":
		t.obj, err = typedAs(u, func(x *GatewayClass) any { return &x.GatewayClass })
	case "Gateway":
		t.obj, err = typedAs(u, func(x *Gateway) any { return &x.Gateway })
	case "HTTPRoute":
		t.obj, err = typedAs(u, func(x *HTTPRoute) any { return &x.HTTPRoute })
	case "ReferenceGrant":
		t.obj, err = typedAs(u, func(x *ReferenceGrant) any { return &x.ReferenceGrant })
	case "ListenerSet":
		t.obj, err = typedAs(u, func(x *ListenerSet) any { return &x.ListenerSet })
	case agentic.KindXBackend:
		t.obj, err = typedAs(u, func(x *XBackend) any { return &x.XBackend })
	case agentic.KindXAccessPolicy:
		x := &XAccessPolicy{}
		if err = fromRaw(u, &x.XAccessPolicy); err == nil && gvk.Version == v0alpha0.Version {
			x.Legacy = &v0alpha0.XAccessPolicy{}
			err = fromRaw(u, x.Legacy)
		}
		t.obj = x
	case kuadrantv1.KindAuthPolicy:
		x := &AuthPolicy{}
		if gvk.Version == kuadrantv1beta2.Version {
			x.V1beta2 = &kuadrantv1beta2.AuthPolicy{}
			if err = fromRaw(u, x.V1beta2); err == nil {
				x.AuthPolicy = v1View(x.V1beta2)
			}
		} else {
			err = fromRaw(u, &x.AuthPolicy)
		}
		t.obj = x
	case "Service":
		t.obj, err = typedAs(u, func(x *Service) any { return &x.Service })
	case "ServiceAccount":
		x := &ServiceAccount{}
		err = fromRaw(u, &x.ServiceAccount)
		// A ServiceAccount's secrets list names Secrets; agpol keeps none of it.
		x.Secrets, x.ImagePullSecrets = nil, nil
		t.obj = x
	case "Namespace":
		t.obj, err = typedAs(u, func(x *Namespace) any { return &x.Namespace })
	}
	if err != nil {
		return t, fmt.Errorf("%s %q: %w", gvk.Kind, u.GetName(), err)
	}
	return t, nil
}

// Copy returns a Typed holding a copy of the typed object's top-level struct (its
// fields, Origin included, shared with the original), to be appended to another
// snapshot with an Origin of its own: loaders share an object read from the same bytes
// twice (cluster.SharedFiles). Neither copy may be modified past appending.
func (t Typed) Copy() Typed {
	if t.obj == nil {
		return t
	}
	v := reflect.ValueOf(t.obj)
	if v.Kind() != reflect.Pointer {
		panic(fmt.Sprintf("snapshot: a typed %T is not a pointer", t.obj))
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	return Typed{obj: c.Interface(), skipped: t.skipped}
}

// Become gives the object t holds the value of n's, the same object typed again (read
// from a file, admitted after it was typed as written), keeping t's Origin: the snapshot
// t was appended to then holds n's value. Both must hold objects of the same type.
func (t Typed) Become(n Typed) error {
	if t.obj == nil || n.obj == nil {
		if t.obj == nil && n.obj == nil && t.skipped == n.skipped {
			return nil
		}
		return fmt.Errorf("snapshot: a typed %T cannot become a %T", t.obj, n.obj)
	}
	tv, nv := reflect.ValueOf(t.obj), reflect.ValueOf(n.obj)
	if tv.Type() != nv.Type() || tv.Kind() != reflect.Pointer {
		return fmt.Errorf("snapshot: a typed %T cannot become a %T", t.obj, n.obj)
	}
	origin := tv.Elem().FieldByName("Origin")
	keep := reflect.New(origin.Type()).Elem()
	keep.Set(origin)
	tv.Elem().Set(nv.Elem())
	tv.Elem().FieldByName("Origin").Set(keep)
	return nil
}

// SetNamespace sets the namespace of the typed object, as decoding it with
// metadata.namespace set to ns would have (loaders default namespaces after reading).
func (t Typed) SetNamespace(ns string) {
	switch x := t.obj.(type) {
	case nil:
	case *XAccessPolicy:
		x.Namespace = ns
		if x.Legacy != nil {
			x.Legacy.Namespace = ns
		}
	case *AuthPolicy:
		x.Namespace = ns
		if x.V1beta2 != nil {
			x.V1beta2.Namespace = ns
		}
	case interface{ SetNamespace(string) }:
		x.SetNamespace(ns)
	default:
		panic(fmt.Sprintf("snapshot: %T has no namespace", t.obj))
	}
}

// Append adds a typed object with its Origin (or counts a skipped one). A Typed is
// appended once.
func (s *Snapshot) Append(t Typed, o Origin) {
	if s.appendInputOnly(t.obj, o) {
		return
	}
	switch x := t.obj.(type) {
	case nil:
		if t.skipped != "" {
			if s.Skipped == nil {
				s.Skipped = map[string]int{}
			}
			s.Skipped[t.skipped]++
		}
	case *GatewayClass:
		x.Origin = o
		s.GatewayClasses = append(s.GatewayClasses, x)
	case *Gateway:
		x.Origin = o
		s.Gateways = append(s.Gateways, x)
	case *HTTPRoute:
		x.Origin = o
		s.HTTPRoutes = append(s.HTTPRoutes, x)
	case *ReferenceGrant:
		x.Origin = o
		s.ReferenceGrants = append(s.ReferenceGrants, x)
	case *ListenerSet:
		x.Origin = o
		s.ListenerSets = append(s.ListenerSets, x)
	case *XBackend:
		x.Origin = o
		s.XBackends = append(s.XBackends, x)
	case *XAccessPolicy:
		x.Origin = o
		s.XAccessPolicies = append(s.XAccessPolicies, x)
	case *AuthPolicy:
		x.Origin = o
		s.AuthPolicies = append(s.AuthPolicies, x)
	case *Service:
		x.Origin = o
		s.Services = append(s.Services, x)
	case *ServiceAccount:
		x.Origin = o
		s.ServiceAccounts = append(s.ServiceAccounts, x)
	case *Namespace:
		x.Origin = o
		s.Namespaces = append(s.Namespaces, x)
	}
}

// typedAs types u as a new T: field returns the API type T wraps (&x.Gateway), which
// fromRaw fills.
func typedAs[T any](u *unstructured.Unstructured, field func(*T) any) (*T, error) {
	x := new(T)
	return x, fromRaw(u, field(x))
}

func fromRaw(u *unstructured.Unstructured, into any) error {
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
	if err == nil {
		return nil
	}
	// The converter names no field ("unrecognized type: int32"); encoding/json does.
	data, merr := json.Marshal(u.Object)
	if merr != nil {
		return err
	}
	var ute *json.UnmarshalTypeError
	if jerr := json.Unmarshal(data, into); errors.As(jerr, &ute) && ute.Field != "" {
		path := ute.Field
		if p, ok := indexedPath(u.Object, strings.Split(ute.Field, "."), ute.Type.Kind()); ok {
			path = p[1:]
		}
		return &FieldError{Path: path, Message: fmt.Sprintf("expected %s, got %s", jsonType(ute.Type.Kind()), ute.Value)}
	}
	return err
}

// FieldError is a field of an object that has the wrong type. Path names it with list
// indexes (spec.listeners[1].port) when they could be found, so that a reader of files
// can point at the field's own line.
type FieldError struct {
	Path    string
	Message string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Message }

// indexedPath finds, under v, the first value at the dotted path parts (as encoding/json
// names a field: without list indexes) whose type does not fit want, and returns its
// path with the list indexes, as ".spec.listeners[1].port".
func indexedPath(v any, parts []string, want reflect.Kind) (string, bool) {
	switch x := v.(type) {
	case []any:
		for i, el := range x {
			if rest, ok := indexedPath(el, parts, want); ok {
				return fmt.Sprintf("[%d]%s", i, rest), true
			}
		}
		if len(parts) == 0 {
			return "", !fits(v, want)
		}
		return "", false
	case map[string]any:
		if len(parts) == 0 {
			return "", !fits(v, want)
		}
		child, ok := x[parts[0]]
		if !ok {
			return "", false
		}
		rest, ok := indexedPath(child, parts[1:], want)
		if !ok {
			return "", false
		}
		return "." + parts[0] + rest, true
	}
	return "", len(parts) == 0 && !fits(v, want)
}

// fits reports whether an unstructured value can be decoded into a Go value of kind k.
func fits(v any, k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch n := v.(type) {
		case int64, int32, int:
			return true
		case float64:
			return n == float64(int64(n))
		}
		return false
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case int64, int32, int, float64:
			return true
		}
		return false
	case reflect.Bool:
		_, ok := v.(bool)
		return ok
	case reflect.String:
		_, ok := v.(string)
		return ok
	case reflect.Slice, reflect.Array:
		_, ok := v.([]any)
		return ok
	case reflect.Map, reflect.Struct:
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}

// jsonType names a Go kind as a manifest author knows it.
func jsonType(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return k.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func versionList(k KnownKind) string {
	g := k.Group
	if g == "" {
		return strings.Join(k.Versions, ", ")
	}
	out := make([]string, len(k.Versions))
	for i, v := range k.Versions {
		out[i] = g + "/" + v
	}
	return strings.Join(out, ", ")
}
