package render

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/agpol/agpol/internal/invisible"
)

// Text renderers print names, rule names, CEL expressions and request names that
// whoever can write a policy (or a request file) controls. Every text renderer writes
// through a TerminalWriter, which passes everything written through one escaper,
// cli-runtime's printers.EscapeTerminal (ESC and CR shown as ^[ and \r, as kubectl
// shows them since CVE-2021-25743), so no control sequence in that text reaches a
// terminal raw; and the bidirectional controls and zero-width characters
// (internal/invisible, Trojan Source) are shown as <U+202E>, so that the text reads as it
// runs.
//
// The styles of a Styler are the only escape sequences written. Styler marks where a
// style starts and ends with styleMark, a byte that valid UTF-8 never holds (every
// input agpol reads is valid UTF-8), followed by the style's code; the writer escapes
// the text between the marks and renders it with the lipgloss styles open there
// (nested styles add up), or drops the marks when colour is off. A stray styleMark is
// printed as U+FFFD.
const styleMark = 0xff

// Style codes, the byte after styleMark.
const (
	styleEnd    = '0' // ends the innermost open style
	styleBold   = '1'
	styleDim    = '2'
	styleRed    = 'r'
	styleGreen  = 'g'
	styleYellow = 'y'
	styleCyan   = 'c'
)

// styles adds the style of each code to the styles open around it.
var styles = map[byte]func(lipgloss.Style) lipgloss.Style{
	styleBold:   func(s lipgloss.Style) lipgloss.Style { return s.Bold(true) },
	styleDim:    func(s lipgloss.Style) lipgloss.Style { return s.Faint(true) },
	styleRed:    func(s lipgloss.Style) lipgloss.Style { return s.Foreground(lipgloss.Red) },
	styleGreen:  func(s lipgloss.Style) lipgloss.Style { return s.Foreground(lipgloss.Green) },
	styleYellow: func(s lipgloss.Style) lipgloss.Style { return s.Foreground(lipgloss.Yellow) },
	styleCyan:   func(s lipgloss.Style) lipgloss.Style { return s.Foreground(lipgloss.Cyan) },
}

// plain is the style text starts with: no attributes, tabs kept as they are.
var plain = lipgloss.NewStyle().TabWidth(lipgloss.NoTabConversion)

// TerminalWriter escapes what is written to it for a terminal; see styleMark.
type TerminalWriter struct {
	w      io.Writer
	styled bool             // styles are rendered, through a colorprofile.Writer
	open   []lipgloss.Style // the styles open, each with the ones around it; innermost last
	buf    []byte
}

// NewTerminalWriter returns w escaped for a terminal, with a Styler's styles shown
// when color is set (in the colour profile the environment names). A TerminalWriter
// passed again is returned as is.
func NewTerminalWriter(w io.Writer, color bool) *TerminalWriter {
	p := colorprofile.NoTTY
	if color {
		p = envProfile()
	}
	return newTerminalWriter(w, p)
}

// newTerminalWriter is NewTerminalWriter with styles rendered in profile p (none for
// NoTTY and Unknown).
func newTerminalWriter(w io.Writer, p colorprofile.Profile) *TerminalWriter {
	if t, ok := w.(*TerminalWriter); ok {
		return t
	}
	if p <= colorprofile.NoTTY {
		return &TerminalWriter{w: w}
	}
	return &TerminalWriter{w: &colorprofile.Writer{Forward: w, Profile: p}, styled: true}
}

// Write escapes p and writes it. A style mark or a UTF-8 character split across two
// writes is kept until the next write.
func (t *TerminalWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(t.buf) > 0 {
		p = append(t.buf, p...)
		t.buf = nil
	}
	if len(p) > 0 && p[len(p)-1] == styleMark {
		t.buf = []byte{styleMark}
		p = p[:len(p)-1]
	} else if k := partialRune(p); k > 0 {
		// A character split across writes is escaped whole.
		t.buf = append([]byte(nil), p[len(p)-k:]...)
		p = p[:len(p)-k]
	}
	var out bytes.Buffer
	for len(p) > 0 {
		i := bytes.IndexByte(p, styleMark)
		if i < 0 {
			t.text(&out, p)
			break
		}
		t.text(&out, p[:i])
		code := p[i+1]
		switch add := styles[code]; {
		case code == styleEnd:
			if len(t.open) > 0 {
				t.open = t.open[:len(t.open)-1]
			}
		case add != nil:
			t.open = append(t.open, add(t.current()))
		default:
			out.WriteRune(utf8.RuneError)
			p = p[i+1:]
			continue
		}
		p = p[i+2:]
	}
	if _, err := t.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return n, nil
}

// partialRune is the length of the UTF-8 character p ends in the middle of, 0 if none.
func partialRune(p []byte) int {
	for k := 1; k < utf8.UTFMax && k <= len(p); k++ {
		b := p[len(p)-k]
		if utf8.RuneStart(b) {
			if b >= 0xc0 && !utf8.FullRune(p[len(p)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}

func (t *TerminalWriter) current() lipgloss.Style {
	if len(t.open) == 0 {
		return plain
	}
	return t.open[len(t.open)-1]
}

// text writes p escaped, in the style open when colour is on. Each line is rendered
// on its own, so that lipgloss does not pad lines to a common width.
func (t *TerminalWriter) text(out *bytes.Buffer, p []byte) {
	s := EscapeTerminal(string(p))
	if !t.styled || len(t.open) == 0 {
		out.WriteString(s)
		return
	}
	st := t.current()
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			out.WriteByte('\n')
		}
		if line != "" {
			out.WriteString(st.Render(line))
		}
	}
}

// EscapeTerminal is the escaper of every text renderer, for text that is printed
// without a TerminalWriter (one-line formats such as lint's): terminal controls as
// kubectl shows them, hidden characters as <U+XXXX>.
func EscapeTerminal(s string) string { return invisible.Show(printers.EscapeTerminal(s)) }
