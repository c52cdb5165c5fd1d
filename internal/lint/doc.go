// Package lint owns agpol's checks: each has a stable code (AGP101), a
// severity, a category, a one-line title and an explanation with a fix, and
// reports Findings that blame an object, a field path and its file:line. It
// also owns suppressions (an annotation on the object, or a .agpol.yaml config
// file with reasons and expiry dates), the --only/--skip selection and the
// pass/fail verdict against a severity threshold.
//
// Checks read the snapshot (and, as the later stages land, the topology and
// the decision engine through the Context); they never print. The output
// formats live in the output subpackage.
//
// Codes are grouped by category: AGP0xx lint configuration (suppressions),
// AGP1xx schema, AGP2xx references, AGP3xx admission, AGP4xx silent allow-all,
// AGP5xx silent deny or loss, AGP6xx ambiguity. A code, once published, keeps
// its meaning; a retired check keeps its code reserved.
package lint
