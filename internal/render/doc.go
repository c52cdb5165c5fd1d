// Package render owns every output format: kubectl-style tables, JSON and YAML
// reports, and colour and terminal handling. It formats values that other
// packages computed; it never decides anything about policy.
package render
