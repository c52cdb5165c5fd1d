package v1

import (
	"encoding/json"
	"fmt"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The types below are the parts of Authorino's v1beta3 rule shapes that agpol reads to
// explain what a request must present. The D/O fold never uses them: it compares rule
// bodies as raw JSON. Decode a body with the Parse* functions; unknown fields are ignored.

// CommonEvaluatorSpec is embedded in every Authorino rule.
type CommonEvaluatorSpec struct {
	// Priority orders evaluators inside Authorino (lower first); it is not a D/O precedence.
	Priority int `json:"priority,omitempty"`
	// Metrics enables per-evaluator metrics.
	Metrics bool `json:"metrics,omitempty"`
	// Conditions are the rule-level `when` conditions (all must hold for the rule to run).
	Conditions []PatternExpressionOrRef `json:"when,omitempty"`
	// Cache caches the evaluator's result.
	Cache *EvaluatorCaching `json:"cache,omitempty"`
}

// EvaluatorCaching is a rule's cache setting.
type EvaluatorCaching struct {
	Key ValueOrSelector `json:"key"`
	TTL int             `json:"ttl,omitempty"`
}

// ValueOrSelector is a static value, an Authorino JSON selector, or a CEL expression.
type ValueOrSelector struct {
	Value      *apiextv1.JSON `json:"value,omitempty"`
	Selector   string         `json:"selector,omitempty"`
	Expression string         `json:"expression,omitempty"`
}

// PatternExpression is one selector/operator/value check.
type PatternExpression struct {
	Selector string `json:"selector,omitempty"`
	Operator string `json:"operator,omitempty"`
	Value    string `json:"value,omitempty"`
}

// PatternExpressionOrRef is a rule-level condition: a pattern, a CEL predicate, a reference
// to a named pattern set, or a conjunction/disjunction of further conditions.
type PatternExpressionOrRef struct {
	PatternExpression `json:",inline"`
	Predicate         string                   `json:"predicate,omitempty"`
	PatternRef        string                   `json:"patternRef,omitempty"`
	All               []PatternExpressionOrRef `json:"all,omitempty"`
	Any               []PatternExpressionOrRef `json:"any,omitempty"`
}

// NamedPattern is the body of a named pattern set (spec.patterns.NAME).
type NamedPattern struct {
	AllOf []PatternExpression `json:"allOf"`
}

// Credentials says where a request carries its credential. Authorino's default (all fields
// empty) is the Authorization header with the prefix "Bearer".
type Credentials struct {
	AuthorizationHeader *Prefixed `json:"authorizationHeader,omitempty"`
	CustomHeader        *Named    `json:"customHeader,omitempty"`
	QueryString         *Named    `json:"queryString,omitempty"`
	Cookie              *Named    `json:"cookie,omitempty"`
}

// Prefixed is the Authorization header with a scheme prefix.
type Prefixed struct {
	Prefix string `json:"prefix,omitempty"`
}

// Named names a header, query parameter or cookie.
type Named struct {
	Name string `json:"name"`
}

// AuthenticationSpec is one named authentication rule: exactly one method is expected.
type AuthenticationSpec struct {
	CommonEvaluatorSpec   `json:",inline"`
	Credentials           Credentials                `json:"credentials,omitempty"`
	APIKey                *APIKeyAuthenticationSpec  `json:"apiKey,omitempty"`
	JWT                   *JWTAuthenticationSpec     `json:"jwt,omitempty"`
	OAuth2Introspection   *OAuth2IntrospectionSpec   `json:"oauth2Introspection,omitempty"`
	KubernetesTokenReview *KubernetesTokenReviewSpec `json:"kubernetesTokenReview,omitempty"`
	X509                  *X509ClientCertificateSpec `json:"x509,omitempty"`
	Plain                 *PlainIdentitySpec         `json:"plain,omitempty"`
	Anonymous             *AnonymousAccessSpec       `json:"anonymous,omitempty"`
	Defaults              map[string]ValueOrSelector `json:"defaults,omitempty"`
	Overrides             map[string]ValueOrSelector `json:"overrides,omitempty"`
}

// APIKeyAuthenticationSpec validates API keys stored in Secrets matching a label selector.
type APIKeyAuthenticationSpec struct {
	Selector      *metav1.LabelSelector `json:"selector"`
	AllNamespaces bool                  `json:"allNamespaces,omitempty"`
}

// JWTAuthenticationSpec validates JWTs from an OIDC issuer or a JWKS.
type JWTAuthenticationSpec struct {
	IssuerURL string `json:"issuerUrl,omitempty"`
	JwksURL   string `json:"jwksUrl,omitempty"`
	TTL       int    `json:"ttl,omitempty"`
}

// OAuth2IntrospectionSpec validates opaque tokens at an introspection endpoint.
type OAuth2IntrospectionSpec struct {
	Endpoint       string `json:"endpoint"`
	TokenTypeHint  string `json:"tokenTypeHint,omitempty"`
	CredentialsRef struct {
		Name string `json:"name"`
	} `json:"credentialsRef"`
}

// KubernetesTokenReviewSpec validates Kubernetes tokens with the TokenReview API.
type KubernetesTokenReviewSpec struct {
	Audiences []string `json:"audiences,omitempty"`
}

// X509ClientCertificateSpec validates client certificates against CAs in Secrets.
type X509ClientCertificateSpec struct {
	Selector      *metav1.LabelSelector `json:"selector"`
	AllNamespaces bool                  `json:"allNamespaces,omitempty"`
	Source        *X509Source           `json:"source,omitempty"`
}

// X509Source says where the client certificate is read from (default: the TLS connection).
type X509Source struct {
	XFCCHeader       string `json:"xfccHeader,omitempty"`
	ClientCertHeader string `json:"clientCertHeader,omitempty"`
	Expression       string `json:"expression,omitempty"`
}

// PlainIdentitySpec takes the identity from a selector or CEL expression over the request.
type PlainIdentitySpec struct {
	Selector   string `json:"selector,omitempty"`
	Expression string `json:"expression,omitempty"`
}

// AnonymousAccessSpec accepts every request.
type AnonymousAccessSpec struct{}

// AuthorizationSpec is one named authorization rule (methods other than pattern matching
// are kept opaque: they depend on external systems).
type AuthorizationSpec struct {
	CommonEvaluatorSpec           `json:",inline"`
	PatternMatching               *PatternMatchingSpec `json:"patternMatching,omitempty"`
	OPA                           *apiextv1.JSON       `json:"opa,omitempty"`
	KubernetesSubjectAccessReview *apiextv1.JSON       `json:"kubernetesSubjectAccessReview,omitempty"`
	SpiceDB                       *apiextv1.JSON       `json:"spicedb,omitempty"`
}

// PatternMatchingSpec authorizes when all patterns hold.
type PatternMatchingSpec struct {
	Patterns []PatternExpressionOrRef `json:"patterns"`
}

// EvaluatorCommon decodes only the common evaluator fields of any rule body (metadata,
// callbacks, success headers and filters).
type EvaluatorCommon struct {
	CommonEvaluatorSpec `json:",inline"`
}

// AuthenticationMethods lists the methods set in a rule, in a fixed order.
func (a *AuthenticationSpec) AuthenticationMethods() []string {
	var out []string
	if a.APIKey != nil {
		out = append(out, "apiKey")
	}
	if a.JWT != nil {
		out = append(out, "jwt")
	}
	if a.OAuth2Introspection != nil {
		out = append(out, "oauth2Introspection")
	}
	if a.KubernetesTokenReview != nil {
		out = append(out, "kubernetesTokenReview")
	}
	if a.X509 != nil {
		out = append(out, "x509")
	}
	if a.Plain != nil {
		out = append(out, "plain")
	}
	if a.Anonymous != nil {
		out = append(out, "anonymous")
	}
	return out
}

// ParseAuthentication decodes an authentication rule body.
func ParseAuthentication(raw []byte) (*AuthenticationSpec, error) {
	out := &AuthenticationSpec{}
	return out, decodeRule(raw, out)
}

// ParseAuthorization decodes an authorization rule body.
func ParseAuthorization(raw []byte) (*AuthorizationSpec, error) {
	out := &AuthorizationSpec{}
	return out, decodeRule(raw, out)
}

// ParseEvaluator decodes the common evaluator fields of any rule body.
func ParseEvaluator(raw []byte) (*EvaluatorCommon, error) {
	out := &EvaluatorCommon{}
	return out, decodeRule(raw, out)
}

// ParseNamedPattern decodes a named pattern set.
func ParseNamedPattern(raw []byte) (*NamedPattern, error) {
	out := &NamedPattern{}
	return out, decodeRule(raw, out)
}

func decodeRule(raw []byte, into any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("decoding rule: %w", err)
	}
	return nil
}
