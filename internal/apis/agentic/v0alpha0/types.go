// Package v0alpha0 mirrors the XAccessPolicy and XBackend v0alpha0 API of
// kube-agentic-networking at upstream main c7e4194 (XAccessPolicy v0alpha0 is
// served but not stored; XBackend exists only at v0alpha0).
package v0alpha0

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Version is this package's API version.
const Version = "v0alpha0"

// XAccessPolicy is the legacy access policy shape (no spec.action).
type XAccessPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AccessPolicySpec   `json:"spec"`
	Status            AccessPolicyStatus `json:"status,omitempty"`
}

// AccessPolicySpec is the desired state of a v0alpha0 XAccessPolicy.
type AccessPolicySpec struct {
	TargetRefs []gwapiv1.LocalPolicyTargetReferenceWithSectionName `json:"targetRefs"`
	Rules      []AccessRule                                        `json:"rules"`
}

// AccessRule is one named rule.
type AccessRule struct {
	Name          string             `json:"name"`
	Source        Source             `json:"source"`
	Authorization *AuthorizationRule `json:"authorization,omitempty"`
}

// Source selects the caller.
type Source struct {
	Type           AuthorizationSourceType            `json:"type"`
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

// AuthorizationSourceServiceAccount names a ServiceAccount.
type AuthorizationSourceServiceAccount struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// AuthorizationRule is InlineTools, ExternalAuth or CEL.
type AuthorizationRule struct {
	Type         AuthorizationRuleType           `json:"type"`
	Tools        []string                        `json:"tools,omitempty"`
	ExternalAuth *gwapiv1.HTTPExternalAuthFilter `json:"externalAuth,omitempty"`
	CEL          *CELRule                        `json:"cel,omitempty"`
}

// CELRule is a CEL condition; Message was never read by any translator.
type CELRule struct {
	Expression string `json:"expression"`
	Message    string `json:"message,omitempty"`
}

// AuthorizationRuleType is the v0alpha0 authorization kind.
type AuthorizationRuleType string

// Authorization rule types.
const (
	AuthorizationRuleTypeInlineTools  AuthorizationRuleType = "InlineTools"
	AuthorizationRuleTypeExternalAuth AuthorizationRuleType = "ExternalAuth"
	AuthorizationRuleTypeCEL          AuthorizationRuleType = "CEL"
)

// AccessPolicyStatus is the observed state, one entry per target.
type AccessPolicyStatus struct {
	Ancestors []gwapiv1.PolicyAncestorStatus `json:"ancestors"`
}

// XBackend describes an MCP server reachable through a Gateway.
type XBackend struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BackendSpec   `json:"spec"`
	Status            BackendStatus `json:"status,omitempty"`
}

// BackendSpec is the desired state of an XBackend.
type BackendSpec struct {
	MCP MCPBackend `json:"mcp"`
}

// MCPBackend locates the MCP server: exactly one of ServiceName and Hostname.
type MCPBackend struct {
	ServiceName *string `json:"serviceName,omitempty"`
	Hostname    *string `json:"hostname,omitempty"`
	Port        int32   `json:"port"`
	Path        string  `json:"path,omitempty"`
}

// BackendStatus is the observed state of an XBackend.
type BackendStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
