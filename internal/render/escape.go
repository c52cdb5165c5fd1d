package render

import (
	"bytes"
	"io"
	"unicode/utf8"

	"k8s.io/cli-runtime/pkg/printers"
)

// Text renderers print names, rule names, CEL expressions and request names that
// whoever can write a policy (or a request file) controls. Every text renderer writes
// through a TerminalWriter, which passes everything written through one escaper,
// cli-runtime's printers.EscapeTerminal (ESC and CR shown as ^[ and \r, as kubectl
// shows them since CVE-2021-25743), so no control sequence in that text reaches a
// terminal raw.
//
// The styles of a Styler are the only escape sequences written: Styler marks them with
// styleMark, a byte that valid UTF-8 never holds (every input agpol reads is valid
// UTF-8), and the writer turns the marks into ANSI codes after escaping, or drops them
// when colour is off. A stray styleMark is printed as U+FFFD.
const styleMark = 0xff

// style codes, by the byte that follows styleMark.
var styleCodes = map[byte]string{
	'0': "\x1b[0m",
	'1': "\x1b[1m",
	'2': "\x1b[2m",
	'r': "\x1b[31m",
	'g': "\x1b[32m",
	'y': "\x1b[33m",
	'c': "\x1b[36m",
}

// TerminalWriter escapes what is written to it for a terminal; see styleMark.
type TerminalWriter struct {
	w     io.Writer
	color bool
	buf   []byte
}

// NewTerminalWriter returns w escaped for a terminal, with a Styler's styles shown
// when color is set. A TerminalWriter passed again is returned as is.
func NewTerminalWriter(w io.Writer, color bool) *TerminalWriter {
	if t, ok := w.(*TerminalWriter); ok {
		return t
	}
	return &TerminalWriter{w: w, color: color}
}

// Write escapes p and writes it. A style mark split across two writes is kept until
// the next write.
func (t *TerminalWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(t.buf) > 0 {
		p = append(t.buf, p...)
		t.buf = nil
	}
	if len(p) > 0 && p[len(p)-1] == styleMark {
		t.buf = []byte{styleMark}
		p = p[:len(p)-1]
	}
	var out bytes.Buffer
	for len(p) > 0 {
		i := bytes.IndexByte(p, styleMark)
		if i < 0 {
			out.WriteString(printers.EscapeTerminal(string(p)))
			break
		}
		out.WriteString(printers.EscapeTerminal(string(p[:i])))
		code, ok := styleCodes[p[i+1]]
		switch {
		case !ok:
			out.WriteRune(utf8.RuneError)
			p = p[i+1:]
			continue
		case t.color:
			out.WriteString(code)
		}
		p = p[i+2:]
	}
	if _, err := t.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return n, nil
}

// EscapeTerminal is the escaper of every text renderer, for text that is printed
// without a TerminalWriter (one-line formats such as lint's).
func EscapeTerminal(s string) string { return printers.EscapeTerminal(s) }
