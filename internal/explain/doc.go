// Package explain owns the request model and the decision: given a simulated agent
// request (identity, HTTP, MCP) and the compiled chains of package effective, it
// resolves the route, matches every rule as the data plane would (principal, MCP
// method and params, base protocol set, CEL with cel-go, L7 fields when enforced),
// consults or branches on external authorizers, and returns a Decision with an
// ordered Trace. The decision and its trace are data (a Cause; per step an Event, the
// rule field that failed with what it wanted and saw, the source position): package
// render writes their sentences. It also parses request files and runs batches. It
// neither loads objects nor prints.
package explain
