package whatif

import (
	"strings"
	"testing"
	"time"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/explain"
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
	m := Personas(s, ps, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
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
}
