package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	egv1alpha1 "github.com/envoyproxy/gateway/api/v1alpha1"
	authorinooperatorv1beta1 "github.com/kuadrant/authorino-operator/api/v1beta1"
	authorinov1beta3 "github.com/kuadrant/authorino/api/v1beta3"
	"github.com/kuadrant/policy-machinery/controller"
	"github.com/kuadrant/policy-machinery/machinery"
	"github.com/samber/lo"
	istionetworkingv1alpha3 "istio.io/client-go/pkg/apis/networking/v1alpha3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwapiv1alpha2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	"sigs.k8s.io/yaml"

	kuadrantv1 "github.com/kuadrant/kuadrant-operator/api/v1"
	kuadrantv1beta1 "github.com/kuadrant/kuadrant-operator/api/v1beta1"
	kuadrantauthorino "github.com/kuadrant/kuadrant-operator/internal/authorino"
	controllers "github.com/kuadrant/kuadrant-operator/internal/controller"
	kuadrantenvoygateway "github.com/kuadrant/kuadrant-operator/internal/envoygateway"
	kuadrantistio "github.com/kuadrant/kuadrant-operator/internal/istio"
)

// world is the objects of one scenario, typed as kuadrant-operator's watchers type them.
type world struct {
	objs    []controller.Object
	secrets []*corev1.Secret
	// rbac holds the scenario's Roles, ClusterRoles and bindings (SubjectAccessReviews).
	rbac []runtime.Object
	// kuadrantNS is the namespace of the (oldest) Kuadrant CR.
	kuadrantNS string
}

