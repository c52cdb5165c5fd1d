package snapshot

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// kindCounts is how many objects of each slice a snapshot holds.
func kindCounts(s *Snapshot) map[string]int {
	m := map[string]int{}
	for name, n := range map[string]int{
		"GatewayClass": len(s.GatewayClasses), "Gateway": len(s.Gateways), "HTTPRoute": len(s.HTTPRoutes),
		"ReferenceGrant": len(s.ReferenceGrants), "XBackend": len(s.XBackends), "XAccessPolicy": len(s.XAccessPolicies),
		"AuthPolicy": len(s.AuthPolicies), "Service": len(s.Services), "ServiceAccount": len(s.ServiceAccounts),
		"Namespace": len(s.Namespaces),
	} {
		if n > 0 {
			m[name] = n
		}
	}
	return m
}

func TestDecodeAndAppend(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		kind      string // the slice the object lands in; "" when skipped
		skipped   string
	}{
		{"GatewayClass", "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: c}\nspec: {controllerName: x/y}\n", "GatewayClass", ""},
		{"Gateway v1beta1", "apiVersion: gateway.networking.k8s.io/v1beta1\nkind: Gateway\nmetadata: {name: g, namespace: ns}\nspec: {gatewayClassName: c, listeners: [{name: l, port: 80, protocol: HTTP}]}\n", "Gateway", ""},
		{"HTTPRoute", "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: ns}\n", "HTTPRoute", ""},
		{"ReferenceGrant v1alpha2", "apiVersion: gateway.networking.k8s.io/v1alpha2\nkind: ReferenceGrant\nmetadata: {name: rg, namespace: ns}\n", "ReferenceGrant", ""},
		{"XBackend", "apiVersion: agentic.networking.x-k8s.io/v0alpha0\nkind: XBackend\nmetadata: {name: b, namespace: ns}\nspec: {mcp: {serviceName: s, port: 80}}\n", "XBackend", ""},
		{"XBackend in the legacy group", "apiVersion: agentic.prototype.x-k8s.io/v0alpha0\nkind: XBackend\nmetadata: {name: b, namespace: ns}\n", "XBackend", ""},
		{"XAccessPolicy", "apiVersion: agentic.networking.x-k8s.io/v1alpha1\nkind: XAccessPolicy\nmetadata: {name: p, namespace: ns}\n", "XAccessPolicy", ""},
		{"AuthPolicy", "apiVersion: kuadrant.io/v1\nkind: AuthPolicy\nmetadata: {name: a, namespace: ns}\n", "AuthPolicy", ""},
		{"Service", "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: ns}\nspec: {ports: [{port: 80}]}\n", "Service", ""},
		{"ServiceAccount", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa, namespace: ns}\n", "ServiceAccount", ""},
		{"Namespace", "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns1, labels: {a: b}}\n", "Namespace", ""},
		{"core kind agpol does not read", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "", "ConfigMap"},
		{"grouped kind agpol does not read", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n", "", "Deployment.apps"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := obj(t, c.doc)
			typed, err := Decode(u)
			if err != nil {
				t.Fatal(err)
			}
			var s Snapshot
			src := Source{File: "f.yaml", Line: 3, Item: -1}
			s.Append(typed, NewOrigin(src, NewRaw(u)))
			got := kindCounts(&s)
			if c.kind == "" {
				if len(got) != 0 || s.Len() != 0 || s.Skipped[c.skipped] != 1 {
					t.Fatalf("typed %v, skipped %v; want %s skipped", got, s.Skipped, c.skipped)
				}
				return
			}
			if len(got) != 1 || got[c.kind] != 1 || s.Len() != 1 || len(s.Skipped) != 0 {
				t.Fatalf("typed %v, skipped %v; want one %s", got, s.Skipped, c.kind)
			}
			o := s.Objects()[0]
			if o.Source != src || o.Object() != u {
				t.Errorf("origin %+v holding %p, want %+v holding %p", o.Source, o.Object(), src, u)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", "object has no kind"},
		{"no apiVersion", "kind: Service\nmetadata: {name: a}\n", `Service "a" has no apiVersion`},
		{"unsupported version", "apiVersion: agentic.networking.x-k8s.io/v9\nkind: XAccessPolicy\nmetadata: {name: p}\n",
			`XAccessPolicy agentic.networking.x-k8s.io/p: unsupported apiVersion "agentic.networking.x-k8s.io/v9" (agpol reads agentic.networking.x-k8s.io/v1alpha1, agentic.networking.x-k8s.io/v0alpha0)`},
		{"unsupported core version", "apiVersion: v2\nkind: Service\nmetadata: {name: s}\n", `(agpol reads v1)`},
		{"no name", "apiVersion: v1\nkind: Service\nmetadata: {namespace: ns}\n", "Service has no metadata.name"},
		{"wrong type, with the list index", "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec:\n  listeners:\n  - {name: a, port: 80}\n  - {name: b, port: x}\n",
			`Gateway "g": spec.listeners[1].port: expected an integer, got string`},
		{"a fraction where an integer goes", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 8.5}]}\n",
			`Service "s": spec.ports[0].port: expected an integer, got number 8.5`},
		{"a string where a mapping goes", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: x\n",
			`Service "s": spec: expected a mapping, got string`},
		{"a number where a string goes: the map is named, not its key", "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns1, labels: {a: 1}}\n",
			`Namespace "ns1": metadata.labels: expected a string, got number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(obj(t, c.doc))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
	_, err := Decode(obj(t, "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: x}]}\n"))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "spec.ports[0].port" {
		t.Errorf("err = %v, want a *FieldError at spec.ports[0].port", err)
	}
}

// TestAddAppendsOnError: an object whose fields do not decode is still added (partly
// typed) along with the error, as Add documents.
func TestAddAppendsOnError(t *testing.T) {
	var s Snapshot
	err := s.Add(obj(t, "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: x}]}\n"), Source{File: "f"})
	if err == nil || len(s.Services) != 1 || s.Services[0].Name != "s" {
		t.Errorf("err %v, %d services; want an error and the service added", err, len(s.Services))
	}
}

func TestDecodeXAccessPolicyVersions(t *testing.T) {
	for _, c := range []struct {
		doc, version string
		legacy       bool
	}{
		{"apiVersion: agentic.networking.x-k8s.io/v1alpha1\nkind: XAccessPolicy\nmetadata: {name: p, namespace: ns}\nspec: {action: Allow}\n", "v1alpha1", false},
		{"apiVersion: agentic.networking.x-k8s.io/v0alpha0\nkind: XAccessPolicy\nmetadata: {name: p, namespace: ns}\nspec: {rules: [{name: r}]}\n", "v0alpha0", true},
	} {
		typed, err := Decode(obj(t, c.doc))
		if err != nil {
			t.Fatal(err)
		}
		var s Snapshot
		s.Append(typed, Origin{})
		p := s.XAccessPolicies[0]
		if p.APIVersion() != c.version || (p.Legacy != nil) != c.legacy {
			t.Errorf("%s: APIVersion %s, legacy %v", c.version, p.APIVersion(), p.Legacy != nil)
		}
		if c.legacy && (len(p.Legacy.Spec.Rules) != 1 || p.Legacy.Spec.Rules[0].Name != "r" || p.Spec.Action != "") {
			t.Errorf("v0alpha0: legacy rules %v, action %q; want rule r and no action", p.Legacy.Spec.Rules, p.Spec.Action)
		}
		typed.SetNamespace("other")
		if p.Namespace != "other" || (c.legacy && p.Legacy.Namespace != "other") {
			t.Errorf("%s: SetNamespace left %q", c.version, p.Namespace)
		}
	}
}

// TestDecodeServiceAccountKeepsNoSecretNames: a ServiceAccount's secrets are not kept.
func TestDecodeServiceAccountKeepsNoSecretNames(t *testing.T) {
	typed, err := Decode(obj(t, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa, namespace: ns}\nsecrets: [{name: tok}]\nimagePullSecrets: [{name: pull}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var s Snapshot
	s.Append(typed, Origin{})
	if sa := s.ServiceAccounts[0]; sa.Secrets != nil || sa.ImagePullSecrets != nil {
		t.Errorf("secrets %v, image pull secrets %v; want none", sa.Secrets, sa.ImagePullSecrets)
	}
}

func TestSetNamespace(t *testing.T) {
	typed, err := Decode(obj(t, "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	typed.SetNamespace("n")
	var s Snapshot
	s.Append(typed, Origin{})
	if s.Services[0].Namespace != "n" {
		t.Errorf("namespace %q, want n", s.Services[0].Namespace)
	}
	Typed{}.SetNamespace("n") // a skipped kind: nothing to set
}

func TestLookupKindAndIdentity(t *testing.T) {
	for _, c := range []struct {
		group, kind string
		ok          bool
		namespaced  bool
	}{
		{"agentic.networking.x-k8s.io", "XAccessPolicy", true, true},
		{"agentic.prototype.x-k8s.io", "XAccessPolicy", true, true},
		{GatewayGroup, "GatewayClass", true, false},
		{"", "Namespace", true, false},
		{"", "Service", true, true},
		{"", "Secret", false, false},
		{"apps", "Service", false, false},
	} {
		k, ok := LookupKind(c.group, c.kind)
		if ok != c.ok || k.Namespaced != c.namespaced {
			t.Errorf("LookupKind(%q, %q) = %+v, %v", c.group, c.kind, k, ok)
		}
		if ok && k.GroupKind().Kind != c.kind {
			t.Errorf("GroupKind of %s = %v", c.kind, k.GroupKind())
		}
	}
	id := RefOf(obj(t, "apiVersion: agentic.prototype.x-k8s.io/v0alpha0\nkind: XBackend\nmetadata: {name: b, namespace: ns}\n"))
	if id != (Ref{Group: "agentic.networking.x-k8s.io", Kind: "XBackend", Namespace: "ns", Name: "b"}) {
		t.Errorf("RefOf folds no group alias: %+v", id)
	}
}
