package authpolicy

import (
	"reflect"
	"strings"
	"testing"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
	"github.com/agpol/agpol/internal/topology"
)

const reqPolicies = `
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: gw, namespace: infra, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  defaults:
    strategy: merge
    patterns:
      writers: {allOf: [{selector: request.method, operator: neq, value: GET}]}
    when:
    - predicate: request.host.endsWith('.example.com')
    - predicate: "!request.url_path.startsWith('/health')"
    rules:
      authentication:
        idp: {jwt: {issuerUrl: 'https://idp.example.com'}}
        keys:
          apiKey: {selector: {matchLabels: {app: toys}}, allNamespaces: true}
          credentials: {customHeader: {name: X-API-Key}}
          when: [{selector: context.request.http.headers.x-api-key, operator: neq, value: ""}]
        sa: {kubernetesTokenReview: {audiences: [toys]}, credentials: {queryString: {name: token}}}
        certs: {x509: {selector: {matchLabels: {ca: "true"}}, source: {xfccHeader: x-forwarded-client-cert}}}
        anon: {anonymous: {}, when: [{patternRef: writers}], priority: 1}
      authorization:
        admins: {patternMatching: {patterns: [{predicate: "auth.identity.group == 'admins'"}]}}
        gets-only: {patternMatching: {patterns: [{selector: request.method, operator: eq, value: GET}]}}
        rbac: {kubernetesSubjectAccessReview: {user: {selector: auth.identity.sub}}}
        posts: {opa: {rego: "allow = true"}, when: [{any: [{predicate: "request.method == 'POST'"}, {predicate: "auth.identity.x == 1"}]}]}
`

func TestRequirements(t *testing.T) {
	r := Compute(topology.BuildGraph(load(t, topo+reqPolicies)))
	pr, err := r.ForPrefix("infra/gw", "a", "app/all", "named")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		req     Request
		applies Tri
		runs    map[string]Tri // rule → Runs
		passes  map[string]Tri // authorization rule → Passes
		offline string         // substring of Offline
	}{
		{"GET on the api host", Request{Method: "GET", Host: "api.example.com", Path: "/toys?id=1", Headers: map[string]string{"X-Api-Key": "k"}}, True,
			map[string]Tri{"keys": True, "anon": False, "idp": True, "posts": Unknown}, // any(false, unknown identity) is unknown
			map[string]Tri{"gets-only": True, "admins": Unknown, "rbac": Unknown}, "auth.identity.group"},
		{"health checks skip the policy", Request{Method: "GET", Host: "api.example.com", Path: "/healthz"}, False, nil, nil, ""},
		{"other host skips the policy", Request{Method: "GET", Host: "api.other.org", Path: "/"}, False, nil, nil, ""},
		{"unknown host is unknown, never guessed", Request{Method: "POST", Path: "/toys"}, Unknown,
			map[string]Tri{"keys": Unknown, "anon": True, "posts": True},
			map[string]Tri{"gets-only": False}, "request.host"},
		{"a POST with an unknown identity", Request{Method: "PUT", Host: "a.example.com", Path: "/x", Headers: map[string]string{}}, True,
			map[string]Tri{"keys": False, "posts": Unknown}, nil, "auth.identity.x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := Requirements(pr.Effective, c.req)
			if ev.Applies != c.applies {
				t.Errorf("applies = %s, want %s (%+v)", ev.Applies, c.applies, ev.Predicates)
			}
			all := append(append([]Requirement{}, ev.Authentication...), ev.Authorization...)
			find := func(name string) *Requirement {
				for i := range all {
					if all[i].Name == name {
						return &all[i]
					}
				}
				t.Fatalf("no requirement %s", name)
				return nil
			}
			for n, want := range c.runs {
				if got := find(n).Runs; got != want {
					t.Errorf("%s runs = %s, want %s (%+v)", n, got, want, find(n).Conditions)
				}
			}
			for n, want := range c.passes {
				if got := find(n).Passes; got != want {
					t.Errorf("%s passes = %s, want %s", n, got, want)
				}
			}
			if c.offline != "" && !strings.Contains(strings.Join(ev.Offline, ","), c.offline) {
				t.Errorf("offline = %v, want it to name %s", ev.Offline, c.offline)
			}
			if len(ev.Problems) > 0 {
				t.Errorf("problems: %v", ev.Problems)
			}
		})
	}

	ev := Requirements(pr.Effective, Request{})
	wantNeed := map[string]struct {
		need  Need
		reads *CredentialSource
	}{
		"idp":   {Need{Code: NeedJWTIssuer, URL: "https://idp.example.com"}, &CredentialSource{Code: CredentialAuthorization, Name: "Bearer"}},
		"keys":  {Need{Code: NeedAPIKey, Selector: "app=toys", AllNamespaces: true}, &CredentialSource{Code: CredentialHeader, Name: "X-API-Key"}},
		"sa":    {Need{Code: NeedTokenReview, Audiences: []string{"toys"}}, &CredentialSource{Code: CredentialQuery, Name: "token"}},
		"certs": {Need{Code: NeedX509, Selector: "ca=true"}, &CredentialSource{Code: CredentialXFCC, Name: "x-forwarded-client-cert"}},
		"anon":  {Need{Code: NeedAnonymous}, nil},
	}
	for _, a := range ev.Authentication {
		w, ok := wantNeed[a.Name]
		if !ok {
			t.Errorf("unexpected authentication %s", a.Name)
			continue
		}
		if !reflect.DeepEqual(a.Need, w.need) || !reflect.DeepEqual(a.Reads, w.reads) {
			t.Errorf("%s: need %+v via %+v, want %+v via %+v", a.Name, a.Need, a.Reads, w.need, w.reads)
		}
		if a.Present != "" || a.Credential != "" {
			t.Errorf("%s: sentences written below render: %q, %q", a.Name, a.Present, a.Credential)
		}
	}
	if last := ev.Authentication[len(ev.Authentication)-1]; last.Name != "anon" {
		t.Errorf("priority 1 rule should come last, got %s", last.Name)
	}
	if got := Requirements(nil, Request{}); got.Applies != False {
		t.Errorf("no policy: applies = %s, want false", got.Applies)
	}
}

