package differential

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/agpol/agpol/internal/effective"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwapiv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"
	gwlistersv1beta1 "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1beta1"

	agenticv0alpha0 "sigs.k8s.io/kube-agentic-networking/api/v0alpha0"
	agenticv1alpha1 "sigs.k8s.io/kube-agentic-networking/api/v1alpha1"
	agenticfake "sigs.k8s.io/kube-agentic-networking/k8s/client/clientset/versioned/fake"
	agenticinformers "sigs.k8s.io/kube-agentic-networking/k8s/client/informers/externalversions"
	agenticinformersv1alpha1 "sigs.k8s.io/kube-agentic-networking/k8s/client/informers/externalversions/api/v1alpha1"
	agenticlisters "sigs.k8s.io/kube-agentic-networking/k8s/client/listers/api/v0alpha0"
	agenticlistersv1alpha1 "sigs.k8s.io/kube-agentic-networking/k8s/client/listers/api/v1alpha1"
	"sigs.k8s.io/kube-agentic-networking/pkg/controller"
	"sigs.k8s.io/kube-agentic-networking/pkg/translator"
)

// TrustDomain is the trust domain both sides use (the shipped deployment's).
const TrustDomain = effective.DefaultTrustDomain

func init() {
	// The upstream controller and translator log through klog; the harness runs them
	// thousands of times and reads their results, not their logs.
	klog.SetLogger(logr.Discard())
}

// UpstreamObjects are the objects typed as the upstream controller reads them.
type UpstreamObjects struct {
	Namespaces      []*corev1.Namespace
	Services        []*corev1.Service
	Gateways        []*gwapiv1.Gateway
	HTTPRoutes      []*gwapiv1.HTTPRoute
	ReferenceGrants []*gwapiv1beta1.ReferenceGrant
	XBackends       []*agenticv0alpha0.XBackend
	XAccessPolicies []*agenticv1alpha1.XAccessPolicy
}

// TypeUpstream types stored objects (as the API server would store them) into the
// upstream Go types. Kinds the translator does not read are left out.
func TypeUpstream(objs []*unstructured.Unstructured) (*UpstreamObjects, error) {
	out := &UpstreamObjects{}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		var target any
		switch gvk.GroupKind().String() {
		case "Namespace":
			o := &corev1.Namespace{}
			out.Namespaces, target = append(out.Namespaces, o), o
		case "Service":
			o := &corev1.Service{}
			out.Services, target = append(out.Services, o), o
		case "Gateway.gateway.networking.k8s.io":
			o := &gwapiv1.Gateway{}
			out.Gateways, target = append(out.Gateways, o), o
		case "HTTPRoute.gateway.networking.k8s.io":
			o := &gwapiv1.HTTPRoute{}
			out.HTTPRoutes, target = append(out.HTTPRoutes, o), o
		case "ReferenceGrant.gateway.networking.k8s.io":
			o := &gwapiv1beta1.ReferenceGrant{}
			out.ReferenceGrants, target = append(out.ReferenceGrants, o), o
		case "XBackend.agentic.networking.x-k8s.io":
			o := &agenticv0alpha0.XBackend{}
			out.XBackends, target = append(out.XBackends, o), o
		case "XAccessPolicy.agentic.networking.x-k8s.io":
			// Stored as v1alpha1 whatever version wrote it (the CRD has no conversion).
			o := &agenticv1alpha1.XAccessPolicy{}
			out.XAccessPolicies, target = append(out.XAccessPolicies, o), o
		default:
			continue
		}
		b, err := json.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, target); err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err)
		}
	}
	return out, nil
}

// Upstream runs the upstream controller's admission and translator. One Upstream is
// used by one goroutine; it is reused across scenarios.
type Upstream struct {
	apInformer *capturingInformer
	apClient   *agenticfake.Clientset
}

// capturingInformer is an XAccessPolicy informer that is never started: the harness
// fills its store and delivers the events itself, so that admission runs with every
// policy of the scenario in the controller's cache (the steady state), deterministically.
type capturingInformer struct {
	cache.SharedIndexInformer
	handlers []cache.ResourceEventHandler
}

func (c *capturingInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	c.handlers = append(c.handlers, h)
	return c.SharedIndexInformer.AddEventHandler(h)
}

type apInformer struct{ inf *capturingInformer }

func (a apInformer) Informer() cache.SharedIndexInformer { return a.inf }
func (a apInformer) Lister() agenticlistersv1alpha1.XAccessPolicyLister {
	return agenticlistersv1alpha1.NewXAccessPolicyLister(a.inf.GetIndexer())
}

var _ agenticinformersv1alpha1.XAccessPolicyInformer = apInformer{}

