package render

import (
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

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
	if plainText(line) {
		if utf8.RuneCountInString(line) <= width {
			return line
		}
		return wrapPlain(line, width, hang)
	}
	if markedWidth(line) <= width {
		return line
	}
	return wrapWordwrap(line, width, hang)
}

// wrapWordwrap is wrapHang on any line wider than width.
func wrapWordwrap(line string, width, hang int) string {
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

// plainText reports whether s holds only printable ASCII and the one-column symbols
// agpol writes itself (plainSymbols): text that escaping leaves as it is, that has no
// style mark and no character that joins its neighbour, and whose width is its
// number of characters.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= ' ' && c <= '~' {
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !strings.ContainsRune(plainSymbols, r) {
			return false
		}
		i += n - 1
	}
	return true
}

// plainSymbols are the characters beyond ASCII that wrapPlain handles: each one
// column wide (TestPlainSymbols).
const plainSymbols = "→↔…×—·"

// noBreakPlain stands for a placeholder's space in wrapPlain's text (a byte plain text
// never holds).
const noBreakPlain = "\x00"

// wrapPlain is wrapHang on a plain line (plainText) wider than width: the lines
// ansi.Wordwrap makes of encodeForWrap's text, cut from the line itself (in that text a
// hyphen and a placeholder's space are one column that does not break, as any other
// character but a space), without encoding, decoding or measuring widths again.
// TestWrapPlainAsWordwrap compares the two.
func wrapPlain(line string, width, hang int) string {
	text := strings.TrimLeft(line, " ")
	lead := line[:len(line)-len(text)]
	marked := false
	if strings.IndexByte(text, '<') >= 0 {
		if words := placeholders(strings.Split(text, " ")); len(words) < strings.Count(text, " ")+1 {
			for i, w := range words {
				words[i] = strings.ReplaceAll(w, " ", noBreakPlain)
			}
			text, marked = strings.Join(words, " "), true
		}
	}
	lines := plainWordwrap(text, width-len(lead), nil)
	first := lines[0]
	rest := strings.TrimLeft(text[len(first):], " ")
	var b strings.Builder
	b.Grow(len(line) + len(line)/max(width, 1)*(len(lead)+hang+1))
	b.WriteString(lead)
	b.WriteString(first)
	if rest != "" {
		indent := lead + strings.Repeat(" ", hang)
		for _, l := range plainWordwrap(rest, width-len(indent), lines[:0]) {
			b.WriteByte('\n')
			b.WriteString(indent)
			b.WriteString(l)
		}
	}
	if marked {
		return strings.ReplaceAll(b.String(), noBreakPlain, " ")
	}
	return b.String()
}

// plainWordwrap appends to lines the lines ansi.Wordwrap(s, limit, "") makes of s, a
// plain text in which only a space breaks: the same steps on the same counts (a word
// moves to the next line when the line, its pending spaces and the word pass limit
// columns, unless the word alone reaches limit; the spaces before a break are
// dropped). Each line is a piece of s.
func plainWordwrap(s string, limit int, lines []string) []string {
	if limit < 1 {
		return append(lines, s)
	}
	var (
		width          int     // columns written on the line
		wordAt, wordTo int     // the pending word, s[wordAt:wordTo]
		wordWidth      int     // its columns
		spAt, spTo     int     // the pending spaces (one column each)
		start, end     = -1, 0 // what the line holds, s[start:end]; start -1 when nothing
	)
	write := func(from, to int) {
		if start < 0 {
			start = from
		}
		end = to
	}
	addWord := func() {
		if wordTo == wordAt {
			return
		}
		if spTo > spAt {
			width += spTo - spAt
			write(spAt, spTo)
		}
		spAt, spTo = 0, 0
		width += wordWidth
		write(wordAt, wordTo)
		wordAt, wordWidth = wordTo, 0
	}
	endLine := func() {
		if start < 0 {
			lines = append(lines, "")
		} else {
			lines = append(lines, s[start:end])
		}
		start, width = -1, 0
	}
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			addWord()
			if spTo == spAt {
				spAt = i
			}
			spTo = i + 1
			i++
			continue
		}
		n := 1
		if s[i] >= utf8.RuneSelf {
			_, n = utf8.DecodeRuneInString(s[i:])
		}
		if wordTo == wordAt {
			wordAt = i
		}
		i += n
		wordTo = i
		wordWidth++
		if width+(spTo-spAt)+wordWidth > limit && wordWidth < limit {
			endLine()
			spAt, spTo = 0, 0
		}
	}
	addWord()
	endLine()
	return lines
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
