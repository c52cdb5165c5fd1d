package v1

import (
	"reflect"
	"testing"
)

func TestParseAuthentication(t *testing.T) {
	cases := []struct {
		name    string
		raw     string
		methods []string
		check   func(*AuthenticationSpec) bool
	}{
		{"api key with custom header and rule-level when", `{"apiKey":{"selector":{"matchLabels":{"app":"toystore"}},"allNamespaces":true},"credentials":{"customHeader":{"name":"X-Key"}},"priority":2,"metrics":true,"when":[{"predicate":"request.method == 'GET'"},{"patternRef":"admins"}],"cache":{"key":{"selector":"context.request.http.headers.x-key"},"ttl":30}}`,
			[]string{"apiKey"}, func(a *AuthenticationSpec) bool {
				return a.APIKey.AllNamespaces && a.APIKey.Selector.MatchLabels["app"] == "toystore" && a.Credentials.CustomHeader.Name == "X-Key" &&
					a.Priority == 2 && a.Metrics && len(a.Conditions) == 2 && a.Conditions[1].PatternRef == "admins" && a.Cache.TTL == 30
			}},
		{"jwt", `{"jwt":{"issuerUrl":"https://idp"}}`, []string{"jwt"}, func(a *AuthenticationSpec) bool { return a.JWT.IssuerURL == "https://idp" }},
		{"token review", `{"kubernetesTokenReview":{"audiences":["a","b"]},"credentials":{"queryString":{"name":"t"}}}`, []string{"kubernetesTokenReview"},
			func(a *AuthenticationSpec) bool {
				return len(a.KubernetesTokenReview.Audiences) == 2 && a.Credentials.QueryString.Name == "t"
			}},
		{"x509 from xfcc", `{"x509":{"selector":{},"source":{"xfccHeader":"x-forwarded-client-cert"}}}`, []string{"x509"},
			func(a *AuthenticationSpec) bool { return a.X509.Source.XFCCHeader == "x-forwarded-client-cert" }},
		{"oauth2, plain, anonymous, cookie", `{"oauth2Introspection":{"endpoint":"https://i","credentialsRef":{"name":"s"}},"plain":{"selector":"x"},"anonymous":{},"credentials":{"cookie":{"name":"c"}}}`,
			[]string{"oauth2Introspection", "plain", "anonymous"}, func(a *AuthenticationSpec) bool { return a.Credentials.Cookie.Name == "c" }},
		// upstream toystore example: a mis-indented credentials block becomes a rule without a method
		{"no method", `{"authorizationHeader":{"prefix":"APIKEY"}}`, nil, func(a *AuthenticationSpec) bool { return true }},
	}
	for _, c := range cases {
		a, err := ParseAuthentication([]byte(c.raw))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := a.AuthenticationMethods(); !reflect.DeepEqual(got, c.methods) {
			t.Errorf("%s: methods %v, want %v", c.name, got, c.methods)
		}
		if !c.check(a) {
			t.Errorf("%s: decoded %+v", c.name, a)
		}
	}
	if _, err := ParseAuthentication([]byte(`{"priority":"high"}`)); err == nil {
		t.Error("a string priority should not decode")
	}
	az, err := ParseAuthorization([]byte(`{"patternMatching":{"patterns":[{"selector":"auth.identity.group","operator":"eq","value":"admins"},{"any":[{"predicate":"true"}]}]}}`))
	if err != nil || len(az.PatternMatching.Patterns) != 2 || az.PatternMatching.Patterns[0].Operator != "eq" || len(az.PatternMatching.Patterns[1].Any) != 1 {
		t.Errorf("authorization = %+v, %v", az, err)
	}
}
