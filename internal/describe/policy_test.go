package describe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
)

// policyObjects: Gateway gw/gw (HTTPS, HTTP and a TCP listener) → HTTPRoute app/r →
// XBackend app/xb, six Allow policies on xb (the youngest over the limit, two sharing
// the rule name "call"), a v0alpha0 policy on xb, Gateway gw/mesh of an Istio class
// with a policy, and AuthPolicies: gateway overrides displacing a route's rule.
const policyObjects = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: gw}
spec:
  gatewayClassName: agentic
  listeners:
  - {name: https, protocol: HTTPS, port: 443, tls: {mode: Terminate, certificateRefs: [{name: c}]}, allowedRoutes: {namespaces: {from: All}}}
  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}
  - {name: raw, protocol: TCP, port: 9000}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: mesh, namespace: gw}
spec:
  gatewayClassName: istio
  listeners:
  - {name: http, protocol: HTTP, port: 80}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: gw}]
  rules:
  - name: mcp
    backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb}]
---
apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: xb, namespace: app}
spec: {mcp: {serviceName: s, port: 80}}
---
apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: {name: mesh, namespace: gw, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: mesh}]
  action: Allow
  rules:
  - {name: any, source: {type: ServiceAccount, serviceAccount: {namespace: app, name: agent}}}
---
apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XAccessPolicy
metadata: {name: legacy, namespace: app, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb}]
  rules:
  - {name: old, source: {type: ServiceAccount, serviceAccount: {namespace: app, name: agent}}}
`

// allowPolicy is an Allow policy on app/xb created at minute min with one rule.
func allowPolicy(name, min, rule string) string {
	return `---
apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: {name: ` + name + `, namespace: app, creationTimestamp: "2025-01-02T00:` + min + `:00Z"}
spec:
  targetRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb}]
  action: Allow
  rules:
  - {name: ` + rule + `, source: {type: ServiceAccount, serviceAccount: {namespace: app, name: ` + name + `}}}
`
}

const authObjects = `---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: gw-over, namespace: gw, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  overrides:
    rules:
      authentication:
        idp: {jwt: {issuerUrl: "https://idp.example.com"}}
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: route, namespace: app, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}
  rules:
    authentication:
      other: {jwt: {issuerUrl: "https://other.example.com"}}
