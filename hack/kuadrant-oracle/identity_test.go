package main

import (
	"testing"

	authorinov1beta3 "github.com/kuadrant/authorino/api/v1beta3"
)

// TestAuthorizationHeaderClash: a request carries one Authorization header, so rules
// reading it with different prefixes cannot all be given the credential.
func TestAuthorizationHeaderClash(t *testing.T) {
	bearer := authorinov1beta3.Credentials{}
	apikey := authorinov1beta3.Credentials{AuthorizationHeader: &authorinov1beta3.Prefixed{Prefix: "APIKEY"}}
	explicitBearer := authorinov1beta3.Credentials{AuthorizationHeader: &authorinov1beta3.Prefixed{Prefix: "Bearer"}}
	custom := authorinov1beta3.Credentials{CustomHeader: &authorinov1beta3.CustomHeader{Named: authorinov1beta3.Named{Name: "x-api-key"}}}
	cookie := authorinov1beta3.Credentials{Cookie: &authorinov1beta3.Named{Name: "key"}}
	for _, tc := range []struct {
		name  string
		rules map[string]authorinov1beta3.Credentials
		clash bool
	}{
		{"one rule", map[string]authorinov1beta3.Credentials{"a1": apikey}, false},
		{"default and explicit Bearer", map[string]authorinov1beta3.Credentials{"a1": bearer, "a2": explicitBearer}, false},
		{"Bearer and APIKEY", map[string]authorinov1beta3.Credentials{"a1": bearer, "a2": apikey}, true},
		{"APIKEY and a custom header", map[string]authorinov1beta3.Credentials{"a1": apikey, "a2": custom}, false},
		{"cookie, custom header and Bearer", map[string]authorinov1beta3.Credentials{"a1": cookie, "a2": custom, "a3": bearer}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ac := &authorinov1beta3.AuthConfig{Spec: authorinov1beta3.AuthConfigSpec{Authentication: map[string]authorinov1beta3.AuthenticationSpec{}}}
			var names []string
			for n, c := range tc.rules {
				ac.Spec.Authentication[n] = authorinov1beta3.AuthenticationSpec{Credentials: c, AuthenticationMethodSpec: authorinov1beta3.AuthenticationMethodSpec{ApiKey: &authorinov1beta3.ApiKeyAuthenticationSpec{}}}
				names = append(names, n)
			}
			if got := authorizationHeaderClash(ac, names) != ""; got != tc.clash {
				t.Errorf("clash = %v, want %v", got, tc.clash)
			}
		})
	}
}

// TestSetCredentialCookies: rules reading cookies of different names all find theirs.
func TestSetCredentialCookies(t *testing.T) {
	rq := Request{}
	rq = setCredential(rq, authorinov1beta3.Credentials{Cookie: &authorinov1beta3.Named{Name: "a"}}, "k")
	rq = setCredential(rq, authorinov1beta3.Credentials{Cookie: &authorinov1beta3.Named{Name: "b"}}, "k")
	if got, want := rq.Headers["cookie"], "a=k; b=k"; got != want {
		t.Errorf("cookie = %q, want %q", got, want)
	}
}
