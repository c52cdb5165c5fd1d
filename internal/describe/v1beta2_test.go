package describe

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
)

const v1beta2Fixtures = "../../testdata/authpolicy/v1beta2"

func loadV1beta2Fixture(t *testing.T, dir string) *snapshot.Snapshot {
	t.Helper()
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{filepath.Join(v1beta2Fixtures, dir, "objects.yaml")}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func describeV1beta2(t *testing.T, s *snapshot.Snapshot, kind, ref string) *View {
	t.Helper()
	ns, name, _ := strings.Cut(ref, "/")
	sem, err := effective.Preset(effective.PresetReference)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(model.New(s), sem, "cluster.local", kind, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestV1beta2FixturesEnforcement: describe authpolicy gives every policy of the Kuadrant
// Auth doc's examples the enforcement the doc states (expect.yaml), in the v1beta2 view.
func TestV1beta2FixturesEnforcement(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(v1beta2Fixtures, "*", "expect.yaml"))
	if err != nil || len(dirs) < 5 {
		t.Fatalf("fixtures: %v %v", dirs, err)
	}
	for _, e := range dirs {
		dir := filepath.Base(filepath.Dir(e))
		t.Run(dir, func(t *testing.T) {
			raw, err := os.ReadFile(e)
			if err != nil {
				t.Fatal(err)
			}
			var want struct {
				Policies map[string]string `json:"policies"`
			}
			if err := sigsyaml.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			s := loadV1beta2Fixture(t, dir)
			for ref, enf := range want.Policies {
				d := describeV1beta2(t, s, KindAuthPolicy, ref)
				v := d.AuthPolicyV1beta2
				if v == nil || d.AuthPolicyStatus != nil {
					t.Fatalf("%s: no v1beta2 view (%+v)", ref, d)
				}
				if v.Enforcement != enf {
					t.Errorf("%s: enforcement %s, the doc says %s (%+v)", ref, v.Enforcement, enf, v.NotEnforced)
				}
				if enf != authpolicy.Enforced && len(v.NotEnforced) == 0 {
					t.Errorf("%s: %s with reasons %+v", ref, v.Enforcement, v.NotEnforced)
				}
				if !strings.Contains(d.Source, "objects.yaml:") || d.Semantics != V1beta2Semantics {
					t.Errorf("%s: source %q semantics %q", ref, d.Source, d.Semantics)
				}
				for _, r := range v.Rules {
					if !strings.Contains(r.Source, "objects.yaml:") {
						t.Errorf("%s: rule %s without file:line: %q", ref, r.Key, r.Source)
					}
				}
			}
		})
	}
}

func whyReasons(ws []V1beta2Why) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Reason+" by "+w.By)
	}
	return out
}

func ruleStrings(rs []V1beta2Rule) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Route+"#"+r.Name+"@"+filepath.Base(r.Source))
	}
	return out
}

