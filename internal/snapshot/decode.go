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
)

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
	{agentic.GroupName, agentic.KindXBackend, "xbackends", []string{v0alpha0.Version}, true},
	{agentic.GroupName, agentic.KindXAccessPolicy, "xaccesspolicies", []string{v1alpha1.Version, v0alpha0.Version}, true},
	{kuadrantv1.GroupName, kuadrantv1.KindAuthPolicy, "authpolicies", []string{kuadrantv1.Version}, true},
	{"", "Service", "services", []string{"v1"}, true},
	{"", "ServiceAccount", "serviceaccounts", []string{"v1"}, true},
	{"", "Namespace", "namespaces", []string{"v1"}, false},
}

// LookupKind finds the known kind for a group and kind; the legacy agentic group is an alias.
func LookupKind(group, kind string) (KnownKind, bool) {
	if agentic.IsGroup(group) {
		group = agentic.GroupName
	}
	for _, k := range KnownKinds {
		if k.Group == group && k.Kind == kind {
			return k, true
		}
	}
	return KnownKind{}, false
}

// Identity is how objects are told apart (and replaced, in an overlay).
type Identity struct {
	Group, Kind, Namespace, Name string
}

// IdentityOf returns the identity of a raw object, with group aliases folded.
func IdentityOf(u *unstructured.Unstructured) Identity {
	gvk := u.GroupVersionKind()
	g := gvk.Group
	if agentic.IsGroup(g) {
		g = agentic.GroupName
	}
	return Identity{Group: g, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// Add decodes a raw object into its typed form and appends it. Objects of kinds agpol
// does not read are counted in Skipped. An unknown version of a known kind, or a field
// of the wrong type, is an error (the caller adds the source position).
func (s *Snapshot) Add(u *unstructured.Unstructured, src Source) error {
	gvk := u.GroupVersionKind()
	if gvk.Kind == "" {
		return fmt.Errorf("object has no kind")
	}
	if gvk.Version == "" {
		return fmt.Errorf("%s %q has no apiVersion", gvk.Kind, u.GetName())
	}
	known, ok := LookupKind(gvk.Group, gvk.Kind)
	if !ok {
		if s.Skipped == nil {
			s.Skipped = map[string]int{}
		}
		name := gvk.Kind
		if gvk.Group != "" {
			name += "." + gvk.Group
		}
		s.Skipped[name]++
		return nil
	}
	if !contains(known.Versions, gvk.Version) {
		return fmt.Errorf("%s %s/%s: unsupported apiVersion %q (agpol reads %s)", gvk.Kind, gvk.Group, u.GetName(),
			gvk.GroupVersion().String(), versionList(known))
	}
	if u.GetName() == "" {
		return fmt.Errorf("%s has no metadata.name", gvk.Kind)
	}
	o := Origin{Source: src, Raw: u}
	var err error
	switch known.Kind {
	case "GatewayClass":
		x := &GatewayClass{Origin: o}
		err = fromRaw(u, &x.GatewayClass)
		s.GatewayClasses = append(s.GatewayClasses, x)
	case "Gateway":
		x := &Gateway{Origin: o}
		err = fromRaw(u, &x.Gateway)
		s.Gateways = append(s.Gateways, x)
	case "HTTPRoute":
		x := &HTTPRoute{Origin: o}
		err = fromRaw(u, &x.HTTPRoute)
		s.HTTPRoutes = append(s.HTTPRoutes, x)
	case "ReferenceGrant":
		x := &ReferenceGrant{Origin: o}
		err = fromRaw(u, &x.ReferenceGrant)
		s.ReferenceGrants = append(s.ReferenceGrants, x)
	case agentic.KindXBackend:
		x := &XBackend{Origin: o}
		err = fromRaw(u, &x.XBackend)
		s.XBackends = append(s.XBackends, x)
	case agentic.KindXAccessPolicy:
		x := &XAccessPolicy{Origin: o}
		if err = fromRaw(u, &x.XAccessPolicy); err == nil && gvk.Version == v0alpha0.Version {
			x.Legacy = &v0alpha0.XAccessPolicy{}
			err = fromRaw(u, x.Legacy)
		}
		s.XAccessPolicies = append(s.XAccessPolicies, x)
	case kuadrantv1.KindAuthPolicy:
		x := &AuthPolicy{Origin: o}
		err = fromRaw(u, &x.AuthPolicy)
		s.AuthPolicies = append(s.AuthPolicies, x)
	case "Service":
		x := &Service{Origin: o}
		err = fromRaw(u, &x.Service)
		s.Services = append(s.Services, x)
	case "ServiceAccount":
		x := &ServiceAccount{Origin: o}
		err = fromRaw(u, &x.ServiceAccount)
		// A ServiceAccount's secrets list names Secrets; agpol keeps none of it.
		x.Secrets, x.ImagePullSecrets = nil, nil
		s.ServiceAccounts = append(s.ServiceAccounts, x)
	case "Namespace":
		x := &Namespace{Origin: o}
		err = fromRaw(u, &x.Namespace)
		s.Namespaces = append(s.Namespaces, x)
	}
	if err != nil {
		return fmt.Errorf("%s %q: %w", gvk.Kind, u.GetName(), err)
	}
	return nil
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
		return fmt.Errorf("%s: expected %s, got %s", ute.Field, jsonType(ute.Type.Kind()), ute.Value)
	}
	return err
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
