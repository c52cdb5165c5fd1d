// Package v1alpha1 mirrors the XAccessPolicy v1alpha1 API of
// kube-agentic-networking at upstream main c7e4194, including the L7 fields
// (methods, paths, headers, hosts, ports) and the optional rule source that
// the published v0.1.0 Go module lacks.
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Version is this package's API version.
const Version = "v1alpha1"

// XAccessPolicy is an access policy for MCP traffic attached to a Gateway or XBackend.
type XAccessPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AccessPolicySpec   `json:"spec"`
	Status            AccessPolicyStatus `json:"status,omitempty"`
}

// AccessPolicySpec is the desired state of an XAccessPolicy.
type AccessPolicySpec struct {
	TargetRefs   []gwapiv1.LocalPolicyTargetReferenceWithSectionName `json:"targetRefs"`
	Action       AccessPolicyActionType                              `json:"action"`
	ExternalAuth *gwapiv1.HTTPExternalAuthFilter                     `json:"externalAuth,omitempty"`
	Rules        []AccessRule                                        `json:"rules,omitempty"`
}

// AccessPolicyActionType is Allow or ExternalAuth.
type AccessPolicyActionType string

// Policy actions.
const (
	ActionTypeAllow        AccessPolicyActionType = "Allow"
	ActionTypeExternalAuth AccessPolicyActionType = "ExternalAuth"
)

// MCPBaseProtocolMethodsOption says whether a rule also matches the MCP base protocol methods.
type MCPBaseProtocolMethodsOption string

// Base protocol options; SKIP is the CRD default.
const (
	MCPBaseProtocolMethodsOptionSkip  MCPBaseProtocolMethodsOption = "SKIP_BASE_PROTOCOL_METHODS"
	MCPBaseProtocolMethodsOptionMatch MCPBaseProtocolMethodsOption = "MATCH_BASE_PROTOCOL_METHODS"
)

// AccessRule is one named rule of a policy.
type AccessRule struct {
	Name          string             `json:"name"`
	Source        AccessRuleSource   `json:"source,omitempty"`
	Authorization *AuthorizationRule `json:"authorization,omitempty"`
}

// AccessRuleSource selects the caller.
type AccessRuleSource struct {
	Type           AuthorizationSourceType            `json:"type,omitempty"`
	SPIFFE         *AuthorizationSourceSPIFFE         `json:"spiffe,omitempty"`
	ServiceAccount *AuthorizationSourceServiceAccount `json:"serviceAccount,omitempty"`
}

// AuthorizationSourceType is ServiceAccount or SPIFFE.
type AuthorizationSourceType string

// Source types.
const (
	AuthorizationSourceTypeSPIFFE         AuthorizationSourceType = "SPIFFE"
	AuthorizationSourceTypeServiceAccount AuthorizationSourceType = "ServiceAccount"
)

// AuthorizationSourceSPIFFE is a SPIFFE ID.
type AuthorizationSourceSPIFFE string

// AuthorizationSourceServiceAccount names a ServiceAccount; Namespace defaults to the policy's.
type AuthorizationSourceServiceAccount struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// AuthorizationRule says what the source may do.
type AuthorizationRule struct {
	Type    AuthorizationRuleType `json:"type"`
	Methods []HTTPMethod          `json:"methods,omitempty"`
	Paths   []HTTPPathMatch       `json:"paths,omitempty"`
	Headers []HTTPHeaderMatch     `json:"headers,omitempty"`
	Hosts   []Hostname            `json:"hosts,omitempty"`
	Ports   []PortNumber          `json:"ports,omitempty"`
	MCP     MCPAttributes         `json:"mcp,omitempty"`
	CEL     *AccessPolicyCELRule  `json:"cel,omitempty"`
}

// AccessPolicyCELRule is a CEL condition.
type AccessPolicyCELRule struct {
	Expression string `json:"expression"`
}

// MCPAttributes restricts MCP methods.
type MCPAttributes struct {
	Methods                      []MCPMethod                  `json:"methods,omitempty"`
	MCPBaseProtocolMethodsOption MCPBaseProtocolMethodsOption `json:"mcpBaseProtocolMethodsOption,omitempty"`
}

// MCPMethod is an MCP method (or category) with optional params.name values.
type MCPMethod struct {
	Name   MCPMethodName    `json:"name"`
	Params []MCPMethodParam `json:"params,omitempty"`
}

// MCPMethodParam is a value matched against JSON-RPC params.name.
type MCPMethodParam string

// MCPMethodName is an MCP method name or one of the categories tools, prompts, resources.
type MCPMethodName string

// AuthorizationRuleType is Inline or CEL.
type AuthorizationRuleType string

// Authorization rule types.
const (
	AuthorizationRuleTypeInline AuthorizationRuleType = "Inline"
	AuthorizationRuleTypeCEL    AuthorizationRuleType = "CEL"
)

// HTTPMethod is an HTTP request method.
type HTTPMethod string

// Hostname is a host name, optionally with a leading "*." wildcard.
type Hostname string

// PortNumber is a TCP port.
type PortNumber int32

// PathMatchType is how a path is matched.
type PathMatchType string

// Path match types; PathPrefix is the default.
const (
	PathMatchExact             PathMatchType = "Exact"
	PathMatchPathPrefix        PathMatchType = "PathPrefix"
	PathMatchRegularExpression PathMatchType = "RegularExpression"
)

// HTTPPathMatch matches the request path.
type HTTPPathMatch struct {
	Type  *PathMatchType `json:"type,omitempty"`
	Value *string        `json:"value,omitempty"`
}

// HeaderMatchType is how a header is matched.
type HeaderMatchType string

// Header match types; Exact is the default.
const (
	HeaderMatchExact             HeaderMatchType = "Exact"
	HeaderMatchRegularExpression HeaderMatchType = "RegularExpression"
)

// HTTPHeaderName is a header name.
type HTTPHeaderName string

// HTTPHeaderMatch matches one request header.
type HTTPHeaderMatch struct {
	Type  *HeaderMatchType `json:"type,omitempty"`
	Name  HTTPHeaderName   `json:"name"`
	Value string           `json:"value"`
}

// Policy condition type and reasons written by the controller.
const (
	PolicyConditionAccepted      gwapiv1.PolicyConditionType   = "Accepted"
	PolicyReasonAccepted         gwapiv1.PolicyConditionReason = "Accepted"
	PolicyLimitPerTargetExceeded gwapiv1.PolicyConditionReason = "LimitPerTargetExceeded"
	PolicyReasonInvalidCEL       gwapiv1.PolicyConditionReason = "InvalidCEL"
)

// AccessPolicyStatus is the observed state, one entry per target.
type AccessPolicyStatus struct {
	Ancestors []gwapiv1.PolicyAncestorStatus `json:"ancestors"`
}