// TestV1beta2PolicyView checks each reason a v1beta2 policy is not enforced (the
// operator's rules: kuadrant-operator v0.6.1, see authpolicy.ComputeV1beta2), what its
// routeSelectors select with file:line, what a Gateway policy covers, and its v1 form.
func TestV1beta2PolicyView(t *testing.T) {
	tests := []struct {
		dir, policy string
		why         []string // Reason by By, in order
		covers      []string // route#rule@file:line
	}{
		{"limits", "app/first", nil, []string{"app/route-a#rule-1@objects.yaml:18"}},
		// targetref_reconciler.go:L157-L181: a second policy on the target fails; its
		// AuthConfig still loses the host to the first (created earlier).
		{"limits", "app/second", []string{"SecondPolicyOnTarget by app/first", "HostnameClaimed by app/first"}, []string{"app/route-a#rule-1@objects.yaml:18"}},
		// Authorino's index: the first AuthConfig holding a host keeps it.
		{"limits", "app/same-host", []string{"HostnameClaimed by app/first"}, []string{"app/route-a2#rule-1@objects.yaml:27"}},
		{"limits", "app/selects-nothing", []string{"RouteSelectorsSelectNothing by "}, nil},
		// authpolicy_authconfig.go:L63-L99: the Gateway policy covers the routes without
		// their own policy.
		{"gateway-and-routes", "infra/policy-g", []string{"GatewayDefaultOverridden by app/policy-a", "GatewayDefaultOverridden by app/policy-b", "GatewayDefaultOverridden by app/policy-w"}, []string{"app/route-other#rule-1@objects.yaml:89"}},
		{"target-httproute", "app/my-route-auth", nil, []string{"app/toystore#rule-2@objects.yaml:18"}},
		{"target-gateway", "infra/my-gw-auth", nil, []string{"app/toystore#rule-1@objects.yaml:16"}},
	}
	for _, tc := range tests {
		t.Run(tc.dir+"/"+tc.policy, func(t *testing.T) {
			v := describeV1beta2(t, loadV1beta2Fixture(t, tc.dir), KindAuthPolicy, tc.policy).AuthPolicyV1beta2
			if got := whyReasons(v.NotEnforced); !slices.Equal(got, tc.why) {
				t.Errorf("why = %q, want %q", got, tc.why)
			}
			if got := ruleStrings(v.Covers); !slices.Equal(got, tc.covers) {
				t.Errorf("covers = %q, want %q", got, tc.covers)
			}
			if v.V1Form == nil || len(v.V1Form.Targets) == 0 {
				t.Errorf("no v1 form: %q", v.NoV1Form)
			}
		})
	}

	// routeSelectors: what each selector selects, with file:line, and the v1 form.
	v := describeV1beta2(t, loadV1beta2Fixture(t, "target-httproute"), KindAuthPolicy, "app/my-route-auth").AuthPolicyV1beta2
	if len(v.RouteSelectors) != 1 || v.RouteSelectors[0].Field != "spec.routeSelectors" || len(v.RouteSelectors[0].Selectors) != 1 {
		t.Fatalf("routeSelectors = %+v", v.RouteSelectors)
	}
	sel := v.RouteSelectors[0].Selectors[0]
	if got := ruleStrings(sel.Selects); !slices.Equal(got, []string{"app/toystore#rule-2@objects.yaml:18"}) || !strings.HasSuffix(sel.Source, "objects.yaml:31") {
		t.Errorf("selector selects %q at %s", got, sel.Source)
	}
	if tg := v.V1Form.Targets; len(tg) != 1 || tg[0].SectionName != "rule-2" || len(v.V1Form.RuleNames) != 1 {
		t.Errorf("v1 form = %+v", v.V1Form)
	}
	v = describeV1beta2(t, loadV1beta2Fixture(t, "limits"), KindAuthPolicy, "app/selects-nothing").AuthPolicyV1beta2
	if l := v.RouteSelectors[0]; l.Miss == nil || l.SelectsNothing != "" || len(l.Selectors[0].Selects) != 0 {
		t.Errorf("selects-nothing list = %+v", l)
	}
}

// TestV1beta2GatewayFullyOverridden: a Gateway policy whose every route has a policy of
// its own builds no AuthConfig (KO61 controllers/authpolicy_authconfig.go:L63-L99).
func TestV1beta2GatewayFullyOverridden(t *testing.T) {
	objs := `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: istio
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: "*.com", allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  hostnames: [r.example.com]
  rules:
  - backendRefs: [{name: s, port: 80}]
---
apiVersion: kuadrant.io/v1beta2
kind: AuthPolicy
metadata: {name: own, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}
  rules: {authentication: {k: {anonymous: {}}}}
---
apiVersion: kuadrant.io/v1beta2
kind: AuthPolicy
metadata: {name: gw, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  rules: {authentication: {k: {anonymous: {}}}}
`
	f := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(f, []byte(objs), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	v := describeV1beta2(t, s, KindAuthPolicy, "infra/gw").AuthPolicyV1beta2
	if v.Enforcement != authpolicy.NotEnforced || len(v.Covers) != 0 {
		t.Errorf("enforcement %s covers %v", v.Enforcement, v.Covers)
	}
	if got := whyReasons(v.NotEnforced); !slices.Equal(got, []string{"GatewayDefaultOverridden by app/own"}) {
		t.Errorf("why = %q", got)
	}
}

// TestV1beta2OnTargets: describe gateway and httproute list the v1beta2 policies bearing
// on them (the route's own, else the Gateway's covering it), and no v1 fold.
func TestV1beta2OnTargets(t *testing.T) {
	s := loadV1beta2Fixture(t, "gateway-and-routes")
	tests := []struct {
		kind, ref string
		want      []string // policy role
	}{
		{KindHTTPRoute, "app/route-a", []string{"app/policy-a own"}},
		{KindHTTPRoute, "app/route-other", []string{"infra/policy-g gateway"}},
		{KindHTTPRoute, "app/route-net", nil},
		{KindGateway, "infra/gw", []string{"infra/policy-g own"}},
		{KindGateway, "infra/net", nil},
	}
	for _, tc := range tests {
		d := describeV1beta2(t, s, tc.kind, tc.ref)
		var got []string
		for _, v := range d.V1beta2AuthPolicies {
			got = append(got, v.Policy+" "+v.Role)
			if v.V1Form != nil {
				t.Errorf("%s %s: v1 form in a target's view", tc.kind, tc.ref)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: %q, want %q", tc.kind, tc.ref, got, tc.want)
		}
		if len(d.AuthPolicy) != 0 {
			t.Errorf("%s %s: a kuadrant.io/v1 fold without v1 policies: %d paths", tc.kind, tc.ref, len(d.AuthPolicy))
		}
	}
}