`

func loadPolicies(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	text := policyObjects + allowPolicy("p1", "01", "call") + allowPolicy("p2", "02", "call") +
		allowPolicy("p3", "03", "r3") + allowPolicy("p4", "04", "r4") + allowPolicy("p5", "05", "r5") +
		allowPolicy("p6", "06", "r6") + authObjects
	f := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAccessPolicyView(t *testing.T) {
	s := loadPolicies(t)
	tests := []struct {
		name        string
		admitted    bool
		enforcement string
		// reason is why the policy does not run: the level's code, or the other data
		// plane's name; shadow is one of its Shadowing.
		reason   string
		shadow   *Shadow
		onTarget int
	}{
		{name: "p1", admitted: true, enforcement: Enforced, shadow: &Shadow{Rule: "call", Other: "app/p2#call"}, onTarget: 7},
		{name: "p2", admitted: true, enforcement: Enforced, shadow: &Shadow{Rule: "call", Other: "app/p1#call", Replaces: true}, onTarget: 7},
		{name: "p6", enforcement: NotEnforced, reason: effective.ReasonLimit, onTarget: 7},
		{name: "legacy", admitted: true, enforcement: NotEnforced, reason: effective.ReasonNoAction, onTarget: 7},
		{name: "mesh", admitted: true, enforcement: NotEnforced, reason: "istio", onTarget: 1}, // another data plane: reason is its name
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := "app"
			if tt.name == "mesh" {
				ns = "gw"
			}
			v, err := Build(model.New(s), effective.Reference(), "cluster.local", KindXAccessPolicy, ns, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			ap := v.AccessPolicy
			if ap.Admission.Effective.Accepted != tt.admitted {
				t.Errorf("admitted %v, want %v (%+v)", ap.Admission.Effective.Accepted, tt.admitted, ap.Admission.Effective)
			}
			if ap.Enforcement != tt.enforcement {
				t.Errorf("enforcement %s, want %s", ap.Enforcement, tt.enforcement)
			}
			switch why := ap.Why; {
			case why == nil:
				if tt.reason != "" {
					t.Errorf("runs, want not enforced %s", tt.reason)
				}
			case why.Why == NotRunOtherDataPlane:
				if o := why.OtherDataPlane; string(o.DataPlane.DataPlane) != tt.reason || o.Gateway.Name != tt.name {
					t.Errorf("not enforced on the other data plane %+v, want %s", o, tt.reason)
				}
			case why.Why != NotRunIgnored || why.Ignored.Code != tt.reason || tt.name == "mesh":
				t.Errorf("not enforced %+v, want the level's %s", why, tt.reason)
			}
			if tt.shadow != nil {
				if len(ap.Shadowing) == 0 || ap.Shadowing[0].Rule != tt.shadow.Rule || ap.Shadowing[0].Other != tt.shadow.Other || ap.Shadowing[0].Replaces != tt.shadow.Replaces {
					t.Errorf("shadowing %+v, want one %+v", ap.Shadowing, *tt.shadow)
				}
			} else if len(ap.Shadowing) > 0 {
				t.Errorf("shadowing %+v, want none", ap.Shadowing)
			}
			if len(ap.Targets) != 1 || ap.Targets[0].PoliciesOnTarget != tt.onTarget || !ap.Targets[0].Found {
				t.Fatalf("targets %+v, want one found with %d policies", ap.Targets, tt.onTarget)
			}
			if len(ap.Rules) != 1 || v.RuleSources[ap.Rules[0].ID()] == "" {
				t.Errorf("rules %v, sources %v", ap.Rules, v.RuleSources)
			}
		})
	}
	if _, err := Build(model.New(s), effective.Reference(), "cluster.local", KindXAccessPolicy, "app", "nope"); err == nil ||
		err.Error() != "xaccesspolicy app/nope not found" {
		t.Errorf("missing policy: %v", err)
	}
}

func TestAuthPolicyView(t *testing.T) {
	s := loadPolicies(t)
	// Gateway gw/gw is of class agentic (not in the input; XAccessPolicies target it):
	// Kuadrant never programs it, so its AuthPolicies are not enforced.
	v, err := Build(model.New(s), effective.Reference(), "cluster.local", KindAuthPolicy, "gw", "gw-over")
	if err != nil {
		t.Fatal(err)
	}
	if ap := v.AuthPolicyStatus; ap.Enforcement != "NotProgrammed" || len(ap.Why) != 1 || ap.Why[0].Code != authpolicy.ReasonUnprogrammed || ap.Why[0].Ref != "gw/gw" {
		t.Errorf("gw-over on the agentic gateway: %s %+v, want NotProgrammed with the reason", ap.Enforcement, ap.Why)
	}
	// Mapped to Istio, Kuadrant programs it.
	s.ClassDataPlanes = map[string]string{"agentic": "istio"}
	v, err = Build(model.New(s), effective.Reference(), "cluster.local", KindAuthPolicy, "app", "route")
	if err != nil {
		t.Fatal(err)
	}
	ap := v.AuthPolicyStatus
	if ap.Enforcement != "Overridden" || strings.Join(ap.OverriddenBy, ",") != "gw/gw-over" {
		t.Errorf("route: %s by %v, want Overridden by gw/gw-over", ap.Enforcement, ap.OverriddenBy)
	}
	// Kuadrant's topology links the route to every listener its parentRef names, the
	// TCP one included: three paths.
	if len(ap.AppliesOn) != 0 || len(ap.DisplacedOn) != 3 {
		t.Errorf("route: applies on %v, displaced on %v; want nowhere and on every listener", ap.AppliesOn, ap.DisplacedOn)
	}
	if len(ap.Rules) != 1 || ap.Rules[0].Key != "authentication#other" || !strings.Contains(ap.Rules[0].Source, ":") {
		t.Errorf("route rules %+v", ap.Rules)
	}
	v, err = Build(model.New(s), effective.Reference(), "cluster.local", KindAuthPolicy, "gw", "gw-over")
	if err != nil {
		t.Fatal(err)
	}
	ap = v.AuthPolicyStatus
	if ap.Enforcement != "Enforced" || strings.Join(ap.Displaces, ",") != "app/route" || len(ap.AppliesOn) != 3 {
		t.Errorf("gw-over: %s, displaces %v, applies on %v", ap.Enforcement, ap.Displaces, ap.AppliesOn)
	}
}

func TestGatewayListenersAndLevels(t *testing.T) {
	s := loadPolicies(t)
	v, err := Build(model.New(s), effective.Reference(), "cluster.local", KindGateway, "gw", "gw")
	if err != nil {
		t.Fatal(err)
	}
	if v.DataPlane == nil || v.DataPlane.DataPlane != "agentic" || !v.DataPlane.Assumed {
		t.Errorf("data plane %+v, want agentic, assumed", v.DataPlane)
	}
	var got []string
	for _, l := range v.Listeners {
		prog := "programmed"
		if !l.Programmed {
			prog = "not programmed"
			if np := l.Unprogrammed; np != nil {
				prog = np.Why + " " + np.Protocol
			}
		}
		got = append(got, strings.Join([]string{l.Name, l.Protocol, l.TLS, l.MTLS, string(rune('0' + l.AttachedRoutes)), prog}, " "))
	}
	want := []string{
		"https HTTPS Terminate required 1 programmed",
		"http HTTP  none 1 programmed",
		"raw TCP  unknown 0 protocol TCP",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("listeners:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(v.GatewayLevels) != 1 || strings.Join(v.GatewayLevels[0].Listeners, ",") != "https,http" {
		t.Fatalf("gateway levels %+v, want one for https,http", v.GatewayLevels)
	}
	for _, p := range v.Paths {
		if p.GatewayLevel != 0 {
			t.Errorf("path %s: gateway level %d", pathLine(p), p.GatewayLevel)
		}
	}
	mesh, err := Build(model.New(s), effective.Reference(), "cluster.local", KindGateway, "gw", "mesh")
	if err != nil {
		t.Fatal(err)
	}
	if mesh.DataPlane.DataPlane != "istio" || len(mesh.Policies) != 1 || mesh.Policies[0].Why == nil || mesh.Policies[0].Why.OtherDataPlane == nil || mesh.Policies[0].Why.OtherDataPlane.DataPlane.DataPlane != "istio" {
		t.Errorf("mesh: %+v, policies %+v", mesh.DataPlane, mesh.Policies)
	}
}

func TestNames(t *testing.T) {
	s := loadPolicies(t)
	for _, tt := range []struct{ kind, ns, want string }{
		{KindGateway, "gw", "gw/gw gw/mesh"},
		{KindGateway, "app", ""},
		{KindXAccessPolicy, "gw", "gw/mesh"},
		{KindAuthPolicy, "", "app/route gw/gw-over"},
	} {
		var got []string
		for _, n := range Names(s, tt.kind, tt.ns) {
			got = append(got, n[0]+"/"+n[1])
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("Names(%s, %q) = %v, want %s", tt.kind, tt.ns, got, tt.want)
		}
	}
}
