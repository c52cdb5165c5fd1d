// Package invisible owns the Unicode characters that change how text reads without
// being seen (Trojan Source, CVE-2021-42574): the bidirectional controls and the
// zero-width characters. lint reports them (AGP107) and render shows them (<U+202E>).
// The list and its sources are in docs/checks.md#agp107.
package invisible

import (
	"fmt"
	"strings"
)

// Kinds of hidden characters.
const (
	Bidi      = "bidirectional control"
	ZeroWidth = "zero-width character"
)

// names are the characters, with their Unicode names and kinds: the bidirectional
// controls rustc's text_direction_codepoint_in_literal lint and gcc's -Wbidi-chars
// report (Unicode UAX #9: U+202A–U+202E, U+2066–U+2069, and the marks U+200E, U+200F,
// U+061C), and the default-ignorable zero-width characters UTS #39 and TR #36 name
// as invisible (U+200B–U+200D, U+2060, U+FEFF).
var names = map[rune]struct{ name, kind string }{
	0x202A: {"LEFT-TO-RIGHT EMBEDDING", Bidi},
	0x202B: {"RIGHT-TO-LEFT EMBEDDING", Bidi},
	0x202C: {"POP DIRECTIONAL FORMATTING", Bidi},
	0x202D: {"LEFT-TO-RIGHT OVERRIDE", Bidi},
	0x202E: {"RIGHT-TO-LEFT OVERRIDE", Bidi},
	0x2066: {"LEFT-TO-RIGHT ISOLATE", Bidi},
	0x2067: {"RIGHT-TO-LEFT ISOLATE", Bidi},
	0x2068: {"FIRST STRONG ISOLATE", Bidi},
	0x2069: {"POP DIRECTIONAL ISOLATE", Bidi},
	0x200E: {"LEFT-TO-RIGHT MARK", Bidi},
	0x200F: {"RIGHT-TO-LEFT MARK", Bidi},
	0x061C: {"ARABIC LETTER MARK", Bidi},
	0x200B: {"ZERO WIDTH SPACE", ZeroWidth},
	0x200C: {"ZERO WIDTH NON-JOINER", ZeroWidth},
	0x200D: {"ZERO WIDTH JOINER", ZeroWidth},
	0x2060: {"WORD JOINER", ZeroWidth},
	0xFEFF: {"ZERO WIDTH NO-BREAK SPACE", ZeroWidth},
}

// Is reports whether r is a hidden character.
func Is(r rune) bool {
	_, ok := names[r]
	return ok
}

// Describe is "U+202E RIGHT-TO-LEFT OVERRIDE (a bidirectional control)".
func Describe(r rune) string {
	n := names[r]
	return fmt.Sprintf("%s %s (a %s)", Code(r), n.name, n.kind)
}

// Code is "U+202E".
func Code(r rune) string { return fmt.Sprintf("U+%04X", r) }

// First returns the first hidden character of s.
func First(s string) (rune, bool) {
	for _, r := range s {
		if Is(r) {
			return r, true
		}
	}
	return 0, false
}

// Show returns s with every hidden character written as <U+XXXX>, so that what is read
// is what runs.
func Show(s string) string {
	if _, ok := First(s); !ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if Is(r) {
			b.WriteString("<" + Code(r) + ">")
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
