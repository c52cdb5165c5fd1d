package render

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

// TestTerminalWriter: untrusted text is escaped whether colour is on or off; only the
// Styler's styles become ANSI codes, and only with colour on, in the colour profile.
func TestTerminalWriter(t *testing.T) {
	hostile := "rule\x1b[2J\x1b[H\rX"
	for _, c := range []struct {
		name string
		st   Styler
		want string
	}{
		{"off", Styler{}, `DENY bold cyan bold` + "\nline rule^[[2J^[[H\\rX\n"},
		{"ansi", Styler{Color: true, Profile: colorprofile.ANSI},
			"\x1b[1;31mDENY\x1b[m \x1b[1mbold \x1b[m\x1b[1;36mcyan\x1b[m\x1b[1m bold\x1b[m\n\x1b[1mline\x1b[m rule^[[2J^[[H\\rX\n"},
		// ASCII keeps text decoration and drops colours.
		{"ascii", Styler{Color: true, Profile: colorprofile.ASCII},
			"\x1b[1mDENY\x1b[m \x1b[1mbold \x1b[m\x1b[1mcyan\x1b[m\x1b[1m bold\x1b[m\n\x1b[1mline\x1b[m rule^[[2J^[[H\\rX\n"},
	} {
		st := c.st
		var b bytes.Buffer
		// Nested styles add up, and a style spans a line break without padding lines.
		fmt.Fprintf(st.Writer(&b), "%s %s %s\n", st.Bold(st.Red("DENY")), st.Bold("bold "+st.Cyan("cyan")+" bold\nline"), hostile)
		if b.String() != c.want {
			t.Errorf("%s: %q, want %q", c.name, b.String(), c.want)
		}
	}
	// A style mark split across writes, and a stray mark byte.
	var b bytes.Buffer
	w := newTerminalWriter(&b, colorprofile.ANSI)
	w.Write([]byte("a\xff"))
	w.Write([]byte("1b\xffzc\xff0d"))
	if got, want := b.String(), "a\x1b[1mb\x1b[m\uFFFD\x1b[1mzc\x1b[md"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestTerminalWriterHiddenCharacters: bidirectional controls and zero-width characters
// (Trojan Source) are shown as <U+XXXX> with colour on or off, also when a write splits
// one, and by EscapeTerminal.
func TestTerminalWriterHiddenCharacters(t *testing.T) {
	hostile := "isAdmin\u202E \u2066// check later\u2069 \u2066 get\u200Buser"
	want := "isAdmin<U+202E> <U+2066>// check later<U+2069> <U+2066> get<U+200B>user"
	for _, p := range []colorprofile.Profile{colorprofile.NoTTY, colorprofile.ANSI} {
		var b bytes.Buffer
		fmt.Fprint(newTerminalWriter(&b, p), hostile)
		if b.String() != want {
			t.Errorf("profile %v: %q, want %q", p, b.String(), want)
		}
	}
	var b bytes.Buffer
	w := newTerminalWriter(&b, colorprofile.NoTTY)
	raw := []byte("a\u202Eb")
	w.Write(raw[:2]) // "a" and the first byte of U+202E
	w.Write(raw[2:])
	if got := b.String(); got != "a<U+202E>b" {
		t.Errorf("split write: %q, want %q", got, "a<U+202E>b")
	}
	if got := EscapeTerminal("x\u200Fy\x1b"); got != "x<U+200F>y^[" {
		t.Errorf("EscapeTerminal: %q", got)
	}
}

// TestColorProfile: the flag first, then NO_COLOR and TERM=dumb, then whether the
// output is a terminal.
func TestColorProfile(t *testing.T) {
	var notTTY bytes.Buffer
	for _, c := range []struct {
		mode          ColorMode
		noColor, term string
		want          bool
	}{
		{ColorAlways, "1", "dumb", true},
		{ColorAlways, "", "", true},
		{ColorNever, "", "xterm-256color", false},
		{ColorAuto, "yes", "xterm-256color", false},
		{ColorAuto, "", "dumb", false},
		{ColorAuto, "", "xterm-256color", false}, // not a terminal
	} {
		t.Setenv("NO_COLOR", c.noColor)
		t.Setenv("TERM", c.term)
		p := ColorProfile(c.mode, &notTTY)
		if got := UseColor(c.mode, &notTTY); got != c.want || (p > colorprofile.NoTTY) != c.want {
			t.Errorf("--color %s NO_COLOR=%q TERM=%q: %v (%v), want %v", c.mode, c.noColor, c.term, got, p, c.want)
		}
		if c.mode == ColorAlways && p < colorprofile.ANSI {
			t.Errorf("--color always: profile %v", p)
		}
	}
}
