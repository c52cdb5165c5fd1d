// Package differential checks agpol's reference semantics against the upstream
// kube-agentic-networking controller and translator (v0.1.0): it gives policies the
// status pkg/controller writes, runs pkg/translator to get the Envoy configuration,
// evaluates requests against that configuration with an evaluator of Envoy's
// documented semantics (route matching, RBAC, ext_authz enablement, per-route RBAC),
// and compares the verdicts with agpol's. It is imported only by tests: a dependency
// test in cmd/agpol keeps it, and the upstream modules, out of the binary.
package differential
