package topology

import "testing"

// TestCompileRouteRegex: where Go's regexp and Envoy's RE2 part ways, the compiled
// match says so: \C (RE2 accepts it, Go does not) and programs over Envoy's default
// max_program_size of 100; syntax both refuse (possessive repetition, back-references)
// is an error, and syntax both accept (\Q..\E) compiles without a note.
func TestCompileRouteRegex(t *testing.T) {
	for _, c := range []struct {
		v       string
		compile bool   // Go compiles it
		differs string // why Envoy reads it otherwise (a Regex* code), "" for none
		size    int    // the instructions counted (RegexOverLimit)
		err     bool
	}{
		{v: "/mcp/.*", compile: true},
		{v: `/\Q.*\E/x`, compile: true},
		{v: "/x{97}", compile: true}, // 100 instructions: at the limit
		{v: "/x{98}", compile: true, differs: RegexOverLimit, size: 101},
		{v: "/[a-z]{50}/[0-9]{50}/.*", compile: true, differs: RegexOverLimit, size: -1},
		{v: `/a\Cb`, differs: RegexAnyByte},
		{v: `/[\C]`, err: true}, // RE2 refuses \C in a class too
		{v: "/a*+", err: true},
		{v: `/(a)\1`, err: true},
		{v: "/x([", err: true},
	} {
		re, differs, err := compileRouteRegex(c.v)
		if (re != nil) != c.compile || (err != nil) != c.err {
			t.Errorf("%q: compiled %v, err %v; want compiled %v, err %v", c.v, re != nil, err, c.compile, c.err)
		}
		if c.differs == "" {
			if differs != nil {
				t.Errorf("%q: differs %+v, want nil", c.v, differs)
			}
			continue
		}
		if differs == nil || differs.Why != c.differs || differs.Regex != c.v ||
			(c.differs == RegexOverLimit && (differs.Limit != 100 || differs.Instructions <= 100 || c.size > 0 && differs.Instructions != c.size)) {
			t.Errorf("%q: differs %+v, want %s (size %d)", c.v, differs, c.differs, c.size)
		}
	}
}
