// Package kuadrantdiff checks agpol's Kuadrant semantics against kuadrant-operator's
// and Authorino's own code: it generates topologies with AuthPolicies, hands each to
// the oracle (hack/kuadrant-oracle, a separate Go module and process that runs
// policy-machinery, kuadrant-operator v1.5.2 and Authorino v0.25.0), and compares per
// path the effective rule keys and sources, per policy the conditions, per path where
// the AuthConfig is written, and per request the wasm-shim's selection (a cel-go
// stand-in), the top-level `when` and Authorino's verdict with agpol's. It is
// imported only by tests: a dependency test in cmd/agpol keeps it out of the binary.
package kuadrantdiff