// NewUpstream builds the upstream controller (pkg/controller.New) over fake clients
// whose informers are never started.
func NewUpstream() (*Upstream, error) {
	kube := kubefake.NewClientset()
	gw := gwfake.NewSimpleClientset()
	ag := agenticfake.NewSimpleClientset()
	kf := informers.NewSharedInformerFactory(kube, 0)
	gf := gwinformers.NewSharedInformerFactory(gw, 0)
	af := agenticinformers.NewSharedInformerFactory(ag, 0)
	up := &Upstream{apClient: ag}
	up.apInformer = &capturingInformer{SharedIndexInformer: af.Agentic().V1alpha1().XAccessPolicies().Informer()}
	// The controller writes status through the client; the write lands in the store,
	// as the informer would deliver it.
	ag.PrependReactor("update", "xaccesspolicies", func(action k8stesting.Action) (bool, runtime.Object, error) {
		ua, ok := action.(k8stesting.UpdateAction)
		if !ok {
			return false, nil, nil
		}
		obj := ua.GetObject().(*agenticv1alpha1.XAccessPolicy)
		if err := up.apInformer.GetIndexer().Update(obj); err != nil {
			return true, nil, err
		}
		return true, obj, nil
	})
	_, err := controller.New(context.Background(), TrustDomain, "envoy", kube, gw, ag,
		kf.Core().V1().Namespaces(), kf.Core().V1().Services(), kf.Discovery().V1().EndpointSlices(),
		kf.Core().V1().Secrets(), kf.Core().V1().ConfigMaps(),
		gf.Gateway().V1().GatewayClasses(), gf.Gateway().V1().Gateways(), gf.Gateway().V1().HTTPRoutes(),
		gf.Gateway().V1beta1().ReferenceGrants(),
		af.Agentic().V0alpha0().XBackends(), apInformer{up.apInformer})
	if err != nil {
		return nil, err
	}
	if len(up.apInformer.handlers) != 1 {
		return nil, fmt.Errorf("the controller registered %d XAccessPolicy handlers, want 1", len(up.apInformer.handlers))
	}
	return up, nil
}

// Admit gives every policy the status the upstream controller writes: its Add handler
// (limit per target, ExternalAuth seniority, CEL compilation) runs once per policy with
// every policy in its cache. Policies are deep-copied; the copies carry the status.
func (up *Upstream) Admit(policies []*agenticv1alpha1.XAccessPolicy) ([]*agenticv1alpha1.XAccessPolicy, error) {
	idx := up.apInformer.GetIndexer()
	if err := idx.Replace(nil, ""); err != nil {
		return nil, err
	}
	for _, p := range policies {
		c := p.DeepCopy()
		c.Status = agenticv1alpha1.AccessPolicyStatus{}
		if err := idx.Add(c); err != nil {
			return nil, err
		}
	}
	h := up.apInformer.handlers[0]
	for _, p := range policies {
		obj, ok, err := idx.GetByKey(p.Namespace + "/" + p.Name)
		if err != nil || !ok {
			return nil, fmt.Errorf("policy %s/%s not in the store", p.Namespace, p.Name)
		}
		h.OnAdd(obj, true)
	}
	out := make([]*agenticv1alpha1.XAccessPolicy, 0, len(policies))
	for _, p := range policies {
		obj, _, _ := idx.GetByKey(p.Namespace + "/" + p.Name)
		out = append(out, obj.(*agenticv1alpha1.XAccessPolicy))
	}
	return out, nil
}

func indexer() cache.Indexer {
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

func fill[T any](objs []T) cache.Indexer {
	i := indexer()
	for _, o := range objs {
		_ = i.Add(o)
	}
	return i
}

// Translation is what the translator produced for each gateway.
type Translation struct {
	// Gateways by "ns/name".
	Gateways map[string]*EnvoyConfig
}

// Translate runs translator.New(...).TranslateGatewayToXDS for every gateway, with
// listers over objs (policies carrying their admitted status).
func Translate(objs *UpstreamObjects) (*Translation, error) {
	tr := translator.New(TrustDomain, nil, nil,
		corev1listers.NewNamespaceLister(fill(objs.Namespaces)),
		corev1listers.NewServiceLister(fill(objs.Services)),
		discoverylisters.NewEndpointSliceLister(indexer()),
		corev1listers.NewSecretLister(indexer()),
		corev1listers.NewConfigMapLister(indexer()),
		gwlisters.NewGatewayLister(fill(objs.Gateways)),
		gwlisters.NewHTTPRouteLister(fill(objs.HTTPRoutes)),
		gwlistersv1beta1.NewReferenceGrantLister(fill(objs.ReferenceGrants)),
		agenticlistersv1alpha1.NewXAccessPolicyLister(fill(objs.XAccessPolicies)),
		agenticlisters.NewXBackendLister(fill(objs.XBackends)),
	)
	out := &Translation{Gateways: map[string]*EnvoyConfig{}}
	gws := append([]*gwapiv1.Gateway(nil), objs.Gateways...)
	sort.Slice(gws, func(i, j int) bool { return gws[i].Namespace+"/"+gws[i].Name < gws[j].Namespace+"/"+gws[j].Name })
	for _, gw := range gws {
		res, _, _, _, err := tr.TranslateGatewayToXDS(context.Background(), gw)
		if err != nil {
			return nil, fmt.Errorf("translating gateway %s/%s: %w", gw.Namespace, gw.Name, err)
		}
		cfg, err := newEnvoyConfig(res)
		if err != nil {
			return nil, fmt.Errorf("gateway %s/%s: %w", gw.Namespace, gw.Name, err)
		}
		out.Gateways[gw.Namespace+"/"+gw.Name] = cfg
	}
	return out, nil
}
