package authpolicy

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Identity is what Authorino would have verified about a request's credential, given
// instead of the credential (docs/kuadrant-identities.md). Exactly one kind is set.
type Identity struct {
	// Rule names the authentication rule that produced it; empty when any rule of its
	// kind may have.
	Rule       string              `json:"rule,omitempty"`
	JWT        *JWTIdentity        `json:"jwt,omitempty"`
	APIKey     *APIKeyIdentity     `json:"apiKey,omitempty"`
	Kubernetes *KubernetesIdentity `json:"kubernetes,omitempty"`
	X509       *X509Identity       `json:"x509,omitempty"`
}

// JWTIdentity is a token's claims, verified as if signed by a key of the rule's JWKS.
type JWTIdentity struct {
	Claims map[string]any `json:"claims"`
}

// APIKeyIdentity names the Secret whose api_key the request presents ("NS/NAME").
type APIKeyIdentity struct {
	Secret string `json:"secret"`
}

// KubernetesIdentity is what a TokenReview would answer for the request's token.
type KubernetesIdentity struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups,omitempty"`
	// Audiences are the token's audiences; empty means the ones the rule asks for.
	Audiences []string `json:"audiences,omitempty"`
}

// X509Identity is a client certificate's subject, verified as if signed by a CA the
// rule trusts.
type X509Identity struct {
	Subject X509Subject `json:"subject"`
}

// X509Subject is the subject of a certificate.
type X509Subject struct {
	CommonName         string   `json:"commonName,omitempty"`
	SerialNumber       string   `json:"serialNumber,omitempty"`
	Organization       []string `json:"organization,omitempty"`
	OrganizationalUnit []string `json:"organizationalUnit,omitempty"`
	Country            []string `json:"country,omitempty"`
	Locality           []string `json:"locality,omitempty"`
	Province           []string `json:"province,omitempty"`
}

// Identity kinds, as the request file spells them.
const (
	IdentityJWT        = "jwt"
	IdentityAPIKey     = "apiKey"
	IdentityKubernetes = "kubernetes"
	IdentityX509       = "x509"
)

// Kind is the identity's kind ("jwt", "apiKey", "kubernetes", "x509"), "" when none is set.
func (id *Identity) Kind() string {
	switch {
	case id == nil:
		return ""
	case id.JWT != nil:
		return IdentityJWT
	case id.APIKey != nil:
		return IdentityAPIKey
	case id.Kubernetes != nil:
		return IdentityKubernetes
	case id.X509 != nil:
		return IdentityX509
	}
	return ""
}

// String is the identity in a few words: "jwt sub=alice", "apiKey kuadrant-system/bob-key".
func (id *Identity) String() string {
	var s string
	switch id.Kind() {
	case IdentityJWT:
		s = "jwt"
		if sub, ok := id.JWT.Claims["sub"]; ok {
			s += fmt.Sprintf(" sub=%v", sub)
		}
	case IdentityAPIKey:
		s = "apiKey " + id.APIKey.Secret
	case IdentityKubernetes:
		s = "kubernetes " + id.Kubernetes.Username
	case IdentityX509:
		s = "x509 CN=" + id.X509.Subject.CommonName
	default:
		return "no identity"
	}
	if id.Rule != "" {
		s += " (rule " + id.Rule + ")"
	}
	return s
}

// Validate checks that exactly one kind is set and that its fields are usable.
func (id *Identity) Validate() error {
	n := 0
	for _, set := range []bool{id.JWT != nil, id.APIKey != nil, id.Kubernetes != nil, id.X509 != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("identity needs exactly one of jwt, apiKey, kubernetes, x509")
	}
	switch {
	case id.JWT != nil && id.JWT.Claims == nil:
		return fmt.Errorf("identity.jwt needs claims")
	case id.APIKey != nil:
		ns, name, ok := strings.Cut(id.APIKey.Secret, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("identity.apiKey.secret %q: use NAMESPACE/NAME", id.APIKey.Secret)
		}
	case id.Kubernetes != nil && id.Kubernetes.Username == "":
		return fmt.Errorf("identity.kubernetes needs a username")
	case id.X509 != nil && id.X509.Subject.CommonName == "" && len(id.X509.Subject.Organization) == 0:
		return fmt.Errorf("identity.x509.subject needs a commonName or an organization")
	}
	return nil
}

// JSONValue turns a value decoded from YAML into what Authorino's JSON would hold:
// numbers as float64, maps with string keys.
func JSONValue(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(data, &out)
}
