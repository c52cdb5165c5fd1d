package authpolicy

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agpol/agpol/internal/topology"
)

// identityPolicy is a route policy with one rule per identity kind, as Kuadrant's
// user guides write them, and authorization of each kind.
const identityPolicy = `
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: toys, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: all}
  rules:
    authentication:
      keycloak: {jwt: {issuerUrl: 'https://idp.example.com/realms/x'}, priority: 0}
      app-keys: {apiKey: {selector: {matchLabels: {app: toys}}}, credentials: {authorizationHeader: {prefix: APIKEY}}, priority: 1}
      all-keys: {apiKey: {selector: {matchLabels: {app: toys}}, allNamespaces: true}, credentials: {customHeader: {name: X-Key}}, priority: 2}
      sa: {kubernetesTokenReview: {audiences: [toys]}, priority: 3, overrides: {group: {value: robots}}}
      certs: {x509: {selector: {matchLabels: {ca: "true"}}}, priority: 4}
    authorization:
      admins:
        patternMatching: {patterns: [{selector: auth.identity.groups, operator: incl, value: admin}]}
        when: [{predicate: "has(auth.identity.sub)"}]
      key-owner:
        patternMatching: {patterns: [{predicate: "auth.identity.metadata.annotations['owner'] == 'bob'"}]}
        when: [{predicate: "has(auth.identity.metadata)"}]
      rego:
        opa: {rego: "allow { input.auth.identity.user.username == \"system:serviceaccount:app:robot\" }"}
        when: [{predicate: "has(auth.identity.user)"}]
      robots:
        patternMatching: {patterns: [{selector: auth.identity.group, operator: eq, value: robots}]}
        when: [{predicate: "has(auth.identity.user)"}]
      rbac:
        kubernetesSubjectAccessReview: {user: {selector: auth.identity.CommonName}}
        when: [{predicate: "has(auth.identity.CommonName)"}]
    response:
      unauthorized: {code: 404}
---
apiVersion: v1
kind: Secret
metadata: {name: bob-key, namespace: app, labels: {app: toys}, annotations: {owner: bob}}
stringData: {api_key: IAMBOB}
---
apiVersion: v1
kind: Secret
metadata: {name: alice-key, namespace: kuadrant-system, labels: {app: toys}, annotations: {owner: alice}}
stringData: {api_key: IAMALICE}
---
apiVersion: v1
kind: Secret
metadata: {name: ca, namespace: kuadrant-system, labels: {ca: "true"}}
type: kubernetes.io/tls
data: {tls.crt: Q0VSVA==, tls.key: S0VZ}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: toy-reader}
rules: [{nonResourceURLs: ["/toys*"], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice-reads}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: toy-reader}
subjects: [{kind: User, name: alice}]
`

