// Package whatif owns the decision space and the questions asked of all of it: which
// identities, (gateway, listener, backend) targets and operations (initialize,
// tools/list, tools/call of each tool) exist in a snapshot, the decision of every
// point of that space under one or more semantics (through the compiled chains of
// package effective and explain.Query.Decide, explain's own decision procedure without a
// trace; enumerated exactly, never sampled), and the views built on it:
// can-i --list for one identity, who-can for one tool, the identity × (backend, tool)
// matrix, and the before/after diff of two snapshots. It also reads the tools
// inventory format (a saved MCP tools/list response per backend). It neither loads
// objects nor prints.
package whatif
