package authpolicy

import (
	"slices"
	"strings"
	"time"
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
		a.why = Why{Code: WhyAuthnAnonymous}
		return
	}
	if id.Rule != "" && id.Rule != a.rule.Name {
		a.result = False
		a.why = Why{Code: WhyAuthnOtherRule, Rule: id.Rule}
		return
	}
	want := map[string]string{"jwt": IdentityJWT, "apiKey": IdentityAPIKey, "kubernetesTokenReview": IdentityKubernetes, "x509": IdentityX509}[method]
	switch {
	case method == "plain":
		a.result = Unknown
		a.why = Why{Code: WhyAuthnPlain, Expr: spec.Plain.Selector + spec.Plain.Expression}
		return
	case method == "oauth2Introspection":
		a.result = Unknown
		a.why = Why{Code: WhyAuthnIntrospection, Endpoint: spec.OAuth2Introspection.Endpoint}
		return
	case want == "":
		a.result = False
		a.why = Why{Code: WhyAuthnNoMethod}
		return
	case want != id.Kind():
		a.result = False
		a.why = Why{Code: WhyAuthnWrongKind, Kind: id.Kind(), Method: method}
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
		a.noteWhys = append(a.noteWhys, Why{Code: NoteIssuerMismatch, Claim: iss, Issuer: a.spec.JWT.IssuerURL})
	}
	exp, hasExp := claims["exp"].(float64)
	switch {
	case !hasExp:
		a.result = False
		a.why = Why{Code: WhyAuthnNoExp}
		return
	case at.IsZero():
		a.result = Unknown
		a.why = Why{Code: WhyAuthnNoTime}
		return
	case time.Unix(int64(exp), 0).Before(at):
		a.result = False
		a.why = Why{Code: WhyAuthnExpired, Time: time.Unix(int64(exp), 0).UTC()}
		return
	}
	if nbf, ok := claims["nbf"].(float64); ok && at.Add(5*time.Minute).Before(time.Unix(int64(nbf), 0)) {
		a.result = False
		a.why = Why{Code: WhyAuthnNotYetValid}
		return
	}
	a.result, a.identity = True, claims
	a.why = Why{Code: WhyAuthnJWT, Issuer: issuer, IssuerNotChecked: len(a.noteWhys) > 0}
}

func verifyAPIKey(a *authnResult, id *Identity, env *Env) {
	ns, name, _ := strings.Cut(id.APIKey.Secret, "/")
	s := env.secret(ns, name)
	if s == nil {
		a.result = Unknown
		a.why = Why{Code: WhyAuthnSecretMissing, Secret: id.APIKey.Secret, Unread: env.unreadMessages("secrets")}
		return
	}
	scope := env.AuthConfigNamespace
	if a.spec.APIKey.AllNamespaces {
		scope = ""
	}
	if scope != "" && ns != scope {
		a.result = False
		a.why = Why{Code: WhyAuthnKeyOutOfScope, Secret: id.APIKey.Secret, Namespace: ns, Scope: scope, PolicyNamespace: env.policyNamespace, NamespaceAssumed: env.NamespaceAssumed}
		return
	}
	ok, err := selectsSecret(a.spec.APIKey.Selector, s)
	switch {
	case err != nil:
		a.result = False
		a.why = Why{Code: WhyAuthnBadSelector, Err: err.Error()}
		return
	case !ok:
		a.result = False
		a.why = Why{Code: WhyAuthnSelectorMissing, Secret: id.APIKey.Secret, Selector: selectorString(a.spec.APIKey.Selector)}
		return
	case !s.HasAPIKey:
		a.result = False
		a.why = Why{Code: WhyAuthnNoAPIKeyEntry, Secret: id.APIKey.Secret}
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
	a.why = Why{Code: WhyAuthnAPIKey, Secret: id.APIKey.Secret}
	if s.DataUnread {
		a.unknown = append(a.unknown, "auth.identity.type")
		a.why.MetadataOnly, a.why.Entry = true, "api_key"
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
			a.result = Unknown
			a.why = Why{Code: WhyAuthnAudienceUnknown}
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
			a.result = False
			a.why = Why{Code: WhyAuthnAudienceDiffers, Audiences: aud, Want: want}
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
	a.why = Why{Code: WhyAuthnTokenReview, Want: want}
	if len(k.Audiences) == 0 {
		a.why.AudiencesAssumed = true
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
		a.result = Unknown
		a.why = Why{Code: WhyAuthnNoCA, Selector: selectorString(a.spec.X509.Selector), Scope: scope, Unread: env.unreadMessages("secrets")}
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
	a.why = Why{Code: WhyAuthnX509, CAs: cas}
	if assumed {
		a.why.MetadataOnly, a.why.Entry = true, "tls.crt"
	}
}
