// Package v1 holds Go types for Kuadrant's AuthPolicy (kuadrant.io/v1): the
// target reference, the Defaults & Overrides blocks with their strategy, bare
// rules, policy-level predicates, named patterns and every rule section.
// Rule bodies are Authorino v1beta3 shapes; they travel opaquely through the
// D/O fold and are only looked into where agpol explains what a request must present.
package v1

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GroupName is Kuadrant's API group.
const GroupName = "kuadrant.io"

// Version is this package's API version.
const Version = "v1"

// KindAuthPolicy is the kind read by agpol.
const KindAuthPolicy = "AuthPolicy"

// AuthPolicy is a Kuadrant AuthPolicy.
type AuthPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AuthPolicySpec `json:"spec"`
	Status            PolicyStatus   `json:"status,omitempty"`
}

// AuthPolicySpec holds exactly one of Defaults, Overrides or the bare (inline) spec.
type AuthPolicySpec struct {
	TargetRef            gwapiv1.LocalPolicyTargetReferenceWithSectionName `json:"targetRef"`
	Defaults             *MergeableAuthPolicySpec                          `json:"defaults,omitempty"`
	Overrides            *MergeableAuthPolicySpec                          `json:"overrides,omitempty"`
	AuthPolicySpecProper `json:",inline"`
}

// Merge strategies.
const (
	StrategyAtomic = "atomic"
	StrategyMerge  = "merge"
)

// MergeableAuthPolicySpec is a defaults or overrides block.
type MergeableAuthPolicySpec struct {
	Strategy             string `json:"strategy,omitempty"`
	AuthPolicySpecProper `json:",inline"`
}

// AuthPolicySpecProper is the rule-bearing part of a policy.
type AuthPolicySpecProper struct {
	NamedPatterns map[string]apiextv1.JSON `json:"patterns,omitempty"`
	Conditions    []WhenPredicate          `json:"when,omitempty"`
	AuthScheme    *AuthSchemeSpec          `json:"rules,omitempty"`
}

// WhenPredicate is one CEL predicate.
type WhenPredicate struct {
	Predicate string `json:"predicate"`
}

// AuthSchemeSpec holds the named rules of each section. Bodies are opaque JSON here.
type AuthSchemeSpec struct {
	Authentication map[string]apiextv1.JSON `json:"authentication,omitempty"`
	Metadata       map[string]apiextv1.JSON `json:"metadata,omitempty"`
	Authorization  map[string]apiextv1.JSON `json:"authorization,omitempty"`
	Response       *ResponseSpec            `json:"response,omitempty"`
	Callbacks      map[string]apiextv1.JSON `json:"callbacks,omitempty"`
}

// ResponseSpec holds the deny responses and success headers/filters.
type ResponseSpec struct {
	Unauthenticated *apiextv1.JSON  `json:"unauthenticated,omitempty"`
	Unauthorized    *apiextv1.JSON  `json:"unauthorized,omitempty"`
	Success         SuccessResponse `json:"success,omitempty"`
}

// SuccessResponse holds named success headers and filters.
type SuccessResponse struct {
	Headers map[string]apiextv1.JSON `json:"headers,omitempty"`
	Filters map[string]apiextv1.JSON `json:"filters,omitempty"`
}

// PolicyStatus is the recorded status.
type PolicyStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}
