package render

import (
	"bytes"
	"fmt"
	"testing"
)

// TestTerminalWriter: untrusted text is escaped whether colour is on or off; only the
// Styler's styles become ANSI codes, and only with colour on.
func TestTerminalWriter(t *testing.T) {
	hostile := "rule\x1b[2J\x1b[H\rX"
	for _, c := range []struct {
		color bool
		want  string
	}{
		{false, `DENY rule^[[2J^[[H\rX` + "\n"},
		{true, "\x1b[1m\x1b[31mDENY\x1b[0m\x1b[0m rule^[[2J^[[H\\rX\n"},
	} {
		st := Styler{Color: c.color}
		var b bytes.Buffer
		fmt.Fprintf(st.Writer(&b), "%s %s\n", st.Bold(st.Red("DENY")), hostile)
		if b.String() != c.want {
			t.Errorf("color %v: %q, want %q", c.color, b.String(), c.want)
		}
	}
	// A style mark split across writes, and a stray mark byte.
	var b bytes.Buffer
	w := NewTerminalWriter(&b, true)
	w.Write([]byte("a\xff"))
	w.Write([]byte("1b\xffzc"))
	if got, want := b.String(), "a\x1b[1mb\uFFFDzc"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
