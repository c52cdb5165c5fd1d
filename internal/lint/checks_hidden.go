package lint

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/agpol/agpol/internal/invisible"
	"github.com/agpol/agpol/internal/parallel"
)

func init() {
	Register(&Check{
		Code: "AGP107", Severity: SeverityError, Category: CategorySchema,
		Title: "text hides Unicode bidirectional controls or zero-width characters",
		Explanation: `A string of the object (a name, tool name, rule name, hostname, path, header value,
CEL expression or Rego rule, an annotation) holds a character that changes how the text
reads without being seen: a bidirectional control (U+202A–U+202E, U+2066–U+2069, the
marks U+200E, U+200F and U+061C) or a zero-width character (U+200B–U+200D, U+2060,
U+FEFF). A reviewer reading the pull request sees the text reordered or two different
names as one, while the data plane compares the code points: the policy that runs is not
the one that was read. This is the Trojan Source attack (CVE-2021-42574; Boucher and
Anderson, "Trojan Source: Invisible Vulnerabilities", 2021). The bidirectional controls
are those of Unicode's bidirectional algorithm (UAX #9); the zero-width characters are
invisible identifiers' concern in Unicode TR #36 (security considerations) and UTS #39
(security mechanisms). rustc denies bidirectional controls in source
(text_direction_codepoint_in_literal, text_direction_codepoint_in_comment) and gcc warns
about them (-Wbidi-chars, on by default since gcc 12).

agpol's text output shows each such character as <U+202E>, so what is printed is what
runs; JSON, YAML and SARIF keep the text as written.`,
		Fix: `Delete the character (an editor that shows invisible characters, or
grep -nP '[\x{61C}\x{200B}-\x{200F}\x{202A}-\x{202E}\x{2060}-\x{2069}\x{FEFF}]'
finds it). If the text really needs a right-to-left script, write it without the
control characters.`,
		DataPlanes: AppliesToAll,
		Run:        runHiddenCharacters,
	})
}

// runHiddenCharacters reports each string (key or value) of each object that holds a
// hidden character (internal/invisible), at its field: found when the object was read
// (Inspect), else in the object as read.
func runHiddenCharacters(ctx *Context) []Finding {
	origins := ctx.Origins()
	found := make([][]Finding, len(origins))
	parallel.For(len(origins), func(i int) {
		o := origins[i]
		var fields []hiddenField
		if in, ok := o.Inspected().(*inspected); ok {
			fields = in.hidden
		} else {
			obj := o.Raw().Decoded()
			if obj == nil {
				obj = o.Fresh()
			}
			if obj == nil {
				return
			}
			fields = hiddenFields(obj.Object)
		}
		for _, h := range fields {
			f := ctx.Blame(o, h.path)
			f.Message = fmt.Sprintf("%s %q holds %s: the text a reviewer reads is not the text the data plane compares",
				h.what, invisible.Show(h.text), invisible.Describe(h.r))
			found[i] = append(found[i], f)
		}
	})
	var out []Finding
	for _, fs := range found {
		out = append(out, fs...)
	}
	return out
}

type hiddenField struct {
	path, what, text string
	r                rune
}

// plainKey is a map key written as .key in a field path; others are written [key].
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// hiddenFields lists the keys and values of obj that hold a hidden character, sorted by
// field path; nil when none (the common case, which allocates nothing).
func hiddenFields(obj map[string]any) []hiddenField {
	var out []hiddenField
	hiddenIn(obj, nil, &out)
	sort.Slice(out, func(a, b int) bool { return out[a].path < out[b].path })
	return out
}

// segment is one step of a field path: a map key, or a list index when isIndex.
type segment struct {
	key     string
	index   int
	isIndex bool
}

// hiddenIn walks x, whose field path is the segments in path; a path is written out only
// for a string that holds a hidden character.
func hiddenIn(x any, path []segment, out *[]hiddenField) {
	switch x := x.(type) {
	case string:
		if r, ok := invisible.First(x); ok {
			*out = append(*out, hiddenField{path: fieldPath(path), what: "value", text: x, r: r})
		}
	case []any:
		for i, v := range x {
			hiddenIn(v, append(path, segment{index: i, isIndex: true}), out)
		}
	case map[string]any:
		for k, v := range x {
			p := append(path, segment{key: k})
			if r, ok := invisible.First(k); ok {
				*out = append(*out, hiddenField{path: fieldPath(p), what: "key", text: k, r: r})
			}
			hiddenIn(v, p, out)
		}
	}
}

// fieldPath writes segments as a field path: spec.rules[0].name, with keys that are not
// plain identifiers in brackets.
func fieldPath(segments []segment) string {
	var b strings.Builder
	for i, s := range segments {
		switch {
		case s.isIndex:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case plainKey.MatchString(s.key) && i == 0:
			b.WriteString(s.key)
		case plainKey.MatchString(s.key):
			b.WriteString("." + s.key)
		default:
			b.WriteString("[" + s.key + "]")
		}
	}
	return b.String()
}