// decode types the scenario's objects. Kinds kuadrant-operator does not watch for
// AuthPolicy are left out, except Secrets (Authorino reads them).
func decode(raws []json.RawMessage) (*world, error) {
	w := &world{}
	uid := 0
	for i, raw := range raws {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &u.Object); err != nil {
			return nil, fmt.Errorf("object %d: %w", i, err)
		}
		gk := u.GroupVersionKind().GroupKind()
		var obj controller.Object
		switch gk {
		case machinery.GatewayClassGroupKind:
			obj = &gwapiv1.GatewayClass{}
		case machinery.GatewayGroupKind:
			obj = &gwapiv1.Gateway{}
		case machinery.HTTPRouteGroupKind:
			obj = &gwapiv1.HTTPRoute{}
		case kuadrantv1.AuthPolicyGroupKind:
			if u.GroupVersionKind().Version != "v1" {
				continue
			}
			obj = &kuadrantv1.AuthPolicy{}
		case kuadrantv1beta1.KuadrantGroupKind:
			obj = &kuadrantv1beta1.Kuadrant{}
		case schema.GroupKind{Kind: "Secret"}:
			s := &corev1.Secret{}
			if err := fromUnstructured(u, s); err != nil {
				return nil, fmt.Errorf("object %d (Secret): %w", i, err)
			}
			w.secrets = append(w.secrets, s)
			continue
		case schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}, schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"},
			schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}, schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:
			o, err := rbacObject(u)
			if err != nil {
				return nil, fmt.Errorf("object %d (%s %s/%s): %w", i, gk.Kind, u.GetNamespace(), u.GetName(), err)
			}
			w.rbac = append(w.rbac, o)
			continue
		default:
			continue
		}
		if err := fromUnstructured(u, obj); err != nil {
			return nil, fmt.Errorf("object %d (%s %s/%s): %w", i, gk.Kind, u.GetNamespace(), u.GetName(), err)
		}
		uid++
		if obj.GetUID() == "" {
			obj.SetUID(k8stypes.UID(fmt.Sprintf("uid-%d", uid)))
		}
		if obj.GetGeneration() == 0 {
			obj.SetGeneration(1)
		}
		w.objs = append(w.objs, obj)
	}
	// Kuadrant's namespace: the oldest Kuadrant CR's (kuadrant-operator's
	// GetKuadrantFromTopology); a scenario without one gets kuadrant-system's.
	var kuadrants []controller.Object
	for _, o := range w.objs {
		if k, ok := o.(*kuadrantv1beta1.Kuadrant); ok {
			kuadrants = append(kuadrants, k)
		}
	}
	if len(kuadrants) == 0 {
		k := &kuadrantv1beta1.Kuadrant{TypeMeta: metav1.TypeMeta{APIVersion: kuadrantv1beta1.GroupVersion.String(), Kind: "Kuadrant"},
			ObjectMeta: metav1.ObjectMeta{Name: "kuadrant", Namespace: "kuadrant-system", UID: "uid-kuadrant"}}
		w.objs = append(w.objs, k)
		kuadrants = append(kuadrants, k)
	}
	sort.Sort(controller.ObjectsByCreationTimestamp(kuadrants))
	w.kuadrantNS = kuadrants[0].GetNamespace()
	// The Authorino CR the Kuadrant operator creates beside it, Ready.
	a := &authorinooperatorv1beta1.Authorino{TypeMeta: metav1.TypeMeta{APIVersion: authorinooperatorv1beta1.GroupVersion.String(), Kind: "Authorino"},
		ObjectMeta: metav1.ObjectMeta{Name: "authorino", Namespace: w.kuadrantNS, UID: "uid-authorino"}}
	a.Status.Conditions = []authorinooperatorv1beta1.Condition{{Type: authorinooperatorv1beta1.ConditionReady, Status: corev1.ConditionTrue}}
	w.objs = append(w.objs, a)
	w.converge()
	return w, nil
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// converge writes the status a Gateway API controller writes once it has programmed
// the Gateways (every listener Programmed) and accepted the routes (every parentRef to
// an existing Gateway of a known class Accepted, under the class's controller name).
// This stands in for Istio and Envoy Gateway: agpol assumes the same (it does not
// read route or listener readiness).
func (w *world) converge() {
	classes := map[string]gwapiv1.GatewayController{}
	gateways := map[string]*gwapiv1.Gateway{}
	for _, o := range w.objs {
		switch x := o.(type) {
		case *gwapiv1.GatewayClass:
			classes[x.Name] = x.Spec.ControllerName
		case *gwapiv1.Gateway:
			gateways[x.Namespace+"/"+x.Name] = x
		}
	}
	for _, g := range gateways {
		g.Status.Listeners = nil
		for _, l := range g.Spec.Listeners {
			g.Status.Listeners = append(g.Status.Listeners, gwapiv1.ListenerStatus{Name: l.Name,
				Conditions: []metav1.Condition{{Type: string(gwapiv1.ListenerConditionProgrammed), Status: metav1.ConditionTrue, Reason: "Programmed"}}})
		}
	}
	for _, o := range w.objs {
		r, ok := o.(*gwapiv1.HTTPRoute)
		if !ok {
			continue
		}
		r.Status.Parents = nil
		for _, p := range r.Spec.ParentRefs {
			ns := r.Namespace
			if p.Namespace != nil {
				ns = string(*p.Namespace)
			}
			g := gateways[ns+"/"+string(p.Name)]
			if g == nil {
				continue
			}
			cn, ok := classes[string(g.Spec.GatewayClassName)]
			if !ok {
				continue
			}
			accepted := metav1.Condition{Type: string(gwapiv1.RouteConditionAccepted), Status: metav1.ConditionTrue, Reason: "Accepted"}
			if !hostnamesIntersect(g, p, r.Spec.Hostnames) {
				accepted.Status, accepted.Reason = metav1.ConditionFalse, string(gwapiv1.RouteReasonNoMatchingListenerHostname)
			}
			r.Status.Parents = append(r.Status.Parents, gwapiv1.RouteParentStatus{ParentRef: p, ControllerName: cn,
				Conditions: []metav1.Condition{accepted}})
		}
	}
}

// hostnamesIntersect: some listener the parentRef selects accepts some hostname of
// the route (Gateway API: a route whose hostnames no such listener accepts is not
// Accepted, reason NoMatchingListenerHostname).
func hostnamesIntersect(g *gwapiv1.Gateway, p gwapiv1.ParentReference, hosts []gwapiv1.Hostname) bool {
	for _, l := range g.Spec.Listeners {
		if p.SectionName != nil && *p.SectionName != l.Name {
			continue
		}
		if p.Port != nil && *p.Port != l.Port {
			continue
		}
		if l.Hostname == nil || *l.Hostname == "" || len(hosts) == 0 {
			return true
		}
		for _, h := range hosts {
			if hostMatch(string(*l.Hostname), string(h)) || hostMatch(string(h), string(*l.Hostname)) {
				return true
			}
		}
	}
	return false
}

// hostMatch: pattern (exact or "*.suffix") matches host (which may be a wildcard).
func hostMatch(pattern, host string) bool {
	if pattern == host {
		return true
	}
	if strings.HasPrefix(pattern, "*.") {
		return strings.HasSuffix(host, pattern[1:])
	}
	return false
}

