package whatif

import (
	"strings"
	"testing"
	"time"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
)

func TestPersonas(t *testing.T) {
	objs, pos, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: istio
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: toys, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: toys, port: 80}]}]
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: toys, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: toys}
  rules:
    authentication:
      idp: {jwt: {issuerUrl: https://idp.example.com}}
    authorization:
      admins: {patternMatching: {patterns: [{selector: auth.identity.groups, operator: incl, value: admin}]}}
`)})
	if err != nil {
		t.Fatal(err)
	}
	cluster.DefaultNamespace(objs, "default")
	s, err := cluster.Build(objs, pos, "files")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := explain.ParsePersonaFile("p.yaml", []byte(`personas:
- name: alice
  identity: {jwt: {claims: {sub: alice, groups: [admin], exp: 1900000000}}}
- name: bob
  identity: {jwt: {claims: {sub: bob, groups: [dev], exp: 1900000000}}}
- name: carol
  identity: {jwt: {claims: {sub: carol, groups: [admin]}}}
`), "default")
	if err != nil {
		t.Fatal(err)
	}
	m := Personas(model.New(s), ps, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	if len(m.Rows) != 1 {
		t.Fatalf("rows %+v", m.Rows)
	}
	var got []string
	for _, c := range m.Rows[0].Cells {
		got = append(got, c.Persona+"="+c.Verdict)
	}
	want := "alice=allow bob=deny carol=deny"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
	if c := m.Rows[0].Cells[2]; c.Code != 401 || m.Rows[0].Cells[1].Code != 403 {
		t.Errorf("codes %d %d", m.Rows[0].Cells[1].Code, c.Code)
	}
	if m.Rows[0].Cells[0].Verdict != authpolicy.OutcomeAllow {
		t.Error("alice")
	}
	if r := m.Rows[0]; r.Gateway != "infra/gw" || r.Route != "app/toys" || strings.Join(r.Backends, " ") != "app/toys" {
		t.Errorf("row gateway %q route %q backends %v", r.Gateway, r.Route, r.Backends)
	}

	// who-can and can-i: the filter keeps the paths through a Gateway to a backend;
	// a persona's answer is allow when some path allows.
	for _, f := range []struct {
		filter PersonaFilter
		rows   int
	}{{PersonaFilter{}, 1}, {PersonaFilter{Gateway: "infra/gw", Backend: "app/toys"}, 1}, {PersonaFilter{Gateway: "infra/other"}, 0}, {PersonaFilter{Backend: "app/nope"}, 0}} {
		if got := len(m.Filter(f.filter).Rows); got != f.rows {
			t.Errorf("Filter(%+v): %d rows, want %d", f.filter, got, f.rows)
		}
	}
	for name, want := range map[string]string{"alice": "allow", "bob": "deny", "carol": "deny"} {
		a, ok := m.Answer(name)
		if !ok || a.Verdict != want || len(a.Paths) != 1 {
			t.Errorf("Answer(%s) = %+v, want %s on one path", name, a, want)
		}
	}
	if _, ok := m.Answer("dave"); ok {
		t.Error("Answer of a persona not in the file")
	}
	noTime := Personas(model.New(s), ps, time.Time{})
	if a, _ := noTime.Answer("alice"); a.Verdict != authpolicy.OutcomeIndeterminate {
		t.Errorf("alice without a time: %s, want indeterminate (exp not decided)", a.Verdict)
	}
}
