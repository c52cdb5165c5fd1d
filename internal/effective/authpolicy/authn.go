package authpolicy

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Upstream lines cited by the reasons (Authorino v0.25.0, go-oidc v3.14.1).
const (
	citeAPIKeyScope = "Authorino looks API keys up only in the AuthConfig's namespace unless allNamespaces is true (controllers/auth_config_controller.go:351-360, pkg/evaluators/identity/api_key.go:51-55)"
	citeIssuer      = "Authorino does not compare the token's iss with the rule's issuerUrl: any token signed by a key of the issuer's JWKS passes (pkg/evaluators/identity/jwt.go:26, SkipIssuerCheck)"
)

// verify decides whether an authentication rule verifies the request's identity, and
// what auth.identity then is (the object Authorino's evaluator returns).
func verify(a *authnResult, req Request, env *Env) {
	spec, id := a.spec, req.Identity
	method := ""
	if m := spec.AuthenticationMethods(); len(m) == 1 {
		method = m[0]
	}
	if spec.Anonymous != nil {
		a.result, a.identity = True, map[string]any{"anonymous": true}
		a.reason = "anonymous access (pkg/evaluators/identity/noop.go)"
		return
	}
	if id.Rule != "" && id.Rule != a.rule.Name {
		a.result, a.reason = False, "the request carries the credential of rule "+id.Rule+", not of this one"
		return
	}
	want := map[string]string{"jwt": IdentityJWT, "apiKey": IdentityAPIKey, "kubernetesTokenReview": IdentityKubernetes, "x509": IdentityX509}[method]
	switch {
	case method == "plain":
		a.result, a.reason = Unknown, "a plain identity is read from the request's context ("+spec.Plain.Selector+spec.Plain.Expression+"), which cannot be known offline"
		return
	case method == "oauth2Introspection":
		a.result, a.reason = Unknown, "token introspection at "+spec.OAuth2Introspection.Endpoint+" cannot be known offline"
		return
	case want == "":
		a.result, a.reason = False, "no authentication method agpol reads"
		return
	case want != id.Kind():
		a.result, a.reason = False, fmt.Sprintf("the request carries a %s identity, and this rule reads %s credentials", id.Kind(), method)
		return
	}
	switch want {
	case IdentityJWT:
		verifyJWT(a, id, req.Time)
	case IdentityAPIKey:
		verifyAPIKey(a, id, env)
	case IdentityKubernetes:
		verifyTokenReview(a, id, req.Host)
	case IdentityX509:
		verifyX509(a, id, env)
	}
}

func verifyJWT(a *authnResult, id *Identity, at time.Time) {
	claims := id.JWT.Claims
	issuer := a.spec.JWT.IssuerURL
	if issuer == "" {
		issuer = a.spec.JWT.JwksURL
	}
	if iss, _ := claims["iss"].(string); iss != "" && a.spec.JWT.IssuerURL != "" && iss != a.spec.JWT.IssuerURL {
		a.notes = append(a.notes, fmt.Sprintf("the token's iss %q is not the rule's issuerUrl %q, and it does not matter: %s", iss, a.spec.JWT.IssuerURL, citeIssuer))
	}
	exp, hasExp := claims["exp"].(float64)
	switch {
	case !hasExp:
		a.result, a.reason = False, "the token has no exp claim, and Authorino rejects it as expired (go-oidc v3.14.1 oidc/verify.go:285-293: a missing exp reads as the zero time)"
		return
	case at.IsZero():
		a.result, a.reason = Unknown, "whether the token has expired depends on the time: give the request's time (--time, or http.time in a request file)"
		return
	case time.Unix(int64(exp), 0).Before(at):
		a.result, a.reason = False, fmt.Sprintf("the token expired at %s, before the request's time (go-oidc oidc/verify.go:292)", time.Unix(int64(exp), 0).UTC().Format(time.RFC3339))
		return
	}
	if nbf, ok := claims["nbf"].(float64); ok && at.Add(5*time.Minute).Before(time.Unix(int64(nbf), 0)) {
		a.result, a.reason = False, "the token's nbf is more than 5 minutes after the request's time (go-oidc oidc/verify.go:296-305)"
		return
	}
	a.result, a.identity = True, claims
	a.reason = "a JWT verified as if signed by a key of " + issuer + "'s JWKS; auth.identity is its claims (pkg/evaluators/identity/jwt.go:41-65)"
	if len(a.notes) > 0 {
		a.reason += "; " + citeIssuer
	}
}

