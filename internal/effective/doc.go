// Package effective owns what applies where: which XAccessPolicies the controller
// admits (limits, seniority, CEL validity, recorded status), and the evaluation chain
// of a (gateway, backend) path compiled once: the levels in data-plane order, the
// chosen ExternalAuth policy per level, the Allow policies and their merged rules,
// with CEL programs and matchers ready so that deciding a request is cheap. The
// disputed choices of the upstream semantics are fields of a Semantics value, with
// named presets. It decides nothing about a request and prints nothing.
package effective
