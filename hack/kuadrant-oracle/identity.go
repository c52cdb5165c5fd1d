package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	authorinov1beta3 "github.com/kuadrant/authorino/api/v1beta3"
	authv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// caPlaceholder is a CA Secret's tls.crt as agpol's generator writes it
// (internal/testsupport/kuadrantdiff/gen_identity.go): replaced by the oracle's test CA.
const caPlaceholder = "agpol-kuadrantdiff-test-ca"

// stands are the identity sources the oracle stands in for, one set per process:
// an OIDC issuer (discovery and JWKS on a loopback http server) that signs each
// request's claims, a test CA that signs each request's client certificate, and the
// TokenReview answers of a Kubernetes API server.
type stands struct {
	idp *httptest.Server
	// meta serves the current request's metadata (metadata.go).
	meta     *httptest.Server
	metaMu   sync.Mutex
	metadata atomic.Pointer[map[string]any]
	jwtKey   *rsa.PrivateKey
	signer   jose.Signer
	caCert   *x509.Certificate
	caKey    *ecdsa.PrivateKey
	caPEM    []byte
}

func newStands() (*stands, error) {
	s := &stands{}
	var err error
	if s.jwtKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		return nil, err
	}
	s.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: s.jwtKey, KeyID: "oracle"}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, err
	}
	s.idp = httptest.NewServer(http.HandlerFunc(s.serveIdP))
	// Authorino's jwt rule fetches the issuer's discovery document and JWKS with
	// go-oidc over http.DefaultClient (go-oidc v3.14.1 oidc/oidc.go getClient): requests
	// to the issuers' host go to the loopback server, every other one as before.
	// Authorino's http metadata rules fetch with http.DefaultClient too
	// (pkg/evaluators/metadata/generic_http.go:60): metadata.example.com goes to the
	// metadata server.
	s.meta = httptest.NewServer(http.HandlerFunc(s.serveMetadata))
	http.DefaultTransport = &idpTransport{base: http.DefaultTransport, to: map[string]string{"idp.example.com": s.idp.URL, metadataHost: s.meta.URL}}

	if s.caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agpol oracle test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour * 365),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &s.caKey.PublicKey, s.caKey)
	if err != nil {
		return nil, err
	}
	if s.caCert, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	s.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return s, nil
}

// serveIdP answers /realms/NAME/.well-known/openid-configuration and /realms/NAME/jwks
// as an OIDC provider whose issuer is https://idp.example.com/realms/NAME.
func (s *stands) serveIdP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration"):
		issuer := "https://idp.example.com" + strings.TrimSuffix(r.URL.Path, "/.well-known/openid-configuration")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": issuer, "jwks_uri": issuer + "/jwks",
			"id_token_signing_alg_values_supported": []string{"RS256"}})
	case strings.HasSuffix(r.URL.Path, "/jwks"):
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &s.jwtKey.PublicKey, KeyID: "oracle", Algorithm: "RS256", Use: "sig"}}})
	default:
		http.NotFound(w, r)
	}
}

// idpTransport sends requests to the stand-ins' hosts (the generator's issuerUrls,
// https://idp.example.com/realms/NAME, and metadata URLs) to their loopback servers.
type idpTransport struct {
	base http.RoundTripper
	to   map[string]string // host → loopback server URL
}

func (t *idpTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	server, ok := t.to[r.URL.Hostname()]
	if !ok {
		return t.base.RoundTrip(r)
	}
	to, _ := url.Parse(server)
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = to.Scheme, to.Host, to.Host
	return t.base.RoundTrip(r)
}

// token signs claims with the issuers' key: every issuer's JWKS holds it, so the token
// verifies for any jwt rule, as agpol's request files say ("verified as if signed").
func (s *stands) token(claims map[string]any) (string, error) {
	b, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := s.signer.Sign(b)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// clientCert is a client certificate with the subject, signed by the test CA, URL-encoded
// PEM as Envoy puts it in the CheckRequest's source.certificate.
func (s *stands) clientCert(cn string, org []string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn, Organization: org},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.caCert, &key.PublicKey, s.caKey)
	if err != nil {
		return "", err
	}
	return url.QueryEscape(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))), nil
}

// withCA gives the scenario's CA Secrets (tls.crt the generator's placeholder) the
// test CA's certificate.
func (s *stands) withCA(secrets []*corev1.Secret) []*corev1.Secret {
	out := make([]*corev1.Secret, 0, len(secrets))
	for _, sec := range secrets {
		if string(sec.Data["tls.crt"]) == caPlaceholder {
			sec = sec.DeepCopy()
			sec.Data["tls.crt"] = s.caPEM
		}
		out = append(out, sec)
	}
	return out
}

// k8sTokenPrefix marks the tokens the TokenReview stand-in reads: the prefix, then
// the identity's username, groups and audiences as base64url JSON.
const k8sTokenPrefix = "oracle-k8s."

type k8sToken struct {
	Username  string   `json:"username"`
	Groups    []string `json:"groups,omitempty"`
	Audiences []string `json:"audiences,omitempty"`
}

