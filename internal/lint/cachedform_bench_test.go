package lint_test

// BenchmarkCachedForm estimates the floor of a warm lint with a cache of decoded objects
// (issue 32): a run on an unchanged input that would read each file's objects typed,
// admitted, from a compact encoded form instead of parsing and admitting the YAML. It
// times decoding every typed object of a generated topology from such a form (the
// encodings a Go program has at hand: encoding/gob, encoding/json, and
// go-json-experiment's json, whose v1 options agpol's output uses). Positions, headers
// and each object's schema result would come on top. Small and medium by default;
// large with AGPOL_BENCH_LARGE=1.

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	corev1 "k8s.io/api/core/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
	"github.com/agpol/agpol/internal/snapshot"
)

// typedObjects are the typed objects of a snapshot, without their origins.
type typedObjects struct {
	GatewayClasses  []gwapiv1.GatewayClass
	Gateways        []gwapiv1.Gateway
	HTTPRoutes      []gwapiv1.HTTPRoute
	ReferenceGrants []gwapiv1.ReferenceGrant
	ListenerSets    []gwapiv1.ListenerSet
	XBackends       []v0alpha0.XBackend
	XAccessPolicies []v1alpha1.XAccessPolicy
	AuthPolicies    []kuadrantv1.AuthPolicy
	Services        []corev1.Service
	ServiceAccounts []corev1.ServiceAccount
	Namespaces      []corev1.Namespace
}

func (t *typedObjects) len() int {
	return len(t.GatewayClasses) + len(t.Gateways) + len(t.HTTPRoutes) + len(t.ReferenceGrants) +
		len(t.ListenerSets) + len(t.XBackends) + len(t.XAccessPolicies) + len(t.AuthPolicies) +
		len(t.Services) + len(t.ServiceAccounts) + len(t.Namespaces)
}

func typedOf(s *snapshot.Snapshot) *typedObjects {
	t := &typedObjects{}
	for _, o := range s.GatewayClasses {
		t.GatewayClasses = append(t.GatewayClasses, o.GatewayClass)
	}
	for _, o := range s.Gateways {
		t.Gateways = append(t.Gateways, o.Gateway)
	}
	for _, o := range s.HTTPRoutes {
		t.HTTPRoutes = append(t.HTTPRoutes, o.HTTPRoute)
	}
	for _, o := range s.ReferenceGrants {
		t.ReferenceGrants = append(t.ReferenceGrants, o.ReferenceGrant)
	}
	for _, o := range s.ListenerSets {
		t.ListenerSets = append(t.ListenerSets, o.ListenerSet)
	}
	for _, o := range s.XBackends {
		t.XBackends = append(t.XBackends, o.XBackend)
	}
	for _, o := range s.XAccessPolicies {
		t.XAccessPolicies = append(t.XAccessPolicies, o.XAccessPolicy)
	}
	for _, o := range s.AuthPolicies {
		t.AuthPolicies = append(t.AuthPolicies, o.AuthPolicy)
	}
	for _, o := range s.Services {
		t.Services = append(t.Services, o.Service)
	}
	for _, o := range s.ServiceAccounts {
		t.ServiceAccounts = append(t.ServiceAccounts, o.ServiceAccount)
	}
	for _, o := range s.Namespaces {
		t.Namespaces = append(t.Namespaces, o.Namespace)
	}
	return t
}

type codec struct {
	name string
	enc  func(*typedObjects) ([]byte, error)
	dec  func([]byte, *typedObjects) error
}

var codecs = []codec{
	{"gob", func(t *typedObjects) ([]byte, error) {
		var b bytes.Buffer
		err := gob.NewEncoder(&b).Encode(t)
		return b.Bytes(), err
	}, func(data []byte, t *typedObjects) error { return gob.NewDecoder(bytes.NewReader(data)).Decode(t) }},
	{"encoding-json", func(t *typedObjects) ([]byte, error) { return json.Marshal(t) },
		func(data []byte, t *typedObjects) error { return json.Unmarshal(data, t) }},
	{"json-v2", func(t *typedObjects) ([]byte, error) { return jsonv2.Marshal(t) },
		func(data []byte, t *typedObjects) error { return jsonv2.Unmarshal(data, t) }},
}

func BenchmarkCachedForm(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		_, s := stages.GeneratedSnapshot(b, size)
		objs := typedOf(s)
		for _, c := range codecs {
			b.Run(size+"/"+c.name, func(b *testing.B) {
				data, err := c.enc(objs)
				if err != nil {
					b.Skipf("%s cannot encode these types: %v", c.name, err)
				}
				b.SetBytes(int64(len(data)))
				b.ReportMetric(float64(len(data))/1e6, "MB-form")
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					var got typedObjects
					if err := c.dec(data, &got); err != nil {
						b.Fatal(err)
					}
					if got.len() != objs.len() {
						b.Fatalf("%d objects decoded, want %d", got.len(), objs.len())
					}
				}
			})
		}
	}
}
