package main

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	authorinov1beta3 "github.com/kuadrant/authorino/api/v1beta3"
	corev1 "k8s.io/api/core/v1"
)

// withCredentials turns a request's identity (the shape of agpol's request files) into
// the credential Authorino's identity source accepts, placed where the AuthConfig's
// authentication rule reads it. It returns why it cannot when the oracle does not
// stand in for the identity kind yet.
//
// apiKey: the key is the `api_key` entry of the named Secret of the scenario; it is
// put where the chosen apiKey rule reads credentials (the rule named by
// identity.rule, else the apiKey rule of lowest priority, then name). Whether
// Authorino finds the Secret (selector, namespace) is Authorino's to decide.
func withCredentials(rq Request, ac *authorinov1beta3.AuthConfig, secrets []*corev1.Secret) (Request, string) {
	id := rq.Identity
	switch {
	case id.APIKey != nil:
		ns, name, _ := strings.Cut(id.APIKey.Secret, "/")
		var key string
		for _, s := range secrets {
			if s.Namespace == ns && s.Name == name {
				key = string(s.Data["api_key"])
				if v, ok := s.StringData["api_key"]; ok {
					key = v
				}
			}
		}
		if key == "" {
			return rq, fmt.Sprintf("the Secret %s with an api_key is not in the scenario", id.APIKey.Secret)
		}
		if ac == nil {
			return rq, ""
		}
		var names []string
		for n, a := range ac.Spec.Authentication {
			if a.ApiKey != nil && (id.Rule == "" || id.Rule == n) {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			// No apiKey rule: the key is sent where the default credentials are read.
			return setCredential(rq, authorinov1beta3.Credentials{}, key), ""
		}
		sort.Slice(names, func(i, j int) bool {
			a, b := ac.Spec.Authentication[names[i]], ac.Spec.Authentication[names[j]]
			if a.Priority != b.Priority {
				return a.Priority < b.Priority
			}
			return names[i] < names[j]
		})
		return setCredential(rq, ac.Spec.Authentication[names[0]].Credentials, key), ""
	case id.JWT != nil:
		return rq, "jwt identities (a loopback OIDC/JWKS server) are not stood in for yet"
	case id.Kubernetes != nil:
		return rq, "kubernetes identities (TokenReview answers) are not stood in for yet"
	case id.X509 != nil:
		return rq, "x509 identities (client certificates) are not stood in for yet"
	}
	return rq, "an identity of no known kind"
}

// setCredential puts a credential where Authorino reads it (v1beta3 Credentials;
// the Authorization header with prefix Bearer by default).
func setCredential(rq Request, c authorinov1beta3.Credentials, value string) Request {
	h := map[string]string{}
	for k, v := range rq.Headers {
		h[k] = v
	}
	rq.Headers = h
	switch {
	case c.CustomHeader != nil:
		h[lower(c.CustomHeader.Name)] = value
	case c.QueryString != nil:
		sep := "?"
		if strings.Contains(rq.Path, "?") {
			sep = "&"
		}
		rq.Path += sep + url.QueryEscape(c.QueryString.Name) + "=" + url.QueryEscape(value)
	case c.Cookie != nil:
		h["cookie"] = c.Cookie.Name + "=" + value
	default:
		prefix := "Bearer"
		if c.AuthorizationHeader != nil && c.AuthorizationHeader.Prefix != "" {
			prefix = c.AuthorizationHeader.Prefix
		}
		h["authorization"] = prefix + " " + value
	}
	return rq
}