// topology builds the topology kuadrant-operator builds (policy-machinery's
// gatewayAPITopologyBuilder.Build, unexported, over these exported calls) with the
// kinds and links kuadrant-operator registers for AuthPolicy with Istio, Envoy Gateway
// and the Authorino operator installed (internal/controller/state_of_the_world.go).
func topology(objs []controller.Object) (*machinery.Topology, error) {
	store := controller.Store{}
	for _, o := range objs {
		store[string(o.GetUID())] = o
	}
	links := []controller.LinkFunc{
		kuadrantv1beta1.LinkKuadrantToGatewayClasses,
		kuadrantv1beta1.LinkKuadrantToAuthorino,
		kuadrantauthorino.LinkHTTPRouteRuleToAuthConfig,
		kuadrantistio.LinkGatewayToEnvoyFilter,
		kuadrantenvoygateway.LinkGatewayToEnvoyPatchPolicy,
		kuadrantenvoygateway.LinkGatewayToEnvoyExtensionPolicy,
	}
	objectKinds := []schema.GroupKind{
		kuadrantv1beta1.KuadrantGroupKind, kuadrantv1beta1.AuthorinoGroupKind, kuadrantauthorino.AuthConfigGroupKind,
		kuadrantistio.EnvoyFilterGroupKind, kuadrantenvoygateway.EnvoyPatchPolicyGroupKind, kuadrantenvoygateway.EnvoyExtensionPolicyGroupKind,
	}
	opts := []machinery.GatewayAPITopologyOptionsFunc{
		machinery.WithGatewayClasses(lo.Map(store.FilterByGroupKind(machinery.GatewayClassGroupKind), controller.ObjectAs[*gwapiv1.GatewayClass])...),
		machinery.WithGateways(lo.Map(store.FilterByGroupKind(machinery.GatewayGroupKind), controller.ObjectAs[*gwapiv1.Gateway])...),
		machinery.WithHTTPRoutes(lo.Map(store.FilterByGroupKind(machinery.HTTPRouteGroupKind), controller.ObjectAs[*gwapiv1.HTTPRoute])...),
		machinery.ExpandGatewayListeners(),
		machinery.ExpandHTTPRouteRules(),
		machinery.ExpandGRPCRouteRules(),
		machinery.ExpandServicePorts(),
		machinery.WithGatewayAPITopologyLinks(lo.Map(links, func(f controller.LinkFunc, _ int) machinery.LinkFunc { return f(store) })...),
		machinery.WithGatewayAPITopologyPolicies(lo.Map(store.FilterByGroupKind(kuadrantv1.AuthPolicyGroupKind), controller.ObjectAs[machinery.Policy])...),
	}
	for _, k := range objectKinds {
		opts = append(opts, machinery.WithGatewayAPITopologyObjects(lo.Map(store.FilterByGroupKind(k), func(o controller.Object, _ int) machinery.Object {
			if m, ok := o.(machinery.Object); ok {
				return m
			}
			return &controller.RuntimeObject{Object: o}
		})...))
	}
	return machinery.NewGatewayAPITopology(opts...)
}

// operatorRun is what one reconciliation of NewDataPlanePoliciesWorkflow did.
type operatorRun struct {
	state  *sync.Map
	writes []write
}

// reconcile runs kuadrant-operator's data plane policies workflow once over objs,
// with one create event per object (what the controller delivers at start-up).
func reconcile(api *apiServer, objs []controller.Object) (*operatorRun, error) {
	topo, err := topology(objs)
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	var events []controller.ResourceEvent
	for _, o := range objs {
		events = append(events, controller.ResourceEvent{Kind: o.GetObjectKind().GroupVersionKind().GroupKind(), EventType: controller.CreateEvent, NewObject: o})
	}
	// Gateway API, Istio, Envoy Gateway and the Authorino operator installed; the
	// Limitador operator not (rate limiting is out of scope, and with it the
	// peer-authentication reconcilers that need a manager are not registered).
	wf := controllers.NewDataPlanePoliciesWorkflow(nil, api.client, true, true, true, false, true)
	state := &sync.Map{}
	api.reset()
	if err := wf.Run(context.Background(), events, topo, nil, state); err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return &operatorRun{state: state, writes: api.reset()}, nil
}