func TestDecideIdentities(t *testing.T) {
	r := Compute(topology.BuildGraph(load(t, topo+identityPolicy)))
	pr, err := r.ForPrefix("infra/gw", "a", "app/all", "named")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	exp := float64(at.Add(time.Hour).Unix())
	jwt := func(claims map[string]any) *Identity { return &Identity{JWT: &JWTIdentity{Claims: claims}} }
	cases := []struct {
		name    string
		id      *Identity
		method  string
		time    time.Time
		verdict string
		code    int
		// why and rule: the reason's code, found in the outcome's data with the rule it
		// is about (hasWhy)
		why, rule string
	}{
		{"jwt admin", jwt(map[string]any{"sub": "alice", "groups": []any{"admin"}, "exp": exp}), "GET", at, OutcomeAllow, 200, WhyAllowed, "keycloak"},
		{"jwt non-admin: 403, overridden to 404", jwt(map[string]any{"sub": "bob", "groups": []any{"dev"}, "exp": exp}), "GET", at, OutcomeDeny, 404, WhyUnauthorized, "admins"},
		{"jwt without exp: 401", jwt(map[string]any{"sub": "alice", "groups": []any{"admin"}}), "GET", at, OutcomeDeny, 401, WhyAuthnNoExp, "keycloak"},
		{"jwt expired: 401", jwt(map[string]any{"sub": "alice", "exp": float64(at.Add(-time.Hour).Unix())}), "GET", at, OutcomeDeny, 401, WhyAuthnExpired, "keycloak"},
		{"jwt without a time", jwt(map[string]any{"sub": "alice", "exp": exp}), "GET", time.Time{}, OutcomeIndeterminate, 0, WhyAuthnNoTime, "keycloak"},
		{"apiKey in the app's namespace: 401 with app-keys, found by all-keys", &Identity{APIKey: &APIKeyIdentity{Secret: "app/bob-key"}, Rule: "app-keys"}, "GET", at, OutcomeDeny, 401, WhyAuthnKeyOutOfScope, "app-keys"},
		{"apiKey in the app's namespace, any rule", &Identity{APIKey: &APIKeyIdentity{Secret: "app/bob-key"}}, "GET", at, OutcomeAllow, 200, WhyAllowed, "all-keys"},
		{"apiKey in Kuadrant's namespace, owner not bob", &Identity{APIKey: &APIKeyIdentity{Secret: "kuadrant-system/alice-key"}}, "GET", at, OutcomeDeny, 404, WhyUnauthorized, "key-owner"},
		{"apiKey not in the input", &Identity{APIKey: &APIKeyIdentity{Secret: "app/nope"}}, "GET", at, OutcomeIndeterminate, 0, WhyAuthnSecretMissing, "app-keys"},
		{"service account: rego and override", &Identity{Kubernetes: &KubernetesIdentity{Username: "system:serviceaccount:app:robot", Audiences: []string{"toys"}}}, "GET", at, OutcomeAllow, 200, WhyAllowed, "sa"},
		{"service account: rego denies", &Identity{Kubernetes: &KubernetesIdentity{Username: "system:serviceaccount:app:other", Audiences: []string{"toys"}}}, "GET", at, OutcomeDeny, 404, WhyUnauthorized, "rego"},
		{"service account: wrong audience", &Identity{Kubernetes: &KubernetesIdentity{Username: "system:serviceaccount:app:robot", Audiences: []string{"api"}}}, "GET", at, OutcomeDeny, 401, WhyAuthnAudienceDiffers, "sa"},
		{"x509 alice: RBAC allows get", &Identity{X509: &X509Identity{Subject: X509Subject{CommonName: "alice"}}}, "GET", at, OutcomeAllow, 200, WhyAllowed, "certs"},
		{"x509 alice: RBAC denies post", &Identity{X509: &X509Identity{Subject: X509Subject{CommonName: "alice"}}}, "POST", at, OutcomeDeny, 404, WhySARDenied, "rbac"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{Method: tc.method, Host: "api.example.com", Path: "/toys", Headers: map[string]string{}, Identity: tc.id, Time: tc.time}
			ev := Decide(pr.Effective, req, r.Env)
			o := ev.Outcome
			if o == nil {
				t.Fatalf("no outcome; problems %v", ev.Problems)
			}
			if o.Verdict != tc.verdict || o.Code != tc.code || !hasWhy(o.Why, "", tc.why, tc.rule) {
				t.Errorf("got %s %d: %+v\nwant %s %d with %s of %s", o.Verdict, o.Code, o.Why, tc.verdict, tc.code, tc.why, tc.rule)
			}
			if o.Reason != "" || o.Notes != nil {
				t.Errorf("effective wrote %q %q: render writes the sentences", o.Reason, o.Notes)
			}
		})
	}
}

// TestDecideRace: two rules of one priority that both verify the identity and lead to
// different answers are a race in Authorino: indeterminate.
func TestDecideRace(t *testing.T) {
	policy := `
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: race, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: all}
  rules:
    authentication:
      a: {apiKey: {selector: {matchLabels: {app: toys}}, allNamespaces: true}, defaults: {role: {value: admin}}}
      b: {apiKey: {selector: {matchLabels: {app: toys}}, allNamespaces: true}, defaults: {role: {value: guest}}}
    authorization:
      admins: {patternMatching: {patterns: [{selector: auth.identity.role, operator: eq, value: admin}]}}
---
apiVersion: v1
kind: Secret
metadata: {name: k, namespace: app, labels: {app: toys}}
stringData: {api_key: K}
`
	r := Compute(topology.BuildGraph(load(t, topo+policy)))
	pr, err := r.ForPrefix("infra/gw", "a", "app/all", "named")
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Method: "GET", Host: "h", Path: "/", Identity: &Identity{APIKey: &APIKeyIdentity{Secret: "app/k"}}}
	o := Decide(pr.Effective, req, r.Env).Outcome
	if o.Verdict != OutcomeIndeterminate || o.Why.Code != WhyAuthnRace || !reflect.DeepEqual(o.Why.Rules, []string{"a", "b"}) || len(o.Why.Alternatives) != 2 ||
		o.Why.Alternatives[0].Verdict != OutcomeAllow || o.Why.Alternatives[1].Verdict != OutcomeDeny || o.Why.Alternatives[1].Identity != "b" {
		t.Errorf("got %s: %+v", o.Verdict, o.Why)
	}
	req.Identity.Rule = "a"
	if o := Decide(pr.Effective, req, r.Env).Outcome; o.Verdict != OutcomeAllow {
		t.Errorf("with rule a: got %s: %+v", o.Verdict, o.Why)
	}
}

