package render

import (
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/term"
)

// DefaultWidth is the width of text written anywhere but a terminal (a pipe, a file, CI
// logs): 100 columns.
const DefaultWidth = 100

// MinWidth is the narrowest width text is wrapped to: a narrower terminal gets lines of
// MinWidth columns rather than a word or two per line.
const MinWidth = 40

// TextWidth is the width text tables, the lines around them and trees fit. The command
// line sets it once per run, from Width of standard output.
var TextWidth = DefaultWidth

// Width is the width of text written to w, decided as gh decides it: on a terminal,
// COLUMNS when it holds a positive number, else the terminal's size; DefaultWidth when w
// is not a terminal or neither is known. Never less than MinWidth.
func Width(w io.Writer) int {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return DefaultWidth
	}
	return terminalWidth(os.Getenv("COLUMNS"), func() (int, error) {
		cols, _, err := term.GetSize(int(f.Fd()))
		return cols, err
	})
}

// terminalWidth is Width on a terminal: columns (COLUMNS) first, then size.
func terminalWidth(columns string, size func() (int, error)) int {
	n, err := strconv.Atoi(strings.TrimSpace(columns))
	if err != nil || n <= 0 {
		if n, err = size(); err != nil || n <= 0 {
			n = DefaultWidth
		}
	}
	return max(n, MinWidth)
}

// wrapLine returns line broken at spaces into lines of at most width columns (a longer
// word stays whole), each continuation indented two columns more than line; line as it
// is when it fits. Widths ignore style marks, so a styled line wraps where its plain
// form does.
func wrapLine(line string, width int) string {
	return wrapHang(line, width, 2)
}

// wrapHang is wrapLine with continuation lines indented hang columns more than line.
// The words are wrapped by charmbracelet/x/ansi's Wordwrap, which knows display widths
// and escape sequences; names stay whole (ansi breaks after a hyphen: a hyphen is
// handed to it as a non-breaking one), and so do placeholders such as "<other tool>".
func wrapHang(line string, width, hang int) string {
	if markedWidth(line) <= width {
		return line
	}
	text := strings.TrimLeft(line, " ")
	lead := line[:len(line)-len(text)]
	enc := encodeForWrap(text)
	first, _, _ := strings.Cut(ansi.Wordwrap(enc, width-len(lead), ""), "\n")
	rest := strings.TrimLeft(enc[len(first):], " ")
	var b strings.Builder
	b.WriteString(lead + decodeFromWrap(first))
	if rest != "" {
		indent := lead + strings.Repeat(" ", hang)
		for _, l := range strings.Split(ansi.Wordwrap(rest, width-len(indent), ""), "\n") {
			b.WriteString("\n" + indent + decodeFromWrap(l))
		}
	}
	return b.String()
}

// What wrapHang hands ansi.Wordwrap in place of the text's own bytes: a style mark
// becomes an APC sequence (no width), a hyphen a non-breaking hyphen, a space inside a
// placeholder a no-break space. ESC and CR of the text itself are escaped first, as the
// TerminalWriter shows them, so the only sequences Wordwrap sees are the marks.
const (
	apcStart  = "\x1b_"
	apcEnd    = "\x1b\\"
	nbHyphen  = "\u2011"
	noBreakSp = "\u00a0"
)

func encodeForWrap(text string) string {
	text = EscapeTerminal(text)
	keepWhole := !strings.Contains(text, nbHyphen) && !strings.Contains(text, noBreakSp)
	var b strings.Builder
	for i, word := range placeholders(strings.Split(text, " ")) {
		if i > 0 {
			b.WriteByte(' ')
		}
		if keepWhole {
			word = strings.ReplaceAll(strings.ReplaceAll(word, " ", noBreakSp), "-", nbHyphen)
		}
		for j := 0; j < len(word); j++ {
			if word[j] == styleMark && j+1 < len(word) {
				b.WriteString(apcStart + word[j+1:j+2] + apcEnd)
				j++
				continue
			}
			b.WriteByte(word[j])
		}
	}
	return b.String()
}

var wrapDecoder = strings.NewReplacer(nbHyphen, "-", noBreakSp, " ")

func decodeFromWrap(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, apcStart)
		if i < 0 || i+len(apcStart)+1+len(apcEnd) > len(s) {
			break
		}
		b.WriteString(s[:i])
		b.WriteString(string([]byte{styleMark, s[i+len(apcStart)]}))
		s = s[i+len(apcStart)+1+len(apcEnd):]
	}
	b.WriteString(s)
	return wrapDecoder.Replace(b.String())
}

// placeholders joins the words of a placeholder such as "<other tool>" into one.
func placeholders(words []string) []string {
	out := words[:0:0]
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "<") && !strings.Contains(w, ">") {
			for j := i + 1; j < len(words) && j < i+4; j++ {
				if strings.Contains(words[j], ">") && !strings.Contains(words[j], "<") {
					w, i = strings.Join(words[i:j+1], " "), j
					break
				}
			}
		}
		out = append(out, w)
	}
	return out
}

// Reflow fits prose written for a wider screen (help, lint --explain) into width columns:
// a paragraph (consecutive lines that start with no blank, up to a blank line or a line
// ending in a colon) with a line wider than width is joined and wrapped again; indented
// lines (examples, lists) are wrapped on their own, continuations two columns further.
// Text that fits is returned as it is.
func Reflow(text string, width int) string {
	lines := strings.Split(text, "\n")
	var out, para []string
	flush := func() {
		if len(para) == 0 {
			return
		}
		fits := true
		for _, l := range para {
			fits = fits && markedWidth(l) <= width
		}
		if fits {
			out = append(out, para...)
		} else {
			out = append(out, strings.Split(wrapHang(strings.Join(para, " "), width, 0), "\n")...)
		}
		para = nil
	}
	for _, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
			flush()
			out = append(out, l)
		case strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t"):
			flush()
			out = append(out, strings.Split(wrapLine(l, width), "\n")...)
		default:
			para = append(para, l)
			if strings.HasSuffix(l, ":") {
				flush()
			}
		}
	}
	flush()
	return strings.Join(out, "\n")
}
