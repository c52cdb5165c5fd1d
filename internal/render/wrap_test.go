package render

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// writeWrapped keeps every line within noteWidth, loses no word, and indents
// continuation lines.
func TestWriteWrapped(t *testing.T) {
	text := strings.Repeat("listener secure accepts the caller over mTLS ", 8)
	var b bytes.Buffer
	writeWrapped(&b, "  ", text, func(s string) string { return s })
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("not wrapped:\n%s", b.String())
	}
	var words []string
	for i, l := range lines {
		if len(l) > TextWidth {
			t.Errorf("line %d has %d columns: %q", i, len(l), l)
		}
		if want := map[bool]string{true: "  ", false: "    "}[i == 0]; !strings.HasPrefix(l, want) || l[len(want)] == ' ' {
			t.Errorf("line %d indent: %q", i, l)
		}
		words = append(words, strings.Fields(l)...)
	}
	if strings.Join(words, " ") != strings.Join(strings.Fields(text), " ") {
		t.Errorf("words lost or reordered:\n%s", b.String())
	}
}

// terminalWidth: COLUMNS first, then the terminal's size, then 100; never under MinWidth.
func TestTerminalWidth(t *testing.T) {
	size := func(n int, err error) func() (int, error) { return func() (int, error) { return n, err } }
	for _, tc := range []struct {
		columns string
		size    func() (int, error)
		want    int
	}{
		{"80", size(120, nil), 80},
		{" 132 ", size(80, nil), 132},
		{"", size(120, nil), 120},
		{"wide", size(90, nil), 90},
		{"0", size(0, bytes.ErrTooLarge), DefaultWidth},
		{"", size(20, nil), MinWidth},
	} {
		if got := terminalWidth(tc.columns, tc.size); got != tc.want {
			t.Errorf("terminalWidth(%q) = %d, want %d", tc.columns, got, tc.want)
		}
	}
	if got := Width(&bytes.Buffer{}); got != DefaultWidth {
		t.Errorf("Width(pipe) = %d, want %d", got, DefaultWidth)
	}
}

// wrapHang keeps names whole (a hyphen is no place to break), keeps placeholders whole,
// counts no width for style marks and indents continuation lines.
func TestWrapHangKeepsNamesWhole(t *testing.T) {
	st := Styler{Color: true}
	line := "  rule " + st.Bold("allow-refund-for-billing") + " of tools/calc-legacy-policy matches <other tool> for sa:agents/support-bot"
	got := wrapHang(line, 40, 2)
	for _, l := range strings.Split(got, "\n") {
		if w := markedWidth(l); w > 40 {
			t.Errorf("line %q is %d wide", l, w)
		}
	}
	for _, name := range []string{"tools/calc-legacy-policy", "<other tool>", "sa:agents/support-bot", st.Bold("allow-refund-for-billing")} {
		if !strings.Contains(got, name) {
			t.Errorf("%q broken:\n%s", name, got)
		}
	}
	if !strings.HasPrefix(strings.Split(got, "\n")[1], "    ") {
		t.Errorf("continuation not indented:\n%s", got)
	}
}

// wrapPlain, wrapHang's path for plain text, wraps as the general path does
// (encodeForWrap, ansi.Wordwrap, decodeFromWrap): on random lines of words, hyphens,
// placeholders, agpol's symbols, runs of spaces and words longer than the width, at
// every width.
func TestWrapPlainAsWordwrap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "sa:agents/billing", "x-y", "-", "--z", "<other tool>", "<a b c d e>", "<no", "end>", "<", ">", "infra/edge:https", "allow,", "→", "a→b", "…", "×2", "—", "·", "↔"}
	long := strings.Repeat("w", 45)
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		b.WriteString(strings.Repeat(" ", r.IntN(7)))
		for k := r.IntN(14); k >= 0; k-- {
			switch r.IntN(10) {
			case 0:
				b.WriteString(long[:1+r.IntN(len(long)-1)])
			case 1:
				b.WriteString(strings.Repeat(" ", 1+r.IntN(3)))
			default:
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			if r.IntN(4) > 0 {
				b.WriteByte(' ')
			}
		}
		line, width, hang := b.String(), 1+r.IntN(50), r.IntN(5)
		if len(line) <= width {
			continue
		}
		if got, want := wrapPlain(line, width, hang), wrapWordwrap(line, width, hang); got != want {
			t.Fatalf("wrapPlain(%q, %d, %d) =\n%q\nwant\n%q", line, width, hang, got, want)
		}
	}
	// Lines that fit, or hold more than printable ASCII, take the general path.
	for _, line := range []string{"  fits   ", "  wide │ " + long, "  é " + long, "  tab\t" + long, "\x1b[31m" + long} {
		if got, want := wrapHang(line, 20, 2), wrapWordwrap(line, 20, 2); markedWidth(line) > 20 && got != want {
			t.Errorf("wrapHang(%q) = %q, want %q", line, got, want)
		}
	}
	if got := wrapHang("  fits   ", 20, 2); got != "  fits   " {
		t.Errorf("a line that fits changed: %q", got)
	}
}

// The symbols wrapPlain handles are one column wide and shown as they are.
func TestPlainSymbols(t *testing.T) {
	for _, r := range plainSymbols {
		if w := markedWidth(string(r)); w != 1 {
			t.Errorf("%q is %d columns wide", r, w)
		}
		if e := EscapeTerminal(string(r)); e != string(r) {
			t.Errorf("%q is escaped as %q", r, e)
		}
	}
	if plainText("a\tb") || plainText("a\x1bb") || plainText("é") || !plainText("a → b…") {
		t.Error("plainText")
	}
}