// TestDecideUnknowns: what the request does not give stays unknown: an OPA policy that
// reads the headers, metadata not supplied (supplied, it decides), a SpiceDB rule
// without a decision, a rule name the policy lacks.
func TestDecideUnknowns(t *testing.T) {
	policy := `
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: u, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: all}
  rules:
    authentication:
      anon: {anonymous: {}}
    metadata:
      user-info: {http: {url: "https://idp.example.com/userinfo"}}
    authorization:
      headers:
        opa: {rego: "allow { input.context.request.http.headers[\"x-team\"] == \"toys\" }"}
      email:
        patternMatching: {patterns: [{predicate: "auth.metadata['user-info'].email.endsWith('@example.com')"}]}
      zed:
        spicedb: {endpoint: spicedb:50051}
`
	r := Compute(topology.BuildGraph(load(t, topo+policy)))
	pr, err := r.ForPrefix("infra/gw", "a", "app/all", "named")
	if err != nil {
		t.Fatal(err)
	}
	id := &Identity{JWT: &JWTIdentity{Claims: map[string]any{"sub": "a"}}}
	cases := []struct {
		name    string
		req     Request
		verdict string
		// why and rule: the reason's code and the rule it is about (hasWhy)
		why, rule string
	}{
		{"nothing given", Request{Method: "GET", Path: "/", Identity: id}, OutcomeIndeterminate, WhyOPAInputUnknown, "headers"},
		{"headers and metadata given, no SpiceDB answer", Request{Method: "GET", Path: "/", Headers: map[string]string{"x-team": "toys"}, Identity: id,
			Metadata: map[string]any{"user-info": map[string]any{"email": "a@example.com"}}}, OutcomeIndeterminate, WhySpiceDB, "zed"},
		{"everything given", Request{Method: "GET", Path: "/", Headers: map[string]string{"x-team": "toys"}, Identity: id,
			Metadata: map[string]any{"user-info": map[string]any{"email": "a@example.com"}}, Decisions: map[string]string{"zed": "allow"}}, OutcomeAllow, WhyAllowed, "anon"},
		{"wrong team", Request{Method: "GET", Path: "/", Headers: map[string]string{"x-team": "cars"}, Identity: id,
			Metadata: map[string]any{"user-info": map[string]any{"email": "a@example.com"}}, Decisions: map[string]string{"zed": "allow"}}, OutcomeDeny, WhyUnauthorized, "headers"},
		{"metadata says another domain", Request{Method: "GET", Path: "/", Headers: map[string]string{"x-team": "toys"}, Identity: id,
			Metadata: map[string]any{"user-info": map[string]any{"email": "a@evil.org"}}}, OutcomeDeny, WhyUnauthorized, "email"},
		{"a rule the policy lacks", Request{Method: "GET", Path: "/", Identity: &Identity{Rule: "nope", JWT: id.JWT}}, OutcomeIndeterminate, WhyIdentityRuleMissing, "nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Decide(pr.Effective, tc.req, r.Env).Outcome
			if o == nil || o.Verdict != tc.verdict || !hasWhy(o.Why, "", tc.why, tc.rule) {
				t.Errorf("got %+v\nwant %s with %s of %s", o, tc.verdict, tc.why, tc.rule)
			}
		})
	}
}