func TestPredicateInvalidCEL(t *testing.T) {
	c := newConditionEvaluator(&Effective{}, Request{Method: "GET"})
	ch := c.predicate("request.method ==")
	if ch.Result != Unknown || len(ch.Why) != 1 || ch.Why[0].Code != CheckInvalidCEL || !strings.Contains(ch.Why[0].Err, "Syntax error") {
		t.Errorf("invalid CEL = %+v", ch)
	}
	if ch := c.predicate("request.method"); ch.Result != Unknown || len(ch.Why) != 1 || ch.Why[0].Code != CheckNotBool || ch.Why[0].Value != "GET" {
		t.Errorf("non-bool = %+v", ch)
	}
}

// TestPredicateCompiledOnce: a predicate is compiled once and its program evaluated for
// each request on its own variables (the memo holds programs, not results), invalid
// expressions included.
func TestPredicateCompiledOnce(t *testing.T) {
	const expr = "request.method == 'POST' && request.host.endsWith('.example.com')"
	first, second := compilePredicate(expr), compilePredicate(expr)
	if first != second {
		t.Fatal("the predicate was compiled twice")
	}
	for _, tt := range []struct {
		req  Request
		want Tri
	}{
		{Request{Method: "POST", Host: "a.example.com"}, True},
		{Request{Method: "GET", Host: "a.example.com"}, False},
		{Request{Method: "POST", Host: "a.example.org"}, False},
		{Request{Method: "POST"}, Unknown}, // host not supplied
	} {
		if ch := newConditionEvaluator(&Effective{}, tt.req).predicate(expr); ch.Result != tt.want {
			t.Errorf("%+v: %s (%+v), want %s", tt.req, ch.Result, ch.Why, tt.want)
		}
	}
	bad := compilePredicate("request.method ==")
	if bad.prg != nil || bad != compilePredicate("request.method ==") || !strings.Contains(bad.reason, "invalid CEL") {
		t.Errorf("invalid predicate = %+v", bad)
	}
}

// A CEL predicate that fails on a known identity does not hold, as in Authorino; in an
// `any`, Authorino stops at the error (pkg/jsonexp/expressions.go:136-151).
func TestPredicateErrorOnKnownAuth(t *testing.T) {
	claims := map[string]any{"identity": map[string]any{"sub": "alice"}}
	missing := kuadrantv1.PatternExpressionOrRef{Predicate: "auth.identity.groups[0] == 'admin'"} // no such key
	holds := kuadrantv1.PatternExpressionOrRef{Predicate: "auth.identity.sub == 'alice'"}
	fails := kuadrantv1.PatternExpressionOrRef{Predicate: "auth.identity.sub == 'bob'"}
	unknown := kuadrantv1.PatternExpressionOrRef{Predicate: "request.headers['x'] == 'y'"} // headers not supplied
	any := func(ps ...kuadrantv1.PatternExpressionOrRef) kuadrantv1.PatternExpressionOrRef {
		return kuadrantv1.PatternExpressionOrRef{Any: ps}
	}
	all := func(ps ...kuadrantv1.PatternExpressionOrRef) kuadrantv1.PatternExpressionOrRef {
		return kuadrantv1.PatternExpressionOrRef{All: ps}
	}
	for _, tt := range []struct {
		name string
		p    kuadrantv1.PatternExpressionOrRef
		want Tri
	}{
		{"error", missing, False},
		{"any(error, true)", any(missing, holds), False},
		{"any(true, error)", any(holds, missing), True},
		{"any(false, error, true)", any(fails, missing, holds), False},
		{"any(unknown, error)", any(unknown, missing), Unknown},
		{"all(true, error)", all(holds, missing), False},
		{"all(false, error)", all(fails, missing), False},
		{"any(all(false, error), true)", any(all(fails, missing), holds), True},
		{"any(all(true, error), true)", any(all(holds, missing), holds), False},
	} {
		c := newConditionEvaluator(&Effective{}, Request{Method: "GET"}).withAuth(claims, nil)
		if ch := c.condition(tt.p, 0); ch.Result != tt.want {
			t.Errorf("%s: %s (%+v), want %s", tt.name, ch.Result, ch.Why, tt.want)
		}
	}
	// Without a known identity, the same predicate stays unknown.
	if ch := newConditionEvaluator(&Effective{}, Request{Method: "GET"}).condition(missing, 0); ch.Result != Unknown {
		t.Errorf("no identity: %s (%+v), want unknown", ch.Result, ch.Why)
	}
}

// TestPredicateUnnamedAttribute: an unknown predicate whose attributes agpol cannot name
// says so as data (AttrUnnamed), in its Why and the evaluation's Offline.
func TestPredicateUnnamedAttribute(t *testing.T) {
	c := newConditionEvaluator(&Effective{}, Request{})
	ch := c.predicate(`request["method"] == "GET"`)
	if ch.Result != Unknown || len(ch.Why) != 1 || ch.Why[0].Code != CheckDepends || len(ch.Why[0].Attrs) != 1 || ch.Why[0].Attrs[0] != AttrUnnamed {
		t.Errorf("unnamed attribute = %+v", ch)
	}
	if off := c.offline(); len(off) != 1 || off[0] != AttrUnnamed {
		t.Errorf("offline = %q", off)
	}
}
