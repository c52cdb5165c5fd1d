package explain

import (
	"strings"
	"testing"
)

func TestRequestFileIdentity(t *testing.T) {
	rf, err := ParseRequestFile("r.yaml", []byte(`requests:
- name: alice
  identity:
    jwt: {claims: {sub: alice, groups: [admin], exp: 1800000000}}
    rule: keycloak
  metadata: {user-info: {email: a@example.com}}
  decisions: {spicedb: allow}
- identity: {apiKey: {secret: bob-key}}
- identity: {kubernetes: {username: "system:serviceaccount:ns:sa", groups: [g], audiences: [a]}}
- identity: {x509: {subject: {commonName: c, organization: acme}}}
`), "app")
	if err != nil {
		t.Fatal(err)
	}
	c := rf.Requests[0].Credentials
	if c.Identity.Rule != "keycloak" || c.Identity.JWT.Claims["exp"] != float64(1800000000) || c.Metadata["user-info"].(map[string]any)["email"] != "a@example.com" || c.Decisions["spicedb"] != AnswerAllow {
		t.Errorf("first request: %+v", c)
	}
	if s := rf.Requests[1].Credentials.Identity.APIKey.Secret; s != "app/bob-key" {
		t.Errorf("apiKey secret %q, want the default namespace", s)
	}
	if k := rf.Requests[2].Credentials.Identity.Kubernetes; k.Username != "system:serviceaccount:ns:sa" || k.Groups[0] != "g" {
		t.Errorf("kubernetes %+v", k)
	}
	if x := rf.Requests[3].Credentials.Identity.X509; x.Subject.Organization[0] != "acme" {
		t.Errorf("x509 %+v", x)
	}
}

func TestRequestFileIdentityErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"requests:\n- identity: {}\n", "r.yaml:2: identity needs exactly one of"},
		{"requests:\n- identity:\n    jwt: {claims: [a]}\n", "r.yaml:3: claims must be a mapping"},
		{"requests:\n- identity:\n    oidc: {}\n", `r.yaml:3: unknown field "oidc"`},
		{"requests:\n- decisions: {a: maybe}\n", `r.yaml:2: invalid authorizer answer "maybe"`},
		{"requests:\n- identity: {kubernetes: {groups: [g]}}\n", "r.yaml:2: identity.kubernetes needs a username"},
	} {
		_, err := ParseRequestFile("r.yaml", []byte(tc.src), "app")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestPersonaFile(t *testing.T) {
	ps, err := ParsePersonaFile("p.yaml", []byte("personas:\n- name: alice\n  identity: {jwt: {claims: {sub: alice}}}\n- name: bob\n  identity: {apiKey: {secret: ns/bob}}\n"), "default")
	if err != nil || len(ps) != 2 || ps[1].Identity.APIKey.Secret != "ns/bob" {
		t.Fatalf("%v %+v", err, ps)
	}
	if _, err := ParsePersonaFile("p.yaml", []byte("personas:\n- name: a\n  identity: {apiKey: {secret: ns/a}}\n- name: a\n  identity: {apiKey: {secret: ns/a}}\n"), "default"); err == nil || !strings.Contains(err.Error(), "p.yaml:4: duplicate persona") {
		t.Errorf("duplicate: %v", err)
	}
}