// TestDecideAssumedForm: two apiKey rules read the Authorization header with different
// prefixes; an identity that names no rule is decided as presented to each rule in its
// own form, and the outcome says so (a request carries one Authorization header).
func TestDecideAssumedForm(t *testing.T) {
	policy := `
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: forms, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: all}
  rules:
    authentication:
      a1: {apiKey: {selector: {matchLabels: {app: toys}}, allNamespaces: true}}
      a2: {apiKey: {selector: {matchLabels: {app: other}}, allNamespaces: true}, credentials: {authorizationHeader: {prefix: APIKEY}}}
      a3: {apiKey: {selector: {matchLabels: {app: toys}}, allNamespaces: true}, credentials: {customHeader: {name: X-Key}}}
---
apiVersion: v1
kind: Secret
metadata: {name: k, namespace: app, labels: {app: toys}}
stringData: {api_key: K}
`
	r := Compute(topology.BuildGraph(load(t, topo+policy)))
	pr, err := r.ForPrefix("infra/gw", "a", "app/all", "named")
	if err != nil {
		t.Fatal(err)
	}
	forms := []Why{{Code: NoteSameAnswer, Rules: []string{"a1", "a3"}}, {Code: NoteAssumedForm, Forms: []CredentialForm{{Rule: "a1", Prefix: "Bearer"}, {Rule: "a2", Prefix: "APIKEY"}}, Identity: "a1"}}
	for _, tc := range []struct {
		name, rule string
		verdict    string
		notes      []Why
	}{
		{"no rule named: the forms, and a1's decides", "", OutcomeAllow, forms},
		{"a1 named", "a1", OutcomeAllow, nil},
		{"a2 named", "a2", OutcomeDeny, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{Method: "GET", Host: "h", Path: "/", Identity: &Identity{APIKey: &APIKeyIdentity{Secret: "app/k"}, Rule: tc.rule}}
			o := Decide(pr.Effective, req, r.Env).Outcome
			if o.Verdict != tc.verdict || !reflect.DeepEqual(o.NoteWhys, tc.notes) {
				t.Errorf("got %s (%+v), notes %+v; want %s with %+v", o.Verdict, o.Why, o.NoteWhys, tc.verdict, tc.notes)
			}
		})
	}
}

// TestDecideMetadataWhen: a metadata rule whose `when` does not hold is skipped, and
// auth.metadata.NAME is absent whatever the request says it would fetch.
func TestDecideMetadataWhen(t *testing.T) {
	policy := `
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: m, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: all}
  rules:
    authentication:
      anon: {anonymous: {}}
    metadata:
      m2: {http: {url: "http://metadata.example.com/m2"}, when: [{predicate: "request.method == 'POST'"}]}
    authorization:
      gold: {patternMatching: {patterns: [{predicate: "has(auth.metadata.m2) && auth.metadata.m2.tier == 'gold'"}]}}
`
	r := Compute(topology.BuildGraph(load(t, topo+policy)))
	pr, err := r.ForPrefix("infra/gw", "a", "app/all", "named")
	if err != nil {
		t.Fatal(err)
	}
	id := &Identity{Kubernetes: &KubernetesIdentity{Username: "bob"}}
	gold := map[string]any{"m2": map[string]any{"tier": "gold"}}
	for _, tc := range []struct{ method, verdict string }{{"POST", OutcomeAllow}, {"GET", OutcomeDeny}} {
		o := Decide(pr.Effective, Request{Method: tc.method, Host: "h", Path: "/", Identity: id, Metadata: gold}, r.Env).Outcome
		if o.Verdict != tc.verdict {
			t.Errorf("%s: got %s (%+v), want %s", tc.method, o.Verdict, o.Why, tc.verdict)
		}
	}
}

// hasWhy reports whether w, or a reason nested in it, has the code and is about rule:
// the rule it names (Rule, Identity, Input) or, in a list of rules' results, the rule
// whose result it is (about).
func hasWhy(w Why, about, code, rule string) bool {
	if w.Code == code && slices.Contains([]string{about, w.Rule, w.Identity, w.Input}, rule) {
		return true
	}
	for _, n := range []*Why{w.Authn, w.Because} {
		if n != nil && hasWhy(*n, about, code, rule) {
			return true
		}
	}
	if w.Because != nil && w.Code == WhyUnauthorized && hasWhy(*w.Because, w.Rule, code, rule) {
		return true
	}
	for _, p := range w.Parts {
		if hasWhy(p.Why, p.Rule, code, rule) {
			return true
		}
	}
	for _, o := range w.Alternatives {
		if hasWhy(o.Why, "", code, rule) {
			return true
		}
	}
	return false
}
