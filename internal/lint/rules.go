package lint

import (
	"strings"

	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/snapshot"
)

// How the reference translator reads a v1alpha1 rule (docs/semantics.md#principals and
// #permissions). These
// helpers describe, they do not decide requests: the engine owns evaluation.

// principalKind says which callers a rule's source selects.
type principalKind int

const (
	principalExact    principalKind = iota // one SPIFFE ID or one ServiceAccount
	principalOmitted                       // no source: any caller, as documented
	principalFailOpen                      // type without its field, or a field without type: any caller
)

// rulePrincipal classifies a rule's source (ruleSourceToPrincipalName).
func rulePrincipal(r *v1alpha1.AccessRule) principalKind {
	s := r.Source
	switch {
	case s.Type == v1alpha1.AuthorizationSourceTypeSPIFFE && s.SPIFFE != nil && *s.SPIFFE != "":
		return principalExact
	case s.Type == v1alpha1.AuthorizationSourceTypeServiceAccount && s.ServiceAccount != nil:
		return principalExact
	case s.Type == "" && s.SPIFFE == nil && s.ServiceAccount == nil:
		return principalOmitted
	}
	return principalFailOpen
}

// l7Fields lists the L7 matchers set on an authorization (ignored by the reference,
// docs/semantics.md#l7-fields).
func l7Fields(a *v1alpha1.AuthorizationRule) []string {
	if a == nil {
		return nil
	}
	var out []string
	if len(a.Methods) > 0 {
		out = append(out, "methods")
	}
	if len(a.Paths) > 0 {
		out = append(out, "paths")
	}
	if len(a.Headers) > 0 {
		out = append(out, "headers")
	}
	if len(a.Hosts) > 0 {
		out = append(out, "hosts")
	}
	if len(a.Ports) > 0 {
		out = append(out, "ports")
	}
	return out
}

// permissionKind says which requests a rule's authorization admits, as translated.
type permissionKind int

const (
	permissionRestricted  permissionKind = iota // MCP methods, the base set, or CEL
	permissionOmitted                           // no authorization: any request, as documented
	permissionEmptyInline                       // Inline with nothing the translator reads: any request
	permissionUnknownType                       // a type the translator does not know: any request
)

// rulePermission classifies a rule's authorization (docs/semantics.md#permissions).
func rulePermission(r *v1alpha1.AccessRule) permissionKind {
	a := r.Authorization
	switch {
	case a == nil:
		return permissionOmitted
	case a.Type == v1alpha1.AuthorizationRuleTypeCEL:
		return permissionRestricted
	case a.Type == v1alpha1.AuthorizationRuleTypeInline:
		if len(a.MCP.Methods) > 0 || a.MCP.MCPBaseProtocolMethodsOption == v1alpha1.MCPBaseProtocolMethodsOptionMatch {
			return permissionRestricted
		}
		return permissionEmptyInline
	}
	return permissionUnknownType
}

// sourceText describes a rule's source for messages.
func sourceText(p *snapshot.XAccessPolicy, r *v1alpha1.AccessRule) string {
	s := r.Source
	switch rulePrincipal(r) {
	case principalOmitted, principalFailOpen:
		return "any caller"
	}
	if s.Type == v1alpha1.AuthorizationSourceTypeSPIFFE {
		return string(*s.SPIFFE)
	}
	ns := s.ServiceAccount.Namespace
	if ns == "" {
		ns = p.Namespace
	}
	return "ServiceAccount " + ns + "/" + s.ServiceAccount.Name
}

// isLegacy reports whether a policy is stored without an action (written at v0alpha0).
func isLegacy(p *snapshot.XAccessPolicy) bool {
	return p.Legacy != nil || p.Spec.Action == ""
}

// enforcedAllow reports whether the policy is an Allow policy of the current API.
func enforcedAllow(p *snapshot.XAccessPolicy) bool {
	return !isLegacy(p) && p.Spec.Action == v1alpha1.ActionTypeAllow
}

func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