// kubeReviews answers TokenReviews as a Kubernetes API server would for the oracle's
// tokens: authenticated when the token's audiences meet the review's (a token without
// audiences has the review's), with the audiences both hold; any other token is not
// authenticated (kubernetes/pkg/serviceaccount, authenticator audiences).
//
// SubjectAccessReviews go to Kubernetes' own handler and RBAC authorizer over the
// scenario's RBAC objects (sar.go).
func kubeReviews(c client.WithWatch, sars *subjectAccessReviews) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if sar, ok := obj.(*authzv1.SubjectAccessReview); ok {
			return sars.create(ctx, sar)
		}
		tr, ok := obj.(*authv1.TokenReview)
		if !ok {
			return c.Create(ctx, obj, opts...)
		}
		tr.Status = authv1.TokenReviewStatus{}
		raw, ok := strings.CutPrefix(tr.Spec.Token, k8sTokenPrefix)
		if !ok {
			return nil
		}
		b, err := base64.RawURLEncoding.DecodeString(raw)
		var t k8sToken
		if err != nil || json.Unmarshal(b, &t) != nil {
			return nil
		}
		aud := tr.Spec.Audiences
		if len(t.Audiences) > 0 {
			var both []string
			for _, a := range t.Audiences {
				for _, w := range tr.Spec.Audiences {
					if a == w {
						both = append(both, a)
					}
				}
			}
			if len(both) == 0 {
				tr.Status.Error = "token audiences are invalid for the target audiences"
				return nil
			}
			aud = both
		}
		tr.Status = authv1.TokenReviewStatus{Authenticated: true, Audiences: aud,
			User: authv1.UserInfo{Username: t.Username, Groups: t.Groups}}
		return nil
	}})
}

// withCredentials turns a request's identity (the shape of agpol's request files) into
// the credential Authorino's own identity source checks, placed where every
// authentication rule of its kind reads credentials (the rule named by identity.rule
// only, when set); with no such rule, where the default credentials are read. It
// returns why it cannot.
//
//   - apiKey: the `api_key` of the named Secret of the scenario; whether Authorino finds
//     the Secret (selector, namespace) is Authorino's to decide.
//   - jwt: the claims signed by the key of every issuer's JWKS.
//   - kubernetes: a token the TokenReview stand-in answers with the identity.
//   - x509: a client certificate with the subject signed by the test CA, in the
//     CheckRequest's source.certificate (where Envoy puts the peer certificate).
func (s *stands) withCredentials(rq Request, ac *authorinov1beta3.AuthConfig, secrets []*corev1.Secret) (Request, string) {
	id := rq.Identity
	var value string
	var ofKind func(*authorinov1beta3.AuthenticationSpec) bool
	switch {
	case id.APIKey != nil:
		ns, name, _ := strings.Cut(id.APIKey.Secret, "/")
		for _, sec := range secrets {
			if sec.Namespace == ns && sec.Name == name {
				value = string(sec.Data["api_key"])
			}
		}
		if value == "" {
			return rq, fmt.Sprintf("the Secret %s with an api_key is not in the scenario", id.APIKey.Secret)
		}
		ofKind = func(a *authorinov1beta3.AuthenticationSpec) bool { return a.ApiKey != nil }
	case id.JWT != nil:
		t, err := s.token(id.JWT.Claims)
		if err != nil {
			return rq, "signing the token: " + err.Error()
		}
		value = t
		ofKind = func(a *authorinov1beta3.AuthenticationSpec) bool { return a.Jwt != nil }
	case id.Kubernetes != nil:
		b, _ := json.Marshal(k8sToken{Username: id.Kubernetes.Username, Groups: id.Kubernetes.Groups, Audiences: id.Kubernetes.Audiences})
		value = k8sTokenPrefix + base64.RawURLEncoding.EncodeToString(b)
		ofKind = func(a *authorinov1beta3.AuthenticationSpec) bool { return a.KubernetesTokenReview != nil }
	case id.X509 != nil:
		c, err := s.clientCert(id.X509.Subject.CommonName, id.X509.Subject.Organization)
		if err != nil {
			return rq, "signing the client certificate: " + err.Error()
		}
		rq.clientCert = c
		return rq, ""
	default:
		return rq, "an identity of no known kind"
	}
	if ac == nil {
		return rq, ""
	}
	var names []string
	for n, a := range ac.Spec.Authentication {
		if ofKind(&a) && (id.Rule == "" || id.Rule == n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return setCredential(rq, authorinov1beta3.Credentials{}, value), ""
	}
	sort.Strings(names)
	if why := authorizationHeaderClash(ac, names); why != "" {
		return rq, why
	}
	for _, n := range names {
		rq = setCredential(rq, ac.Spec.Authentication[n].Credentials, value)
	}
	return rq, ""
}

// authorizationHeaderClash says why no single request carries the credential where
// every named rule reads it: two of them read the Authorization header with different
// prefixes, and a request has one Authorization header (Authorino reads the prefix
// each rule names: pkg/auth/credentials.go:134-145). agpol decides as if the identity
// were presented as each rule reads it; the harness cannot ask Authorino that.
func authorizationHeaderClash(ac *authorinov1beta3.AuthConfig, names []string) string {
	seen, firstPrefix := false, ""
	for _, n := range names {
		c := ac.Spec.Authentication[n].Credentials
		if c.CustomHeader != nil || c.QueryString != nil || c.Cookie != nil {
			continue
		}
		prefix := "Bearer"
		if c.AuthorizationHeader != nil && c.AuthorizationHeader.Prefix != "" {
			prefix = c.AuthorizationHeader.Prefix
		}
		switch {
		case !seen:
			seen, firstPrefix = true, prefix
		case prefix != firstPrefix:
			return "two authentication rules of the identity's kind read the Authorization header with different prefixes; a request carries one Authorization header"
		}
	}
	return ""
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
		// Several rules may read cookies of different names: one Cookie header holds all.
		if prev := h["cookie"]; prev != "" {
			h["cookie"] = prev + "; " + c.Cookie.Name + "=" + value
		} else {
			h["cookie"] = c.Cookie.Name + "=" + value
		}
	default:
		prefix := "Bearer"
		if c.AuthorizationHeader != nil && c.AuthorizationHeader.Prefix != "" {
			prefix = c.AuthorizationHeader.Prefix
		}
		h["authorization"] = prefix + " " + value
	}
	return rq
}
