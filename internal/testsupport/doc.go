// Package testsupport holds code used only by tests and the long proof runs, never by the
// agpol binary (cmd/agpol's TestBinaryDependencies keeps it out):
//
//   - differential: agpol's kube-agentic-networking half against the upstream translator
//     and Envoy's RBAC (make differential);
//   - kuadrantdiff: agpol's Kuadrant half against kuadrant-operator and Authorino, through
//     the hack/kuadrant-oracle process (make differential-kuadrant, make test-kuadrant);
//   - difftest: what those two share (seeded runs on parallel workers, shrinking,
//     regression cases as manifest files);
//   - testenv: a real kube-apiserver and etcd built from their Go modules, for live tests.
package testsupport
