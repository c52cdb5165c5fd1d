package render

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// RequirementText is the sentence of what an AuthPolicy rule asks of a request
// (authpolicy.Need): what an authentication rule needs presented, or what must hold for
// an authorization rule. explain, effective authpolicy's JSON and simulate's unknowns
// quote it; "" for a rule with no Need.
func RequirementText(n authpolicy.Need) string {
	switch n.Code {
	case "":
		return ""
	case authpolicy.NeedAPIKey:
		scope := "in the AuthPolicy's namespace"
		if n.AllNamespaces {
			scope = "in any namespace"
		}
		return fmt.Sprintf("an API key stored in a Secret labelled %s %s", n.Selector, scope)
	case authpolicy.NeedJWTIssuer:
		return "a JWT issued by " + n.URL
	case authpolicy.NeedJWTKeys:
		return "a JWT signed by a key from " + n.URL
	case authpolicy.NeedJWT:
		return "a JWT"
	case authpolicy.NeedOAuth2:
		return "an OAuth2 token that " + n.URL + " reports active"
	case authpolicy.NeedTokenReview:
		aud := "the requested host"
		if len(n.Audiences) > 0 {
			aud = strings.Join(n.Audiences, ", ")
		}
		return "a Kubernetes service account token for audience " + aud
	case authpolicy.NeedX509:
		return "a client certificate signed by a CA stored in a Secret labelled " + n.Selector
	case authpolicy.NeedPlain:
		return "an identity already resolved at " + n.From
	case authpolicy.NeedAnonymous:
		return "nothing (anonymous access)"
	case authpolicy.NeedNoMethod:
		return "no authentication method is set in this rule (it cannot succeed)"
	case authpolicy.NeedPatterns:
		return "all of: " + strings.Join(n.Expressions, "; ")
	case authpolicy.NeedOPA:
		return "an OPA policy must allow it (cannot be known offline)"
	case authpolicy.NeedSAR:
		return "Kubernetes RBAC must allow it (cannot be known offline)"
	case authpolicy.NeedSpiceDB:
		return "SpiceDB must grant the permission (cannot be known offline)"
	case authpolicy.NeedUnread:
		return "an authorization method agpol does not read (cannot be known offline)"
	}
	return "requirement " + n.Code // a code this function does not know yet: still shown
}

// CredentialText says where an authentication rule reads the credential
// (authpolicy.CredentialSource); "" for nil.
func CredentialText(c *authpolicy.CredentialSource) string {
	if c == nil {
		return ""
	}
	switch c.Code {
	case authpolicy.CredentialAuthorization:
		return "Authorization header, prefix " + c.Name
	case authpolicy.CredentialHeader, authpolicy.CredentialCertHeader:
		return "header " + c.Name
	case authpolicy.CredentialQuery:
		return "query parameter " + c.Name
	case authpolicy.CredentialCookie:
		return "cookie " + c.Name
	case authpolicy.CredentialTLS:
		return "the TLS connection"
	case authpolicy.CredentialXFCC:
		return "header " + c.Name + " (X-Forwarded-Client-Cert)"
	case authpolicy.CredentialExpression:
		return "expression " + c.Name
	}
	return "credential " + c.Code // a code this function does not know yet: still shown
}

// requirementPresent is what an authorization rule asks of the request, or its result
// where Authorino decided it (why).
func requirementPresent(n authpolicy.Need, why *authpolicy.Why) string {
	if why != nil {
		if t := AuthorinoText(*why); t != "" {
			return t
		}
	}
	return RequirementText(n)
}
