package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// TestRequirementText writes the sentence of every authpolicy.Need code: a code without
// a sentence here (the "requirement CODE" fallback) fails.
func TestRequirementText(t *testing.T) {
	want := map[string]struct {
		n    authpolicy.Need
		text string
	}{
		authpolicy.NeedAPIKey:      {authpolicy.Need{Selector: "app=toys"}, "an API key stored in a Secret labelled app=toys in the AuthPolicy's namespace"},
		authpolicy.NeedJWTIssuer:   {authpolicy.Need{URL: "https://idp.example.com"}, "a JWT issued by https://idp.example.com"},
		authpolicy.NeedJWTKeys:     {authpolicy.Need{URL: "https://idp.example.com/keys"}, "a JWT signed by a key from https://idp.example.com/keys"},
		authpolicy.NeedJWT:         {authpolicy.Need{}, "a JWT"},
		authpolicy.NeedOAuth2:      {authpolicy.Need{URL: "https://idp.example.com/introspect"}, "an OAuth2 token that https://idp.example.com/introspect reports active"},
		authpolicy.NeedTokenReview: {authpolicy.Need{}, "a Kubernetes service account token for audience the requested host"},
		authpolicy.NeedX509:        {authpolicy.Need{Selector: "ca=true"}, "a client certificate signed by a CA stored in a Secret labelled ca=true"},
		authpolicy.NeedPlain:       {authpolicy.Need{From: "context.metadata_context.filter_metadata"}, "an identity already resolved at context.metadata_context.filter_metadata"},
		authpolicy.NeedAnonymous:   {authpolicy.Need{}, "nothing (anonymous access)"},
		authpolicy.NeedNoMethod:    {authpolicy.Need{}, "no authentication method is set in this rule (it cannot succeed)"},
		authpolicy.NeedPatterns:    {authpolicy.Need{Expressions: []string{"request.method == \"GET\"", "auth.identity.sub != \"\""}}, "all of: request.method == \"GET\"; auth.identity.sub != \"\""},
		authpolicy.NeedOPA:         {authpolicy.Need{}, "an OPA policy must allow it (cannot be known offline)"},
		authpolicy.NeedSAR:         {authpolicy.Need{}, "Kubernetes RBAC must allow it (cannot be known offline)"},
		authpolicy.NeedSpiceDB:     {authpolicy.Need{}, "SpiceDB must grant the permission (cannot be known offline)"},
		authpolicy.NeedUnread:      {authpolicy.Need{}, "an authorization method agpol does not read (cannot be known offline)"},
	}
	for _, code := range authpolicy.NeedCodes {
		w, ok := want[code]
		if !ok {
			t.Errorf("code %q: no case in this test", code)
			continue
		}
		w.n.Code = code
		got := RequirementText(w.n)
		if strings.HasPrefix(got, "requirement ") {
			t.Errorf("code %q has no sentence in render", code)
		} else if got != w.text {
			t.Errorf("code %q: %q, want %q", code, got, w.text)
		}
	}
	if len(want) != len(authpolicy.NeedCodes) {
		t.Errorf("%d cases, %d codes", len(want), len(authpolicy.NeedCodes))
	}
	for n, text := range map[*authpolicy.Need]string{
		{Code: authpolicy.NeedAPIKey, Selector: "{} (any)", AllNamespaces: true}: "an API key stored in a Secret labelled {} (any) in any namespace",
		{Code: authpolicy.NeedTokenReview, Audiences: []string{"a", "b"}}:        "a Kubernetes service account token for audience a, b",
	} {
		if got := RequirementText(*n); got != text {
			t.Errorf("%+v: %q, want %q", *n, got, text)
		}
	}
}

// TestCredentialText writes where every authpolicy.CredentialSource code reads the
// credential: a code without a sentence here (the "credential CODE" fallback) fails.
func TestCredentialText(t *testing.T) {
	want := map[string]struct {
		name, text string
	}{
		authpolicy.CredentialAuthorization: {"Bearer", "Authorization header, prefix Bearer"},
		authpolicy.CredentialHeader:        {"X-API-Key", "header X-API-Key"},
		authpolicy.CredentialQuery:         {"token", "query parameter token"},
		authpolicy.CredentialCookie:        {"session", "cookie session"},
		authpolicy.CredentialTLS:           {"", "the TLS connection"},
		authpolicy.CredentialXFCC:          {"x-forwarded-client-cert", "header x-forwarded-client-cert (X-Forwarded-Client-Cert)"},
		authpolicy.CredentialCertHeader:    {"x-client-cert", "header x-client-cert"},
		authpolicy.CredentialExpression:    {"source.certificate", "expression source.certificate"},
	}
	for _, code := range authpolicy.CredentialCodes {
		w, ok := want[code]
		if !ok {
			t.Errorf("code %q: no case in this test", code)
			continue
		}
		got := CredentialText(&authpolicy.CredentialSource{Code: code, Name: w.name})
		if strings.HasPrefix(got, "credential ") {
			t.Errorf("code %q has no sentence in render", code)
		} else if got != w.text {
			t.Errorf("code %q: %q, want %q", code, got, w.text)
		}
	}
	if len(want) != len(authpolicy.CredentialCodes) {
		t.Errorf("%d cases, %d codes", len(want), len(authpolicy.CredentialCodes))
	}
	if got := CredentialText(nil); got != "" {
		t.Errorf("no credential: %q", got)
	}
}

// TestAttributeText: attributes agpol cannot name are written in the evaluation's view
// (Offline) and in a check's sentence, and the evaluation is left as it was.
func TestAttributeText(t *testing.T) {
	depends := authpolicy.Why{Code: authpolicy.CheckDepends, Attrs: []string{authpolicy.AttrUnnamed, "request.path"}}
	e := &authpolicy.Evaluation{Offline: []string{authpolicy.AttrUnnamed, "request.path"},
		Predicates: []authpolicy.Check{{Expression: `request["method"] == "GET"`, Result: authpolicy.Unknown, Why: []authpolicy.Why{depends}}}}
	v := evaluationView(e)
	if want := []string{"attributes not supplied", "request.path"}; !slices.Equal(v.Offline, want) {
		t.Errorf("offline %q, want %q", v.Offline, want)
	}
	if want := "depends on attributes not supplied, request.path, which cannot be known offline"; v.Predicates[0].Reason != want {
		t.Errorf("reason %q, want %q", v.Predicates[0].Reason, want)
	}
	if e.Offline[0] != authpolicy.AttrUnnamed {
		t.Errorf("the view edited the evaluation: %q", e.Offline)
	}
	// The whole input of an OPA policy is written where its name sorts.
	e = &authpolicy.Evaluation{Offline: []string{authpolicy.AttrWholeInput, "request.path", "source.address"}}
	if want := []string{"request.path", "source.address", "the whole input"}; !slices.Equal(evaluationView(e).Offline, want) {
		t.Errorf("offline %q, want %q", evaluationView(e).Offline, want)
	}
}
