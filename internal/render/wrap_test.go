package render

import (
	"bytes"
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