func verifyAPIKey(a *authnResult, id *Identity, env *Env) {
	ns, name, _ := strings.Cut(id.APIKey.Secret, "/")
	s := env.secret(ns, name)
	if s == nil {
		a.result, a.reason = Unknown, "Secret "+id.APIKey.Secret+" is not in the input"+env.unreadNote("secrets")
		return
	}
	scope := env.AuthConfigNamespace
	if a.spec.APIKey.AllNamespaces {
		scope = ""
	}
	if scope != "" && ns != scope {
		a.result = False
		where := "Kuadrant's namespace"
		if env.policyNamespace {
			where = "the v1beta2 policy's own namespace (kuadrant-operator v0.6.1 controllers/authpolicy_authconfig.go:54-57)"
		}
		a.reason = fmt.Sprintf("Secret %s is in namespace %s, and kuadrant-operator writes this policy's AuthConfig into %s %s: with allNamespaces false the key is never found. %s", id.APIKey.Secret, ns, where, scope, citeAPIKeyScope)
		if env.NamespaceAssumed {
			a.reason += " (no Kuadrant CR in the input: Kuadrant's namespace assumed " + scope + ")"
		}
		return
	}
	ok, err := selectsSecret(a.spec.APIKey.Selector, s)
	switch {
	case err != nil:
		a.result, a.reason = False, "the rule's selector is invalid: "+err.Error()
		return
	case !ok:
		a.result, a.reason = False, fmt.Sprintf("Secret %s does not match the rule's selector %s", id.APIKey.Secret, selectorString(a.spec.APIKey.Selector))
		return
	case !s.HasAPIKey:
		a.result, a.reason = False, "Secret "+id.APIKey.Secret+" has no api_key entry, and Authorino keeps only Secrets with one (api_key.go:147-153)"
		return
	}
	meta := map[string]any{"name": s.Name, "namespace": s.Namespace}
	if len(s.Labels) > 0 {
		meta["labels"] = toAny(s.Labels)
	}
	if len(s.ObjectMeta.Annotations) > 0 {
		meta["annotations"] = toAny(s.ObjectMeta.Annotations)
	}
	obj := map[string]any{"metadata": meta}
	if s.Type != "" {
		obj["type"] = string(s.Type)
	}
	a.result, a.identity, a.unknown = True, obj, []string{"auth.identity.data"}
	a.reason = "the API key of Secret " + id.APIKey.Secret + "; auth.identity is the Secret (its labels and annotations; its data is not read) (api_key.go:71-86)"
	if s.DataUnread {
		a.unknown = append(a.unknown, "auth.identity.type")
		a.reason += "; " + citeMetadataOnly + " api_key"
	}
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func verifyTokenReview(a *authnResult, id *Identity, host string) {
	k := id.Kubernetes
	want := a.spec.KubernetesTokenReview.Audiences
	if len(want) == 0 {
		if host == "" {
			a.result, a.reason = Unknown, "the rule's audience is the request's host (kubernetes_auth.go:54-60), which is not known"
			return
		}
		want = []string{host}
	}
	aud := k.Audiences
	if len(aud) > 0 {
		var both []string
		for _, x := range aud {
			if slices.Contains(want, x) {
				both = append(both, x)
			}
		}
		if len(both) == 0 {
			a.result, a.reason = False, fmt.Sprintf("the token's audiences %v are none of %v that the TokenReview asks for (kubernetes_auth.go:38-50)", aud, want)
			return
		}
		aud = both
	} else {
		aud = want
	}
	groups := make([]any, 0, len(k.Groups))
	for _, g := range k.Groups {
		groups = append(groups, g)
	}
	audAny := make([]any, 0, len(aud))
	for _, x := range aud {
		audAny = append(audAny, x)
	}
	a.result = True
	a.identity = map[string]any{"authenticated": true, "user": map[string]any{"username": k.Username, "groups": groups}, "audiences": audAny}
	a.reason = "a Kubernetes token the TokenReview authenticates; auth.identity is its status (kubernetes_auth.go:62-69)"
	if len(k.Audiences) == 0 {
		a.reason += "; the token's audiences are assumed to include " + strings.Join(want, ", ")
	}
}

func verifyX509(a *authnResult, id *Identity, env *Env) {
	scope := env.AuthConfigNamespace
	if a.spec.X509.AllNamespaces {
		scope = ""
	}
	var cas []string
	var assumed bool
	for _, s := range env.Secrets {
		if scope != "" && s.Namespace != scope {
			continue
		}
		if ok, _ := selectsSecret(a.spec.X509.Selector, s); ok && s.HasCertificate {
			cas = append(cas, s.Namespace+"/"+s.Name)
			assumed = assumed || s.DataUnread
		}
	}
	if len(cas) == 0 {
		where := "any namespace"
		if scope != "" {
			where = "namespace " + scope
		}
		a.result, a.reason = Unknown, fmt.Sprintf("no CA Secret labelled %s in %s is in the input (pkg/evaluators/identity/mtls.go:57-77)", selectorString(a.spec.X509.Selector), where)+env.unreadNote("secrets")
		return
	}
	sub := id.X509.Subject
	list := func(v []string) any {
		if v == nil {
			return nil
		}
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = x
		}
		return out
	}
	a.result = True
	a.identity = map[string]any{"CommonName": sub.CommonName, "SerialNumber": sub.SerialNumber, "Organization": list(sub.Organization),
		"OrganizationalUnit": list(sub.OrganizationalUnit), "Country": list(sub.Country), "Locality": list(sub.Locality), "Province": list(sub.Province)}
	a.unknown = []string{"auth.identity.Names", "auth.identity.ExtraNames", "auth.identity.StreetAddress", "auth.identity.PostalCode"}
	a.reason = "a client certificate verified as if signed by the CA of " + strings.Join(cas, ", ") + "; auth.identity is its subject (mtls.go:80-130)"
	if assumed {
		a.reason += "; " + citeMetadataOnly + " tls.crt"
	}
}
