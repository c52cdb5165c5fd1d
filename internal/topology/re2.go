package topology

import (
	"regexp"
	"regexp/syntax"
)

// envoyMaxProgramSize is the RE2 program size over which Envoy refuses a safe_regex:
// the runtime key re2.max_program_size.error_level, 100 unless the operator sets it
// (Envoy source/common/common/regex.cc; docs/limits.md "Regular expressions").
const envoyMaxProgramSize = 100

// compileRouteRegex compiles the value of a RegularExpression path or header match as
// Envoy matches it (safe_regex, RE2, whole value) with Go's regexp, which implements
// RE2's syntax. It returns the compiled expression, or an error when neither accepts
// it, and, when Envoy's answer may differ from what Go's expression says, why (nil when
// it does not):
//   - \C (any byte) is RE2 syntax Go's regexp does not have: Envoy accepts the value,
//     agpol cannot match it (re is nil);
//   - a program over Envoy's size limit: Envoy refuses the route configuration that
//     holds it, so which routes it serves is not known (re is set).
//
// The program size is Go's regexp/syntax instruction count of the simplified
// expression, which follows RE2's compiler (one instruction per byte range, split or
// capture) closely but not exactly.
func compileRouteRegex(v string) (re *regexp.Regexp, differs *RegexDiffers, err error) {
	re, err = regexp.Compile(`^(?:` + v + `)$`)
	if err != nil {
		if usesAnyByte(v) {
			return nil, &RegexDiffers{Why: RegexAnyByte, Regex: v}, nil
		}
		return nil, nil, err
	}
	if n := programSize(v); n > envoyMaxProgramSize {
		return re, &RegexDiffers{Why: RegexOverLimit, Regex: v, Instructions: n, Limit: envoyMaxProgramSize}, nil
	}
	return re, nil, nil
}

// usesAnyByte reports whether v has the escape \C outside a character class (RE2
// rejects it inside one).
func usesAnyByte(v string) bool {
	inClass := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && i+1 < len(v):
			if v[i+1] == 'C' && !inClass {
				return true
			}
			i++
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		}
	}
	return false
}

// programSize is the number of instructions v compiles to (0 when it does not parse).
func programSize(v string) int {
	p, err := syntax.Parse(v, syntax.Perl)
	if err != nil {
		return 0
	}
	prog, err := syntax.Compile(p.Simplify())
	if err != nil {
		return 0
	}
	return len(prog.Inst)
}
