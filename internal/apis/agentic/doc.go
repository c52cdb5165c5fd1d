// Package agentic holds the group names of the kube-agentic-networking API
// (XAccessPolicy, XBackend). The versioned Go types live in the v0alpha0 and
// v1alpha1 subpackages; they mirror upstream main (c7e4194) field for field.
package agentic

// GroupName is the API group served by kube-agentic-networking today.
const GroupName = "agentic.networking.x-k8s.io"

// LegacyGroupName is the group used until upstream #258 (2026-04-29). agpol
// accepts it as an alias when reading objects; no current CRD serves it.
const LegacyGroupName = "agentic.prototype.x-k8s.io"

// IsGroup reports whether g names the agentic API group or its legacy alias.
func IsGroup(g string) bool { return g == GroupName || g == LegacyGroupName }

// Kinds read by agpol.
const (
	KindXAccessPolicy = "XAccessPolicy"
	KindXBackend      = "XBackend"
)
