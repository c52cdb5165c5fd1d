package authpolicy

import (
	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
)

// Need is what one rule asks of a request, as data (Requirement.Need): a code (one of
// the Need* constants) and the names its sentence needs. render writes the sentence
// (render.RequirementText).
type Need struct {
	Code string `json:"-"`
	// Selector is the label selector of the Secrets that hold the API keys (NeedAPIKey)
	// or the CA certificates (NeedX509), as selectorString writes it.
	Selector string `json:"-"`
	// AllNamespaces: the API key Secrets are read in any namespace, not only the
	// AuthPolicy's (NeedAPIKey).
	AllNamespaces bool `json:"-"`
	// URL is the JWT issuer (NeedJWTIssuer), the JWKS address (NeedJWTKeys) or the
	// OAuth2 introspection endpoint (NeedOAuth2).
	URL string `json:"-"`
	// Audiences are the TokenReview's audiences; none: the requested host
	// (NeedTokenReview).
	Audiences []string `json:"-"`
	// From is where an already resolved identity is read: a selector or an
	// expression (NeedPlain).
	From string `json:"-"`
	// Expressions are the patterns that must all hold, one expression each
	// (NeedPatterns).
	Expressions []string `json:"-"`
}

// Need codes (Need.Code): what an authentication rule asks the request to present, or
// what an authorization rule asks to hold.
const (
	NeedAPIKey      = "api-key"      // an API key in a Secret matching Selector (AllNamespaces)
	NeedJWTIssuer   = "jwt-issuer"   // a JWT issued by URL
	NeedJWTKeys     = "jwt-keys"     // a JWT signed by a key from URL
	NeedJWT         = "jwt"          // a JWT (neither issuer nor JWKS set)
	NeedOAuth2      = "oauth2"       // an OAuth2 token that URL reports active
	NeedTokenReview = "token-review" // a service account token for Audiences
	NeedX509        = "x509"         // a client certificate signed by a CA in a Secret matching Selector
	NeedPlain       = "plain"        // an identity already resolved at From
	NeedAnonymous   = "anonymous"    // nothing
	NeedNoMethod    = "no-method"    // the authentication rule sets no method: it cannot succeed
	NeedPatterns    = "patterns"     // all of Expressions hold
	NeedOPA         = "opa"          // an OPA policy allows it (not known offline)
	NeedSAR         = "sar"          // Kubernetes RBAC allows it (not known offline)
	NeedSpiceDB     = "spicedb"      // SpiceDB grants the permission (not known offline)
	NeedUnread      = "unread"       // an authorization method agpol does not read
)

// NeedCodes are every Need code, for the test that render writes a sentence for each.
var NeedCodes = []string{NeedAPIKey, NeedJWTIssuer, NeedJWTKeys, NeedJWT, NeedOAuth2, NeedTokenReview,
	NeedX509, NeedPlain, NeedAnonymous, NeedNoMethod, NeedPatterns, NeedOPA, NeedSAR, NeedSpiceDB, NeedUnread}

// CredentialSource is where an authentication rule reads the credential, as data
// (Requirement.Reads); render writes it (render.CredentialText).
type CredentialSource struct {
	Code string `json:"-"`
	// Name is the header, query parameter or cookie (CredentialHeader, CredentialQuery,
	// CredentialCookie, CredentialXFCC, CredentialCertHeader), the Authorization
	// header's prefix (CredentialAuthorization) or the expression (CredentialExpression).
	Name string `json:"-"`
}

// CredentialSource codes (CredentialSource.Code).
const (
	CredentialAuthorization = "authorization" // the Authorization header, prefix Name (Bearer when unset)
	CredentialHeader        = "header"        // header Name
	CredentialQuery         = "query"         // query parameter Name
	CredentialCookie        = "cookie"        // cookie Name
	CredentialTLS           = "tls"           // the TLS connection's client certificate
	CredentialXFCC          = "xfcc"          // header Name, as X-Forwarded-Client-Cert
	CredentialCertHeader    = "cert-header"   // header Name holding the certificate
	CredentialExpression    = "expression"    // the value of expression Name
)

// CredentialCodes are every CredentialSource code, for the test that render writes a
// sentence for each.
var CredentialCodes = []string{CredentialAuthorization, CredentialHeader, CredentialQuery, CredentialCookie,
	CredentialTLS, CredentialXFCC, CredentialCertHeader, CredentialExpression}

// authenticationNeed is what an authentication rule asks of the request, its method,
// and where it reads the credential (nil when it reads none).
func authenticationNeed(a *kuadrantv1.AuthenticationSpec) (method string, need Need, reads *CredentialSource) {
	reads = credentialSource(a.Credentials)
	switch {
	case a.APIKey != nil:
		return "apiKey", Need{Code: NeedAPIKey, Selector: selectorString(a.APIKey.Selector), AllNamespaces: a.APIKey.AllNamespaces}, reads
	case a.JWT != nil:
		switch {
		case a.JWT.IssuerURL != "":
			return "jwt", Need{Code: NeedJWTIssuer, URL: a.JWT.IssuerURL}, reads
		case a.JWT.JwksURL != "":
			return "jwt", Need{Code: NeedJWTKeys, URL: a.JWT.JwksURL}, reads
		}
		return "jwt", Need{Code: NeedJWT}, reads
	case a.OAuth2Introspection != nil:
		return "oauth2Introspection", Need{Code: NeedOAuth2, URL: a.OAuth2Introspection.Endpoint}, reads
	case a.KubernetesTokenReview != nil:
		return "kubernetesTokenReview", Need{Code: NeedTokenReview, Audiences: a.KubernetesTokenReview.Audiences}, reads
	case a.X509 != nil:
		src := &CredentialSource{Code: CredentialTLS}
		if s := a.X509.Source; s != nil {
			switch {
			case s.XFCCHeader != "":
				src = &CredentialSource{Code: CredentialXFCC, Name: s.XFCCHeader}
			case s.ClientCertHeader != "":
				src = &CredentialSource{Code: CredentialCertHeader, Name: s.ClientCertHeader}
			case s.Expression != "":
				src = &CredentialSource{Code: CredentialExpression, Name: s.Expression}
			}
		}
		return "x509", Need{Code: NeedX509, Selector: selectorString(a.X509.Selector)}, src
	case a.Plain != nil:
		from := a.Plain.Selector
		if from == "" {
			from = a.Plain.Expression
		}
		return "plain", Need{Code: NeedPlain, From: from}, nil
	case a.Anonymous != nil:
		return "anonymous", Need{Code: NeedAnonymous}, nil
	}
	return "", Need{Code: NeedNoMethod}, reads
}

// credentialSource is where Authorino reads a credential: the Authorization header with
// prefix Bearer unless the rule says otherwise.
func credentialSource(c kuadrantv1.Credentials) *CredentialSource {
	switch {
	case c.CustomHeader != nil:
		return &CredentialSource{Code: CredentialHeader, Name: c.CustomHeader.Name}
	case c.QueryString != nil:
		return &CredentialSource{Code: CredentialQuery, Name: c.QueryString.Name}
	case c.Cookie != nil:
		return &CredentialSource{Code: CredentialCookie, Name: c.Cookie.Name}
	case c.AuthorizationHeader != nil && c.AuthorizationHeader.Prefix != "":
		return &CredentialSource{Code: CredentialAuthorization, Name: c.AuthorizationHeader.Prefix}
	}
	return &CredentialSource{Code: CredentialAuthorization, Name: "Bearer"}
}