// converged adds what the first reconciliation wrote back into the world, as the
// cluster would hold it once the written objects are reconciled by their own
// controllers: AuthConfigs Ready (Authorino), Istio's EnvoyFilters, Envoy Gateway's
// policies Accepted and Programmed for their Gateways, and the AuthPolicies' status.
func converged(objs []controller.Object, run *operatorRun) ([]controller.Object, error) {
	out := append([]controller.Object{}, objs...)
	classOf := map[string]gwapiv1.GatewayController{}
	classes := map[string]gwapiv1.GatewayController{}
	for _, o := range objs {
		if c, ok := o.(*gwapiv1.GatewayClass); ok {
			classes[c.Name] = c.Spec.ControllerName
		}
	}
	for _, o := range objs {
		if g, ok := o.(*gwapiv1.Gateway); ok {
			classOf[g.Namespace+"/"+g.Name] = classes[string(g.Spec.GatewayClassName)]
		}
	}
	status := map[string]kuadrantv1.AuthPolicyStatus{}
	n := 0
	for _, w := range run.writes {
		if w.Object == nil {
			continue
		}
		n++
		uid := k8stypes.UID(fmt.Sprintf("uid-written-%d", n))
		switch {
		case w.Verb == "status" && w.Resource == "authpolicies":
			p := &kuadrantv1.AuthPolicy{}
			if err := fromUnstructured(w.Object, p); err != nil {
				return nil, err
			}
			status[p.Namespace+"/"+p.Name] = p.Status
		case w.Verb == "create" && w.Resource == "authconfigs":
			ac := &authorinov1beta3.AuthConfig{}
			if err := fromUnstructured(w.Object, ac); err != nil {
				return nil, err
			}
			ac.UID = uid
			ac.Status.Conditions = []authorinov1beta3.AuthConfigStatusCondition{{Type: authorinov1beta3.StatusConditionReady, Status: corev1.ConditionTrue}}
			out = append(out, ac)
		case w.Verb == "create" && w.Resource == "envoyfilters":
			ef := &istionetworkingv1alpha3.EnvoyFilter{}
			if err := fromUnstructured(w.Object, ef); err != nil {
				return nil, err
			}
			ef.UID = uid
			out = append(out, ef)
		case w.Verb == "create" && (w.Resource == "envoypatchpolicies" || w.Resource == "envoyextensionpolicies"):
			var o controller.Object
			var st *egPolicyStatus
			if w.Resource == "envoypatchpolicies" {
				p := &egv1alpha1.EnvoyPatchPolicy{}
				if err := fromUnstructured(w.Object, p); err != nil {
					return nil, err
				}
				o, st = p, &egPolicyStatus{&p.Status, p.Namespace, targetNames(w.Object)}
			} else {
				p := &egv1alpha1.EnvoyExtensionPolicy{}
				if err := fromUnstructured(w.Object, p); err != nil {
					return nil, err
				}
				o, st = p, &egPolicyStatus{&p.Status, p.Namespace, targetNames(w.Object)}
			}
			st.accept(classOf)
			o.SetUID(uid)
			out = append(out, o)
		}
	}
	for i, o := range out {
		if p, ok := o.(*kuadrantv1.AuthPolicy); ok {
			if s, ok := status[p.Namespace+"/"+p.Name]; ok {
				p = p.DeepCopy()
				p.Status = s
				out[i] = p
			}
		}
	}
	return out, nil
}

// targetNames are the Gateway names an Envoy Gateway policy targets (spec.targetRef or
// spec.targetRefs).
func targetNames(u *unstructured.Unstructured) []string {
	var out []string
	if n, ok, _ := unstructured.NestedString(u.Object, "spec", "targetRef", "name"); ok {
		out = append(out, n)
	}
	refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "targetRefs")
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

type egPolicyStatus struct {
	st    *gwapiv1alpha2.PolicyStatus
	ns    string
	names []string
}

// accept writes the status Envoy Gateway writes on a policy it accepted and programmed
// for each targeted Gateway.
func (e *egPolicyStatus) accept(classOf map[string]gwapiv1.GatewayController) {
	for _, n := range e.names {
		ns := gwapiv1.Namespace(e.ns)
		e.st.Ancestors = append(e.st.Ancestors, gwapiv1alpha2.PolicyAncestorStatus{
			AncestorRef:    gwapiv1.ParentReference{Name: gwapiv1.ObjectName(n), Namespace: &ns},
			ControllerName: classOf[e.ns+"/"+n],
			Conditions: []metav1.Condition{
				{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"},
				{Type: string(egv1alpha1.PolicyConditionProgrammed), Status: metav1.ConditionTrue, Reason: "Programmed"},
			},
		})
	}
}

// effective reads the effective AuthPolicies the workflow stored in its state.
func effective(run *operatorRun) controllers.EffectiveAuthPolicies {
	v, ok := run.state.Load(controllers.StateEffectiveAuthPolicies)
	if !ok {
		return nil
	}
	return v.(controllers.EffectiveAuthPolicies)
}

// policyLocatorName turns "kuadrant.io/AuthPolicy:ns/name" (policy-machinery's
// locator) into "ns/name".
func policyLocatorName(loc string) string {
	if i := strings.LastIndex(loc, ":"); i >= 0 {
		return loc[i+1:]
	}
	return loc
}
